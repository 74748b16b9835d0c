import Box from '@mui/material/Box';
import Typography from '@mui/material/Typography';
import { usePlatformStatus, type PlatformStatus } from '@/lib/api/get-platform-status';
import { operatingHours, shortHours } from '@/lib/trading-format';

/** Whether the venue trades now: open, before the open (orders wait for it) or closed. */
function phase(status: PlatformStatus): { label: string; color: string } {
  if (status.open) return { label: 'Open', color: 'success.main' };
  if (status.parent_orders_open) return { label: 'Opens soon', color: 'warning.main' };
  return { label: 'Closed', color: 'text.disabled' };
}

/**
 * The venue's hours, always in view in the top bar (admin spec section 1: 'the UI shows it'),
 * from the server's calendar; the demo's always-open venue says so instead of claiming hours.
 */
export function TradingHours() {
  const { data: status } = usePlatformStatus();
  if (!status) return null;
  const { label, color } = status.always_open ? { label: 'Demo', color: 'success.main' } : phase(status);
  const hours = status.always_open ? 'open around the clock' : shortHours(status);
  return (
    <Box
      data-testid="trading-hours"
      title={status.always_open ? 'Demo: the venue is open around the clock, every day.' : operatingHours(status)}
      sx={{ display: 'flex', alignItems: 'center', gap: 1, px: 1.5, py: 0.5, border: 1, borderColor: 'divider', borderRadius: 4, minWidth: 0 }}
    >
      <Box component="span" aria-hidden sx={{ width: 8, height: 8, flex: '0 0 auto', borderRadius: '50%', bgcolor: color }} />
      <Typography variant="body2" component="span" color="text.secondary" noWrap>
        <Box component="span" sx={{ fontWeight: 600, color: 'text.primary' }}>
          {label}
          {status.always_open ? ':' : ' ·'}
        </Box>{' '}
        {hours}
      </Typography>
    </Box>
  );
}
