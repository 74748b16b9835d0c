import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogContentText from '@mui/material/DialogContentText';
import DialogTitle from '@mui/material/DialogTitle';
import { serverErrorText } from '@/components/form/form-drawer';
import { useToast } from '@/components/ui/toast';
import { formatDateTime } from '@/lib/format-date';
import type { Company } from '../api/get-companies';
import { useKillSwitch, type KillSwitchAction } from '../api/kill-switch';

type Props = { company: Company; action: KillSwitchAction; onClose: () => void };

/** What stopping a company does (DESIGN section 4, the kill switch), said before it is done. */
export function stopConsequences(name: string): string[] {
  return [
    `Every working order of ${name} is cancelled.`,
    `Its pending match requests, open RFQs and quotes are ended, and the counterparties are told.`,
    `New orders from ${name} are refused until an admin re-enables trading.`,
  ];
}

/** Asks before the kill switch is pressed or released, saying what happens. */
export function KillSwitchDialog({ company, action, onClose }: Props) {
  const killSwitch = useKillSwitch();
  const { showToast } = useToast();
  const stop = action === 'stop';
  const confirm = () =>
    killSwitch.mutate(
      { id: company.company_id, action },
      {
        onSuccess: (c) => {
          showToast(
            stop
              ? { message: `Trading stopped for ${c.name}.`, type: 'warning' }
              : { message: `Trading re-enabled for ${c.name}.` },
          );
          onClose();
        },
      },
    );
  const label = stop ? 'Stop trading' : 'Re-enable trading';
  return (
    <Dialog open onClose={onClose} aria-labelledby="kill-switch-title" aria-describedby="kill-switch-text" maxWidth="sm" fullWidth>
      <DialogTitle id="kill-switch-title">
        {stop ? `Stop trading for ${company.name}?` : `Re-enable trading for ${company.name}?`}
      </DialogTitle>
      <DialogContent>
        <Box id="kill-switch-text">
          {stop ? (
            <>
              <DialogContentText>The kill switch acts at once:</DialogContentText>
              <Box component="ul" sx={{ mt: 1, mb: 0, pl: 3, color: 'text.secondary' }}>
                {stopConsequences(company.name).map((t) => (
                  <li key={t}>{t}</li>
                ))}
              </Box>
            </>
          ) : (
            <DialogContentText>
              {`Trading has been stopped since ${formatDateTime(company.trading_stopped_at)}. ${company.name} can place orders again; what the stop cancelled stays cancelled.`}
            </DialogContentText>
          )}
        </Box>
        {killSwitch.error ? (
          <Alert severity="error" sx={{ mt: 2 }}>
            {serverErrorText(killSwitch.error)}
          </Alert>
        ) : null}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose} autoFocus>
          Back
        </Button>
        <Button variant="contained" color={stop ? 'error' : 'primary'} onClick={confirm} disabled={killSwitch.isPending}>
          {label}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
