import List from '@mui/material/List';
import ListItem from '@mui/material/ListItem';
import ListItemIcon from '@mui/material/ListItemIcon';
import ListItemText from '@mui/material/ListItemText';
import CheckCircle from '@mui/icons-material/CheckCircle';
import RadioButtonUnchecked from '@mui/icons-material/RadioButtonUnchecked';
import { passwordRules } from '../lib/password-rules';

/** Live checklist: one line per password rule, marked met or not. */
export function PasswordRuleChecklist({ value }: { value: string }) {
  return (
    <List dense disablePadding aria-label="Password rules">
      {passwordRules.map((rule) => {
        const met = value.length > 0 && rule.test(value);
        return (
          <ListItem key={rule.id} disableGutters sx={{ py: 0.25 }} data-rule={rule.id} data-met={met}>
            <ListItemIcon sx={{ minWidth: 28 }}>
              {met ? (
                <CheckCircle fontSize="small" color="success" aria-label="met" />
              ) : (
                <RadioButtonUnchecked fontSize="small" color="disabled" aria-label="not met" />
              )}
            </ListItemIcon>
            <ListItemText
              primary={rule.text}
              slotProps={{ primary: { variant: 'body2', color: met ? 'success.dark' : 'text.secondary' } }}
            />
          </ListItem>
        );
      })}
    </List>
  );
}
