import { useState } from 'react';
import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { formatDateTime } from '@/lib/format-date';
import { useCompany } from '../api/get-company';
import { KillSwitchDialog } from './kill-switch-dialog';

/**
 * A company admin's kill switch for their own company (DESIGN section 4): they may stop
 * it; only a venue admin re-enables it.
 */
export function OwnKillSwitch({ companyId }: { companyId: string }) {
  const company = useCompany(companyId);
  const [asking, setAsking] = useState(false);
  const c = company.data;
  if (!c) return null;
  return (
    <Paper variant="outlined" sx={{ p: 2 }} component="section" aria-label="Kill switch">
      {c.trading_stopped_at ? (
        <Alert severity="error">
          Trading is stopped for {c.name} since {formatDateTime(c.trading_stopped_at)}. A venue admin re-enables it.
        </Alert>
      ) : (
        <Stack direction="row" spacing={2} sx={{ alignItems: 'center', justifyContent: 'space-between' }}>
          <Typography>Kill switch: stop every order, match request and RFQ of {c.name} at once.</Typography>
          <Button color="error" variant="outlined" onClick={() => setAsking(true)}>
            Stop trading
          </Button>
        </Stack>
      )}
      {asking && <KillSwitchDialog company={c} action="stop" onClose={() => setAsking(false)} />}
    </Paper>
  );
}
