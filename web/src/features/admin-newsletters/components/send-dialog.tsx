import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogContentText from '@mui/material/DialogContentText';
import DialogTitle from '@mui/material/DialogTitle';
import { serverErrorText } from '@/components/form/form-drawer';
import { useToast } from '@/components/ui/toast';
import type { Newsletter } from '../api/get-newsletters';
import { useSendNewsletter } from '../api/send-newsletter';
import { count } from '../lib/plural';

/** The server's answer to sending a newsletter without recipients (409), said before asking. */
export const NO_RECIPIENTS = 'This newsletter has no recipients yet.';

/** Asks before the digest goes out, saying to how many; then tells how many e-mails were queued. */
export function SendDialog({ newsletter, onClose }: { newsletter: Newsletter; onClose: () => void }) {
  const send = useSendNewsletter();
  const { showToast } = useToast();
  const n = newsletter.recipients.length;
  const confirm = () =>
    send.mutate(newsletter.newsletter_id, {
      onSuccess: ({ queued }) => {
        showToast({ message: `${newsletter.name} sent: ${count(queued, 'e-mail')} queued.` });
        onClose();
      },
    });
  return (
    <Dialog open onClose={onClose} aria-labelledby="newsletter-send-title" aria-describedby="newsletter-send-text" maxWidth="xs" fullWidth>
      <DialogTitle id="newsletter-send-title">Send {newsletter.name}?</DialogTitle>
      <DialogContent>
        <DialogContentText id="newsletter-send-text">
          {n === 0
            ? `${NO_RECIPIENTS} Add recipients before sending it.`
            : `The digest of resting interest goes out now to ${count(n, 'recipient')}, one e-mail each. It cannot be recalled.`}
        </DialogContentText>
        {send.error ? (
          <Alert severity="error" sx={{ mt: 2 }}>
            {serverErrorText(send.error)}
          </Alert>
        ) : null}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose} autoFocus={n === 0}>
          Back
        </Button>
        <Button variant="contained" onClick={confirm} disabled={n === 0 || send.isPending}>
          {n === 0 ? 'Send' : `Send to ${count(n, 'recipient')}`}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
