import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogTitle from '@mui/material/DialogTitle';
import Typography from '@mui/material/Typography';
import dayjs from 'dayjs';
import type { ActionLog } from '../api/get-action-logs';

/** The details payload as indented JSON (the spec does not show its shape). */
export function prettyDetails(details: unknown): string {
  return JSON.stringify(details, null, 2) ?? 'null';
}

/** One entry of the action log: who, what, when, and its details payload. */
export function ActionLogDetailsDialog({ log, onClose }: { log: ActionLog; onClose: () => void }) {
  const facts: [string, string][] = [
    ['Time', dayjs(log.created_at).format('DD/MM/YYYY HH:mm:ss')],
    ['User', log.user ? `${log.user.email} (${log.user.company_name})` : 'System (no user)'],
    ['Entity', log.entity_id ? `${log.entity} ${log.entity_id}` : log.entity],
    ['Operation', log.operation],
  ];
  return (
    <Dialog open onClose={onClose} aria-labelledby="action-log-title" maxWidth="md" fullWidth>
      <DialogTitle id="action-log-title">
        {log.entity} · {log.operation}
      </DialogTitle>
      <DialogContent dividers>
        <Box component="dl" sx={{ display: 'grid', gridTemplateColumns: 'max-content 1fr', columnGap: 3, rowGap: 0.75, m: 0, mb: 2 }}>
          {facts.map(([term, value]) => (
            <Box key={term} sx={{ display: 'contents' }}>
              <Typography component="dt" variant="body2" color="text.secondary">
                {term}
              </Typography>
              <Typography component="dd" variant="body2" sx={{ m: 0, overflowWrap: 'anywhere' }}>
                {value}
              </Typography>
            </Box>
          ))}
        </Box>
        <Typography variant="subtitle2" component="h3" id="action-log-details" sx={{ mb: 1 }}>
          Details
        </Typography>
        <Box
          component="pre"
          tabIndex={0}
          aria-labelledby="action-log-details"
          data-testid="action-log-details"
          sx={{
            m: 0,
            p: 2,
            maxHeight: '55vh',
            overflow: 'auto',
            bgcolor: 'grey.50',
            border: 1,
            borderColor: 'divider',
            borderRadius: 1,
            fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
            fontSize: 13,
            lineHeight: 1.5,
            whiteSpace: 'pre-wrap',
            overflowWrap: 'anywhere',
          }}
        >
          {prettyDetails(log.details)}
        </Box>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose} autoFocus>
          Close
        </Button>
      </DialogActions>
    </Dialog>
  );
}
