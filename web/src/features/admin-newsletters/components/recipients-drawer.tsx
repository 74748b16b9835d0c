import { useState } from 'react';
import Alert from '@mui/material/Alert';
import Autocomplete from '@mui/material/Autocomplete';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Chip from '@mui/material/Chip';
import IconButton from '@mui/material/IconButton';
import List from '@mui/material/List';
import ListItem from '@mui/material/ListItem';
import ListItemText from '@mui/material/ListItemText';
import Skeleton from '@mui/material/Skeleton';
import Stack from '@mui/material/Stack';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import PersonRemoveOutlined from '@mui/icons-material/PersonRemoveOutlined';
import { serverErrorText } from '@/components/form/form-drawer';
import { DrawerHeader, SideDrawer } from '@/components/ui/side-drawer';
import { useToast } from '@/components/ui/toast';
import type { User } from '@/lib/api/get-me';
import { useAddRecipients } from '../api/add-recipients';
import type { Newsletter } from '../api/get-newsletters';
import { useRecipientChoices } from '../api/get-users';
import { useRemoveRecipient } from '../api/remove-recipient';
import { count } from '../lib/plural';

const fullName = (u: { first_name: string; last_name: string }) => `${u.first_name} ${u.last_name}`;

/**
 * Admin spec section 2: a newsletter's recipients. Users are added from the users list
 * (GET /admin/users, page 0 of 200) by recipient_ids, and removed one at a time.
 */
export function RecipientsDrawer({ newsletter, onClose }: { newsletter: Newsletter; onClose: () => void }) {
  const title = `Recipients of ${newsletter.name}`;
  return (
    <SideDrawer open onClose={onClose}>
      <Box role="region" aria-label={title} sx={{ display: 'flex', flexDirection: 'column', height: '100%' }}>
        <DrawerHeader title={title} onClose={onClose} />
        <Stack spacing={3} sx={{ p: 3, flexGrow: 1, overflowY: 'auto' }}>
          <AddRecipients newsletter={newsletter} />
          <RecipientList newsletter={newsletter} />
        </Stack>
        <Stack direction="row" sx={{ p: 3, borderTop: 1, borderColor: 'divider' }}>
          <Button onClick={onClose} fullWidth>
            Done
          </Button>
        </Stack>
      </Box>
    </SideDrawer>
  );
}

function AddRecipients({ newsletter }: { newsletter: Newsletter }) {
  const users = useRecipientChoices();
  const add = useAddRecipients();
  const { showToast } = useToast();
  const [chosen, setChosen] = useState<User[]>([]);
  const already = new Set(newsletter.recipients.map((r) => r.user_id));
  // By company, then by name, so the list can be grouped by company.
  const options = (users.data?.items ?? [])
    .filter((u) => !already.has(u.user_id))
    .sort((a, b) => a.company_name.localeCompare(b.company_name) || fullName(a).localeCompare(fullName(b)));

  const submit = () =>
    add.mutate(
      { newsletterId: newsletter.newsletter_id, recipientIds: chosen.map((u) => u.user_id) },
      {
        onSuccess: () => {
          showToast({ message: `${count(chosen.length, 'recipient')} added to ${newsletter.name}.` });
          setChosen([]);
        },
      },
    );

  if (users.isError) {
    return (
      <Alert severity="error" action={<Button color="inherit" size="small" onClick={() => void users.refetch()}>Retry</Button>}>
        The users to choose from could not be loaded. {serverErrorText(users.error)}
      </Alert>
    );
  }

  return (
    <Stack component="section" aria-label="Add recipients" spacing={1.5}>
      <Autocomplete
        multiple
        options={options}
        value={chosen}
        loading={users.isPending}
        disabled={add.isPending}
        onChange={(_, v) => setChosen(v)}
        groupBy={(u) => u.company_name}
        isOptionEqualToValue={(a, b) => a.user_id === b.user_id}
        getOptionLabel={(u) => `${fullName(u)} ${u.email}`}
        filterSelectedOptions
        noOptionsText={users.isPending ? 'Loading…' : 'Every user is already a recipient'}
        renderOption={(props, u) => {
          const { key, ...rest } = props;
          return (
            <li key={key} {...rest}>
              <ListItemText primary={fullName(u)} secondary={u.active ? u.email : `${u.email} · not active`} />
            </li>
          );
        }}
        renderValue={(value, getItemProps) =>
          value.map((u, index) => {
            const { key, ...props } = getItemProps({ index });
            return <Chip key={key} size="small" label={fullName(u)} title={u.email} {...props} />;
          })
        }
        renderInput={(params) => <TextField {...params} label="Users to add" helperText="Type a name or an e-mail to find a user" />}
      />
      {add.error ? <Alert severity="error">{serverErrorText(add.error)}</Alert> : null}
      <Box>
        <Button variant="contained" onClick={submit} disabled={chosen.length === 0 || add.isPending}>
          {chosen.length > 1 ? `Add ${chosen.length} recipients` : 'Add recipient'}
        </Button>
      </Box>
    </Stack>
  );
}

function RecipientList({ newsletter }: { newsletter: Newsletter }) {
  const remove = useRemoveRecipient();
  const { showToast } = useToast();
  const removing = remove.isPending ? remove.variables.recipientId : null;
  const recipients = newsletter.recipients;
  const headingId = `recipient-list-${newsletter.newsletter_id}`;
  return (
    <Box component="section" aria-labelledby={headingId}>
      <Typography id={headingId} variant="subtitle2" component="h3" sx={{ mb: 1 }}>
        {count(recipients.length, 'recipient')}
      </Typography>
      {recipients.length === 0 ? (
        <Typography variant="body2" color="text.secondary">
          No recipients yet. Choose users above to add them.
        </Typography>
      ) : (
        <List dense disablePadding aria-labelledby={headingId} sx={{ border: 1, borderColor: 'divider', borderRadius: 1 }}>
          {recipients.map((r, i) => (
            <ListItem
              key={r.user_id}
              divider={i < recipients.length - 1}
              secondaryAction={
                <IconButton
                  edge="end"
                  aria-label={`Remove ${r.email}`}
                  disabled={removing !== null}
                  onClick={() =>
                    remove.mutate(
                      { newsletterId: newsletter.newsletter_id, recipientId: r.user_id },
                      { onSuccess: () => showToast({ message: `${r.email} removed from ${newsletter.name}.` }) },
                    )
                  }
                >
                  {removing === r.user_id ? <Skeleton variant="circular" width={20} height={20} /> : <PersonRemoveOutlined fontSize="small" />}
                </IconButton>
              }
            >
              <ListItemText primary={fullName(r)} secondary={`${r.email} · ${r.company_name}`} />
            </ListItem>
          ))}
        </List>
      )}
    </Box>
  );
}
