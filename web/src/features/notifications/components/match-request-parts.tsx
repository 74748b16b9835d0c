import Box from '@mui/material/Box';
import Chip from '@mui/material/Chip';
import Skeleton from '@mui/material/Skeleton';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import type { MatchRequest } from '@/lib/api/dto';
import { useCurrentUser } from '@/lib/api/get-me';
import { useInstrument } from '@/lib/api/get-instrument';
import { formatPrice, truncateName } from '@/lib/trading-format';
import { formatCountdown } from '@/lib/use-seconds-left';

const number = new Intl.NumberFormat('en-GB');

/** What a match request trades, from the caller's side: instrument, side, quantity, price. */
export function MatchSummary({ request }: { request: MatchRequest | undefined }) {
  return request ? <Terms request={request} /> : <Skeleton height={48} />;
}

function Terms({ request }: { request: MatchRequest }) {
  const instrument = useInstrument(request.instrument_id);
  if (!instrument.data) return <Skeleton height={48} />;
  const i = instrument.data;
  const side = request.direction === 'BUY' ? 'buy' : 'sell';
  return (
    <Box>
      <Typography variant="subtitle1" sx={{ fontWeight: 700 }} title={i.name}>
        {truncateName(i.name)}
      </Typography>
      <Stack direction="row" spacing={1} sx={{ alignItems: 'center', mt: 0.5, flexWrap: 'wrap' }} useFlexGap>
        <Chip size="small" color={request.direction === 'BUY' ? 'success' : 'error'} label={request.direction === 'BUY' ? 'Buy' : 'Sell'} />
        <Typography variant="body2" data-testid="match-terms">
          You {side} {number.format(request.quantity)} at {formatPrice(request.price, i.tick_size)}
        </Typography>
        {request.iceberg && <Chip size="small" variant="outlined" label="Iceberg" />}
      </Stack>
    </Box>
  );
}

/** Spec section 4: the countdown of a pending match request. */
export function TimeToAction({ seconds }: { seconds: number | null }) {
  return (
    <Box role="timer" aria-label="Time to action" sx={{ display: 'flex', alignItems: 'baseline', gap: 1 }}>
      <Typography variant="body2" color="text.secondary">
        Time to action
      </Typography>
      <Typography variant="h3" component="span" sx={{ fontVariantNumeric: 'tabular-nums', color: seconds !== null && seconds <= 30 ? 'error.main' : 'text.primary' }}>
        {seconds === null ? '–' : formatCountdown(seconds)}
      </Typography>
    </Box>
  );
}

/** Spec section 2: the confirmation before a rejection, with the caller's Reliability Score. */
export function RejectDialog({ open, pending, onConfirm, onClose }: { open: boolean; pending: boolean; onConfirm: () => void; onClose: () => void }) {
  const user = useCurrentUser();
  return (
    <ConfirmDialog
      open={open}
      title="Are you sure you want to reject this offer?"
      text={`Rejecting cancels your working order and affects your Reliability Score (now ${user.reliability_score}%).`}
      confirmLabel="Yes reject"
      pending={pending}
      onConfirm={onConfirm}
      onClose={onClose}
    />
  );
}
