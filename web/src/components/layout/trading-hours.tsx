import Box from '@mui/material/Box';
import Typography from '@mui/material/Typography';
import { usePlatformStatus, type ExchangeStatus, type PlatformStatus } from '@/lib/api/get-platform-status';
import { closedText, operatingHours, phaseLabel, shortHours } from '@/lib/trading-format';

const PHASE_COLORS = { Open: 'success.main', 'Opens soon': 'warning.main', Closed: 'text.disabled' } as const;

const chipSx = { display: 'flex', alignItems: 'center', gap: 1, px: 1.5, py: 0.5, border: 1, borderColor: 'divider', borderRadius: 4, minWidth: 0 } as const;

function Dot({ color }: { color: string }) {
  return <Box component="span" aria-hidden sx={{ width: 8, height: 8, flex: '0 0 auto', borderRadius: '50%', bgcolor: color }} />;
}

/** An exchange's chip: its MIC and whether it trades now; its hours (and why it is closed) on hover. */
function ExchangeChip({ exchange: e }: { exchange: ExchangeStatus }) {
  const label = phaseLabel(e);
  const reason = e.open ? '' : closedText(e);
  return (
    <Box data-testid={`trading-hours-${e.mic}`} title={[`${e.name} (${e.mic}):`, operatingHours(e), reason].filter(Boolean).join(' ')} sx={chipSx}>
      <Dot color={PHASE_COLORS[label]} />
      <Typography variant="body2" component="span" color="text.secondary" noWrap>
        <Box component="span" sx={{ fontWeight: 600, color: 'text.primary' }}>
          {e.mic} ·
        </Box>{' '}
        {label}
      </Typography>
    </Box>
  );
}

/** The venue's own calendar: its phase and hours, or the demo's always-open note. */
function VenueChip({ status, testId }: { status: PlatformStatus; testId: string }) {
  const phase = phaseLabel(status);
  const { label, color } = status.always_open ? { label: 'Demo', color: 'success.main' } : { label: phase, color: PHASE_COLORS[phase] };
  const hours = status.always_open ? 'open around the clock' : shortHours(status);
  return (
    <Box
      data-testid={testId}
      title={status.always_open ? 'Demo: the venue is open around the clock, every day.' : operatingHours(status)}
      sx={chipSx}
    >
      <Dot color={color} />
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

/**
 * The venue's hours, always in view in the top bar (admin spec section 1: 'the UI shows it'),
 * from the server's calendar; the demo's always-open venue says so instead of claiming hours.
 * With exchange calendars (ADR 0052), one chip per exchange beside the venue's own, which
 * the instruments of no such exchange follow.
 */
export function TradingHours() {
  const { data: status } = usePlatformStatus();
  if (!status) return null;
  if (status.always_open || status.exchanges.length === 0) return <VenueChip status={status} testId="trading-hours" />;
  return (
    <Box data-testid="trading-hours" role="group" aria-label="Trading hours" sx={{ display: 'flex', alignItems: 'center', gap: 1, minWidth: 0, overflow: 'hidden' }}>
      <VenueChip status={status} testId="trading-hours-venue" />
      {status.exchanges.map((e) => (
        <ExchangeChip key={e.mic} exchange={e} />
      ))}
    </Box>
  );
}
