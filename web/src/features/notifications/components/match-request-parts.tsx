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
import { formatCountdown, useSecondsLeft } from '@/lib/use-seconds-left';

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

/**
 * When a pending request is answered unless the responder acts: their preference's
 * moment and answer when they chose one (issue 28.5, `byPreference`), else the request's
 * time-out.
 */
function answerDeadline(
  m: MatchRequest | undefined,
  fallback?: string,
): { at: string | undefined; label: string; byPreference: boolean } {
  if (m?.role === 'RESPONDER' && m.auto_answer_at) {
    return { at: m.auto_answer_at, label: m.auto_accept ? 'Your preference accepts in' : 'Your preference rejects in', byPreference: true };
  }
  return { at: m?.expired_at ?? fallback, label: 'Time to action', byPreference: false };
}

/**
 * How long past the preference's moment the server's answer is waited for. A request still
 * pending then is one the preference could not answer (the band's prices were stale, say):
 * the responder answers it by hand until its time-out.
 */
export const PREFERENCE_GRACE_MS = 5_000;

/** {@link answerDeadline}, that falls back to the request's time-out once the preference's grace has passed unanswered. */
export function useAnswerDeadline(m: MatchRequest | undefined, fallback?: string): ReturnType<typeof answerDeadline> {
  const preference = answerDeadline(m, fallback);
  const graceEnd =
    preference.byPreference && preference.at ? new Date(Date.parse(preference.at) + PREFERENCE_GRACE_MS).toISOString() : undefined;
  const unanswered = useSecondsLeft(graceEnd) === 0;
  return unanswered ? answerDeadline(undefined, m?.expired_at ?? fallback) : preference;
}

/** What became of a request the responder's preference answered, told to each side; null when answered by hand. */
export function automaticAnswer(m: MatchRequest | undefined): string | null {
  if (!m?.answered_automatically) return null;
  const mine = m.role === 'RESPONDER';
  if (m.state === 'REJECTED') return mine ? 'Rejected automatically by your preference.' : 'Rejected automatically by the counterparty’s preference.';
  return mine ? 'Accepted automatically by your preference.' : 'Accepted automatically by the counterparty’s preference.';
}

/** Spec section 4: the countdown of a pending match request (to the preference's answer, when there is one). */
export function TimeToAction({ seconds, label = 'Time to action' }: { seconds: number | null; label?: string }) {
  return (
    <Box role="timer" aria-label="Time to action" sx={{ display: 'flex', alignItems: 'baseline', gap: 1 }}>
      <Typography variant="body2" color="text.secondary">
        {label}
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
