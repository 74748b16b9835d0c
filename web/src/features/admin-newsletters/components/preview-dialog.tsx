import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogTitle from '@mui/material/DialogTitle';
import Skeleton from '@mui/material/Skeleton';
import Typography from '@mui/material/Typography';
import { ErrorCard } from '@/components/errors/error-card';
import type { Newsletter } from '../api/get-newsletters';
import { usePreview } from '../api/get-preview';
import { count } from '../lib/plural';

type Props = { newsletter: Newsletter; onClose: () => void; onSend: () => void };

/**
 * The digest e-mail as it would go out now: its subject, and its HTML in a frame
 * sandboxed with no rights at all (no script, no navigation, no same origin).
 */
export function PreviewDialog({ newsletter, onClose, onSend }: Props) {
  const preview = usePreview(newsletter.newsletter_id);
  const data = preview.data;
  return (
    <Dialog open onClose={onClose} aria-labelledby="newsletter-preview-title" maxWidth="md" fullWidth>
      <DialogTitle id="newsletter-preview-title">Preview of {newsletter.name}</DialogTitle>
      <DialogContent dividers>
        {preview.isPending ? (
          <Box aria-busy="true" aria-label="Loading the preview">
            <Skeleton height={28} width="60%" />
            <Skeleton variant="rectangular" height={360} sx={{ mt: 2 }} />
          </Box>
        ) : preview.isError ? (
          <ErrorCard error={preview.error} onRetry={() => void preview.refetch()} />
        ) : (
          data && (
            <>
              <Box component="dl" sx={{ display: 'grid', gridTemplateColumns: 'max-content 1fr', columnGap: 3, rowGap: 0.75, m: 0, mb: 2 }}>
                <Typography component="dt" variant="body2" color="text.secondary">
                  Subject
                </Typography>
                <Typography component="dd" variant="body2" sx={{ m: 0, fontWeight: 600 }} data-testid="preview-subject">
                  {data.subject}
                </Typography>
                <Typography component="dt" variant="body2" color="text.secondary">
                  Goes to
                </Typography>
                <Typography component="dd" variant="body2" sx={{ m: 0 }}>
                  {count(data.recipients, 'recipient')}
                </Typography>
              </Box>
              {data.recipients === 0 && (
                <Alert severity="info" sx={{ mb: 2 }}>
                  This newsletter has no recipients yet: the preview is addressed to you.
                </Alert>
              )}
              <Box
                component="iframe"
                title={`Digest e-mail: ${data.subject}`}
                sandbox=""
                srcDoc={data.html}
                sx={{ display: 'block', width: '100%', height: '60vh', border: 1, borderColor: 'divider', borderRadius: 1, bgcolor: 'common.white' }}
              />
            </>
          )
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose} autoFocus>
          Close
        </Button>
        <Button variant="contained" onClick={onSend} disabled={newsletter.recipients.length === 0}>
          Send…
        </Button>
      </DialogActions>
    </Dialog>
  );
}
