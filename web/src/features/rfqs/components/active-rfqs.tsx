import { useEffect, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import Button from '@mui/material/Button';
import Chip from '@mui/material/Chip';
import IconButton from '@mui/material/IconButton';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import Typography from '@mui/material/Typography';
import CloseFullscreen from '@mui/icons-material/CloseFullscreen';
import OpenInFull from '@mui/icons-material/OpenInFull';
import { useToast } from '@/components/ui/toast';
import { RFQ_PANEL_HEIGHT, RFQ_PANEL_MAX_WIDTH } from '@/config/constants';
import { useLiveInstrument } from '@/lib/api/get-instrument';
import { useTopic } from '@/lib/realtime';
import { formatPrice, inBand, truncateName } from '@/lib/trading-format';
import { formatCountdown, useSecondsLeft } from '@/lib/use-seconds-left';
import { mutateThen } from '@/lib/api/mutate-then';
import { useTradingStopped } from '@/lib/api/get-platform-status';
import { useAcceptQuote } from '../api/accept-quote';
import { useCancelRfq } from '../api/cancel-rfq';
import { useCreateRfq } from '../api/create-rfq';
import { rfqKeys, useOpenRfqs, type Rfq, type RfqResponse } from '../api/get-rfqs';
import { applyRfqFrame } from '../api/rfq-frames';
import { showFailure } from '../lib/errors';
import { responseColor, responseLabel } from '../lib/labels';

const number = new Intl.NumberFormat('en-GB');
/** The top bar (64) and the panel's margins: what the panel leaves free above it. */
const PANEL_CLEARANCE = 96;

/**
 * The Active RFQ's panel of spec section 2 (at most 850 wide, 564 high, its RFQs
 * scrolling inside; never taller than the window below the top bar) with each open
 * RFQ's countdown and responses, and its minimised bar at the bottom left counting the
 * active RFQs and the quotes received. RFQs at zero seconds are hidden, and the panel
 * with them when all are.
 */
export function ActiveRfqs() {
  const queryClient = useQueryClient();
  const rfqs = useOpenRfqs();
  const [minimised, setMinimised] = useState(false);
  const { showToast } = useToast();
  // Every change to our RFQs (a quote, a decline, the deadline) arrives at once as the
  // list shows it, written in (ADR 0029); a gap or a reconnect reads again; the poll is the fallback.
  useTopic(
    '/user/topic/rfqs',
    (message) => {
      // An RFQ every provider declined ends at once (ADR 0036): say why it left the panel.
      if (message.type === 'RFQ_UPDATED' && allDeclined(message)) {
        showToast({ type: 'info', message: 'Every provider declined your RFQ', description: 'Its quantity is back on your parent order.' });
      }
      applyRfqFrame(queryClient, message, 'RFQ_UPDATED');
    },
    () => void queryClient.invalidateQueries({ queryKey: rfqKeys.open }),
  );
  const [expired, setExpired] = useState<Set<string>>(new Set());
  const live = (rfqs.data ?? []).filter((r) => r.expires_in_seconds > 0 && !expired.has(r.rfq_id));
  if (live.length === 0) return null;
  const quotes = live.reduce((n, r) => n + r.responses.filter((x) => x.state === 'RESPONDED').length, 0);
  const onExpired = (id: string) => setExpired((s) => new Set(s).add(id));

  if (minimised) {
    return (
      <Paper elevation={6} sx={{ position: 'fixed', left: 16, bottom: 16, zIndex: (t) => t.zIndex.appBar, px: 2, py: 1 }} data-testid="rfq-bar">
        <Stack direction="row" spacing={2} sx={{ alignItems: 'center' }}>
          <Typography variant="subtitle2">Active RFQs: {live.length}</Typography>
          <Typography variant="subtitle2">Quotes received: {quotes}</Typography>
          <IconButton size="small" aria-label="Maximise the active RFQs" onClick={() => setMinimised(false)}>
            <OpenInFull fontSize="small" />
          </IconButton>
        </Stack>
      </Paper>
    );
  }
  return (
    <Paper
      elevation={8}
      role="region"
      aria-label="Active RFQs"
      sx={{
        position: 'fixed',
        left: 16,
        bottom: 16,
        zIndex: (t) => t.zIndex.appBar,
        width: 'calc(100% - 32px)',
        maxWidth: RFQ_PANEL_MAX_WIDTH,
        height: RFQ_PANEL_HEIGHT,
        // A short window keeps the top bar and the panel's own header in view.
        maxHeight: `calc(100vh - ${PANEL_CLEARANCE}px)`,
        display: 'flex',
        flexDirection: 'column',
      }}
    >
      <Stack direction="row" sx={{ alignItems: 'center', px: 2, py: 1, borderBottom: 1, borderColor: 'divider' }}>
        <Typography variant="h3" component="h2" sx={{ flexGrow: 1 }}>
          Active RFQ&apos;s
        </Typography>
        <IconButton size="small" aria-label="Minimise the active RFQs" onClick={() => setMinimised(true)}>
          <CloseFullscreen fontSize="small" />
        </IconButton>
      </Stack>
      <Stack spacing={2} sx={{ p: 2, overflowY: 'auto', flex: 1, minHeight: 0 }}>
        {live.map((r) => (
          <RfqCard key={r.rfq_id} rfq={r} onExpired={() => onExpired(r.rfq_id)} />
        ))}
      </Stack>
    </Paper>
  );
}

/** An RFQ that ended because every provider it asked declined. */
export function allDeclined(rfq: Pick<Rfq, 'state' | 'responses'>): boolean {
  return rfq.state === 'EXPIRED' && rfq.responses.length > 0 && rfq.responses.every((r) => r.state === 'REJECTED_BY_RESPONDER');
}

function RfqCard({ rfq, onExpired }: { rfq: Rfq; onExpired: () => void }) {
  // A stopped company accepts no quote (the kill switch); withdrawing still works.
  const stopped = useTradingStopped();
  // The band the quotes are checked against moves with the book's frames (ADR 0034).
  const instrument = useLiveInstrument(rfq.instrument_id);
  const seconds = useSecondsLeft(rfq.expired_at);
  const accept = useAcceptQuote();
  const cancel = useCancelRfq();
  const create = useCreateRfq();
  const { showToast } = useToast();
  useEffect(() => {
    if (seconds === 0) onExpired();
  }, [seconds, onExpired]);
  if (seconds === 0) return null;
  const name = instrument.data?.name ?? '…';
  const tick = instrument.data?.tick_size ?? 0.0001;
  const running = seconds !== null && seconds > 0;
  const accepted = rfq.responses.some((x) => x.state === 'ACCEPTED');
  // The price the requester trades at: the provider's sell when buying, their buy when selling.
  const side = (x: RfqResponse) =>
    rfq.direction === 'BUY'
      ? { price: x.sell_price ?? null, quantity: x.sell_quantity ?? null }
      : { price: x.buy_price ?? null, quantity: x.buy_quantity ?? null };
  const take = (x: RfqResponse) => {
    const seen = side(x);
    if (seen.price === null || seen.quantity === null) return;
    mutateThen(
      accept,
      { rfqId: rfq.rfq_id, responseId: x.rfq_response_id, price: seen.price, quantity: seen.quantity },
      {
        // The terms the server matched, from its answer (the ones shown: the server
        // refuses a quote changed since).
        onSuccess: (done) => {
          const matched = done.responses.find((r) => r.rfq_response_id === x.rfq_response_id);
          const { price, quantity } = matched ? side(matched) : { price: null, quantity: null };
          showToast({
            message: 'RFQ trade completed!',
            description: `You just completed your RFQ on the ${truncateName(name)}. Matched at ${formatPrice(price, tick)} for ${quantity === null ? '—' : number.format(quantity)}`,
            keepOpen: true,
          });
        },
        onError: (e) => showFailure(e, 'The quote could not be accepted.'),
      },
    );
  };
  // A quote the band has left cannot be accepted (the server refuses it): the same RFQ
  // goes out again, to the same providers, for fresh quotes.
  const askAgain = () =>
    mutateThen(cancel, rfq.rfq_id, {
      onSuccess: () =>
        mutateThen(
          create,
          {
            parent_order_id: rfq.parent_order_id,
            quantity: rfq.quantity,
            two_way: rfq.two_way,
            anonymous: rfq.anonymous,
            liquidity_provider_ids: rfq.liquidity_provider_ids,
            // The deadline it was sent with, in whole minutes (1 to 15).
            expires_in_seconds: 60 * Math.min(15, Math.max(1, Math.round((Date.parse(rfq.expired_at) - Date.parse(rfq.created_at)) / 60_000))),
          },
          {
            onSuccess: () => showToast({ message: 'Your RFQ has been sent again' }),
            onError: (e) => showFailure(e, 'The RFQ could not be sent again.'),
          },
        ),
      onError: (e) => showFailure(e, 'The RFQ could not be sent again.'),
    });
  const band = instrument.data;
  const outside = (x: RfqResponse) => {
    const { price } = side(x);
    return x.state === 'RESPONDED' && price !== null && band !== undefined && !inBand(price, band);
  };
  return (
    <Paper variant="outlined" sx={{ p: 1.5 }} role="group" aria-label={`RFQ ${name}`}>
      <Stack direction="row" spacing={1} sx={{ alignItems: 'center', mb: 1 }}>
        <Chip size="small" label={rfq.direction === 'BUY' ? 'Buy' : 'Sell'} color={rfq.direction === 'BUY' ? 'success' : 'error'} />
        <Typography variant="subtitle2" sx={{ flexGrow: 1, fontWeight: 700 }} title={name}>
          {truncateName(name)} · {number.format(rfq.quantity)} · {rfq.two_way ? 'Two way' : 'One way'}
          {rfq.anonymous ? ' · Identity hidden' : ''}
        </Typography>
        <Typography variant="subtitle2" sx={{ fontVariantNumeric: 'tabular-nums' }} aria-label="Time left">
          {seconds === null ? '' : formatCountdown(seconds)}
        </Typography>
        <Button
          size="small"
          color="error"
          disabled={cancel.isPending}
          onClick={() =>
            mutateThen(cancel, rfq.rfq_id, {
              onError: (e) => showFailure(e, 'The RFQ could not be cancelled.'),
            })
          }
        >
          Cancel RFQ
        </Button>
      </Stack>
      <Table size="small" aria-label="Quotes">
        <TableHead>
          <TableRow>
            <TableCell>Liquidity provider</TableCell>
            <TableCell>Status</TableCell>
            {rfq.two_way && <TableCell align="right">Bid</TableCell>}
            {rfq.two_way && <TableCell align="right">Offer</TableCell>}
            <TableCell align="right">Your price</TableCell>
            <TableCell align="right">Quantity</TableCell>
            <TableCell />
          </TableRow>
        </TableHead>
        <TableBody>
          {rfq.responses.map((x) => {
            const { price, quantity } = side(x);
            return (
              <TableRow key={x.rfq_response_id}>
                <TableCell>{x.company_name}</TableCell>
                <TableCell>
                  {outside(x) ? (
                    <Chip size="small" variant="outlined" color="warning" label="Outside band" />
                  ) : (
                    <Chip size="small" variant="outlined" color={responseColor(x.state)} label={responseLabel(x.state)} />
                  )}
                </TableCell>
                {rfq.two_way && <TableCell align="right">{x.buy_price == null ? '—' : `${formatPrice(x.buy_price, tick)} × ${number.format(x.buy_quantity ?? 0)}`}</TableCell>}
                {rfq.two_way && <TableCell align="right">{x.sell_price == null ? '—' : `${formatPrice(x.sell_price, tick)} × ${number.format(x.sell_quantity ?? 0)}`}</TableCell>}
                <TableCell align="right" sx={{ fontWeight: 600 }}>
                  {price === null ? '—' : formatPrice(price, tick)}
                </TableCell>
                <TableCell align="right">{quantity === null ? '—' : number.format(quantity)}</TableCell>
                <TableCell align="right" sx={{ whiteSpace: 'nowrap' }}>
                  {outside(x) && (
                    <Button
                      size="small"
                      sx={{ mr: 1 }}
                      disabled={!running || accepted || cancel.isPending || create.isPending || stopped}
                      onClick={askAgain}
                      aria-label={`Ask again: the band has left the quote of ${x.company_name}`}
                    >
                      Ask again
                    </Button>
                  )}
                  <Button
                    size="small"
                    variant="contained"
                    disabled={x.state !== 'RESPONDED' || outside(x) || !running || accepted || accept.isPending || stopped}
                    onClick={() => take(x)}
                    aria-label={`Accept the quote of ${x.company_name}`}
                  >
                    Accept
                  </Button>
                </TableCell>
              </TableRow>
            );
          })}
        </TableBody>
      </Table>
    </Paper>
  );
}
