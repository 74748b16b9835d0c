import { useCallback, useEffect, useMemo, useState } from 'react';
import { useForm, type Control } from 'react-hook-form';
import { zodResolver } from '@hookform/resolvers/zod';
import { useQueryClient } from '@tanstack/react-query';
import { z } from 'zod';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Chip from '@mui/material/Chip';
import IconButton from '@mui/material/IconButton';
import InputAdornment from '@mui/material/InputAdornment';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import Typography from '@mui/material/Typography';
import Add from '@mui/icons-material/Add';
import Remove from '@mui/icons-material/Remove';
import { serverFieldError } from '@/components/form/form-drawer';
import { FormTextField } from '@/components/form/form-fields';
import { useToast } from '@/components/ui/toast';
import type { Instrument } from '@/lib/api/dto';
import { useInstrument, useLiveInstrument } from '@/lib/api/get-instrument';
import { formatDateTime } from '@/lib/format-date';
import { addTicks, cmp, dec, decimalsOf, parseDecimal, toFixed } from '@/lib/decimal';
import { useTradingStopped } from '@/lib/api/get-platform-status';
import { MESSAGES, parseQuantity, priceError, priceValue } from '@/lib/order-validation';
import { useTopic } from '@/lib/realtime';
import { formatPrice, inBand, truncateName } from '@/lib/trading-format';
import { formatCountdown, useSecondsLeft } from '@/lib/use-seconds-left';
import { mutateThen } from '@/lib/api/mutate-then';
import { useAnswerRfq, type AnswerRfqBody } from '../api/answer-rfq';
import { isOpenResponse, useIncomingRfqs, type IncomingRfq } from '../api/get-incoming-rfqs';
import { rfqKeys } from '../api/get-rfqs';
import { applyRfqFrame } from '../api/rfq-frames';
import { responseColor, responseLabel } from '../lib/labels';

const number = new Intl.NumberFormat('en-GB');
/** The ended list scrolls inside past about eight rows, so a busy day does not push the dashboard down. */
const ENDED_MAX_HEIGHT = 320;

/**
 * For liquidity providers: the open RFQs addressed to their firm, each with its
 * countdown, the requester (or 'Anonymous'), a quote form with the price stepper and
 * tick rules, and Decline; an RFQ whose countdown reaches zero leaves the list. Below
 * them, 'Earlier today': today's RFQs whose response has ended, each with its state
 * (spec section 4) and the quote given. Nothing shows for a firm no RFQ is addressed to.
 */
export function IncomingRfqs() {
  const queryClient = useQueryClient();
  const incoming = useIncomingRfqs(true);
  // An RFQ sent to our firm arrives as this list shows it, written in (ADR 0029); the
  // active panel applies the frames of RFQs we sent.
  useTopic(
    '/user/topic/rfqs',
    (message) => applyRfqFrame(queryClient, message, 'INCOMING_RFQ_UPDATED'),
    () => void queryClient.invalidateQueries({ queryKey: rfqKeys.incoming }),
  );
  // RFQs whose countdown reached zero here, before the server says they ended.
  const [expired, setExpired] = useState<ReadonlySet<string>>(() => new Set());
  const onExpired = useCallback((id: string) => setExpired((s) => (s.has(id) ? s : new Set(s).add(id))), []);
  const all = incoming.data ?? [];
  const live = all.filter((r) => isOpenResponse(r) && r.expires_in_seconds > 0 && !expired.has(r.rfq_id));
  const ended = all.filter((r) => !isOpenResponse(r));
  if (live.length === 0 && ended.length === 0) return null;
  return (
    <Paper variant="outlined" component="section" aria-label="RFQs for you" sx={{ p: 2, width: '100%' }}>
      <Typography variant="h3" component="h2" sx={{ mb: 1.5 }}>
        RFQs for you
      </Typography>
      {live.length > 0 ? (
        <Stack spacing={1.5}>
          {live.map((r) => (
            <IncomingCard key={r.rfq_id} rfq={r} onExpired={onExpired} />
          ))}
        </Stack>
      ) : (
        <Typography variant="body2" color="text.secondary">
          No RFQ is waiting for your quote.
        </Typography>
      )}
      {ended.length > 0 && <EndedToday rfqs={ended} />}
    </Paper>
  );
}

/** What the requester asked for, as the provider reads it. */
function askedLabel(rfq: IncomingRfq): string {
  return rfq.two_way ? 'Two way' : rfq.direction === 'BUY' ? 'Requester buys' : 'Requester sells';
}

/** A provider's quote as a line: 'Bid 94.740 × 1,000 / Offer 94.760 × 1,000'; null without one. */
function quoteText(r: IncomingRfq['response'], tick: number | string | undefined): string | null {
  const quoted = (label: string, price: number | null | undefined, quantity: number | null | undefined) =>
    price === null || price === undefined || tick === undefined ? null : `${label} ${formatPrice(price, tick)} × ${number.format(quantity ?? 0)}`;
  const quote = [quoted('Bid', r.buy_price, r.buy_quantity), quoted('Offer', r.sell_price, r.sell_quantity)].filter((q) => q !== null);
  return quote.length === 0 ? null : quote.join(' / ');
}

function IncomingCard({ rfq, onExpired }: { rfq: IncomingRfq; onExpired: (id: string) => void }) {
  // The band moves with the book's frames: a live quote it has left is shown so.
  const instrument = useLiveInstrument(rfq.instrument_id);
  const seconds = useSecondsLeft(rfq.expired_at);
  useEffect(() => {
    if (seconds === 0) onExpired(rfq.rfq_id);
  }, [seconds, onExpired, rfq.rfq_id]);
  if (seconds === 0) return null;
  const name = instrument.data?.name ?? '…';
  const band = instrument.data;
  const r = rfq.response;
  // What the provider's firm quotes now (by hand or by another of its traders), as the server holds it.
  const live = r.state === 'RESPONDED' ? quoteText(r, band?.tick_size) : null;
  const quotedPrices = [r.buy_price, r.sell_price].filter((p): p is number => p !== null && p !== undefined);
  return (
    <Paper variant="outlined" sx={{ p: 1.5 }} role="group" aria-label={`RFQ ${name}`}>
      <Stack direction="row" spacing={1} sx={{ alignItems: 'center', flexWrap: 'wrap' }} useFlexGap>
        <Typography variant="subtitle2" sx={{ fontWeight: 700 }} title={name}>
          {truncateName(name)}
        </Typography>
        <Chip size="small" label={askedLabel(rfq)} />
        <Typography variant="body2">{number.format(rfq.quantity)}</Typography>
        <Typography variant="body2" color="text.secondary" sx={{ flexGrow: 1 }}>
          {rfq.requester_company_name ?? 'Anonymous'}
        </Typography>
        <Chip size="small" variant="outlined" color={responseColor(rfq.response.state)} label={responseLabel(rfq.response.state)} />
        <Typography variant="subtitle2" sx={{ fontVariantNumeric: 'tabular-nums' }} aria-label="Time left">
          {seconds === null ? '' : formatCountdown(seconds)}
        </Typography>
      </Stack>
      {live && (
        <Stack direction="row" spacing={1} sx={{ alignItems: 'center', mt: 1 }} aria-label="Your live quote">
          <Typography variant="body2">
            Your quote: <b>{live}</b>
          </Typography>
          {band && !quotedPrices.every((p) => inBand(p, band)) && <Chip size="small" variant="outlined" color="warning" label="Outside band" />}
        </Stack>
      )}
      {band && <QuoteForm rfq={rfq} instrument={band} />}
    </Paper>
  );
}

/** Today's ended RFQs: no form, no countdown; the state and the quote the provider gave. */
function EndedToday({ rfqs }: { rfqs: IncomingRfq[] }) {
  return (
    <Box component="section" aria-labelledby="rfqs-earlier-today" sx={{ mt: 2.5 }}>
      <Typography id="rfqs-earlier-today" variant="subtitle1" component="h3" sx={{ fontWeight: 700, mb: 0.5 }}>
        Earlier today
      </Typography>
      <Box sx={{ maxHeight: ENDED_MAX_HEIGHT, overflowY: 'auto' }}>
        <Table size="small" stickyHeader aria-labelledby="rfqs-earlier-today">
          <TableHead>
            <TableRow>
              <TableCell>Instrument</TableCell>
              <TableCell>Request</TableCell>
              <TableCell align="right">Quantity</TableCell>
              <TableCell>Requester</TableCell>
              <TableCell>Your quote</TableCell>
              <TableCell>Status</TableCell>
              <TableCell>Time</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {rfqs.map((r) => (
              <EndedRow key={r.rfq_id} rfq={r} />
            ))}
          </TableBody>
        </Table>
      </Box>
    </Box>
  );
}

function EndedRow({ rfq }: { rfq: IncomingRfq }) {
  const instrument = useInstrument(rfq.instrument_id);
  const name = instrument.data?.name ?? '…';
  const tick = instrument.data?.tick_size;
  const quote = quoteText(rfq.response, tick);
  return (
    <TableRow>
      <TableCell title={name}>{truncateName(name)}</TableCell>
      <TableCell>{askedLabel(rfq)}</TableCell>
      <TableCell align="right">{number.format(rfq.quantity)}</TableCell>
      <TableCell>{rfq.requester_company_name ?? 'Anonymous'}</TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>{quote ?? '—'}</TableCell>
      <TableCell>
        <Chip size="small" variant="outlined" color={responseColor(rfq.response.state)} label={responseLabel(rfq.response.state)} />
      </TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>{formatDateTime(rfq.created_at)}</TableCell>
    </TableRow>
  );
}

type QuoteValues = { buyPrice: string; buyQuantity: string; sellPrice: string; sellQuantity: string };

/** Which sides an RFQ asks a provider for: the one that trades against a one-way requester, or both. */
function sides(rfq: IncomingRfq): ('buy' | 'sell')[] {
  if (rfq.two_way) return ['buy', 'sell'];
  return rfq.direction === 'BUY' ? ['sell'] : ['buy'];
}

function quoteSchema(rfq: IncomingRfq, instrument: Instrument) {
  const band = { tick: instrument.tick_size, min: instrument.min_tick_price, max: instrument.max_tick_price };
  const wanted = sides(rfq);
  const price = (side: 'buy' | 'sell') =>
    z.string().superRefine((text, ctx) => {
      if (!wanted.includes(side)) return;
      const error = text.trim() === '' ? 'Price is required' : priceError(text, band);
      if (error) ctx.addIssue({ code: 'custom', message: error });
    });
  const quantity = (side: 'buy' | 'sell') =>
    z.string().superRefine((text, ctx) => {
      if (!wanted.includes(side)) return;
      const q = parseQuantity(text);
      if (q === null || q < instrument.min_quantity) ctx.addIssue({ code: 'custom', message: MESSAGES.minBlock(instrument.min_quantity) });
      else if (q > rfq.quantity) ctx.addIssue({ code: 'custom', message: 'Exceeds the RFQ quantity' });
    });
  return z
    .object({ buyPrice: price('buy'), buyQuantity: quantity('buy'), sellPrice: price('sell'), sellQuantity: quantity('sell') })
    .superRefine((v, ctx) => {
      const [b, s] = [parseDecimal(v.buyPrice), parseDecimal(v.sellPrice)];
      if (rfq.two_way && b && s && cmp(s, b) < 0) {
        ctx.addIssue({ code: 'custom', path: ['sellPrice'], message: 'Must not be below the buy price' });
      }
    }) satisfies z.ZodType<QuoteValues>;
}

function QuoteForm({ rfq, instrument }: { rfq: IncomingRfq; instrument: Instrument }) {
  // A stopped company sends no quote (the kill switch); declining still works.
  const stopped = useTradingStopped();
  const schema = useMemo(() => quoteSchema(rfq, instrument), [rfq, instrument]);
  const r = rfq.response;
  const tick = dec(instrument.tick_size);
  const places = decimalsOf(tick);
  const text = (p: number | null) => (p === null ? '' : formatPrice(p, instrument.tick_size));
  const form = useForm<QuoteValues>({
    resolver: zodResolver(schema),
    mode: 'onChange',
    defaultValues: {
      buyPrice: text(r.buy_price ?? null),
      buyQuantity: r.buy_quantity === null || r.buy_quantity === undefined ? String(rfq.quantity) : String(r.buy_quantity),
      sellPrice: text(r.sell_price ?? null),
      sellQuantity: r.sell_quantity === null || r.sell_quantity === undefined ? String(rfq.quantity) : String(r.sell_quantity),
    },
  });
  const answer = useAnswerRfq();
  const { showToast } = useToast();
  const open = r.state === 'AWAITING_RESPONSE' || r.state === 'RESPONDED';
  if (!open) return null;
  const wanted = sides(rfq);

  const step = (field: 'buyPrice' | 'sellPrice', ticks: number) => {
    const current = parseDecimal(form.getValues(field)) ?? dec(ticks > 0 ? instrument.min_tick_price : instrument.max_tick_price);
    form.setValue(field, toFixed(addTicks(current, tick, ticks), places), { shouldValidate: true, shouldDirty: true });
  };
  const submit = (v: QuoteValues) => {
    const body: AnswerRfqBody = {};
    if (wanted.includes('buy')) {
      body.buy_price = priceValue(parseDecimal(v.buyPrice));
      body.buy_quantity = parseQuantity(v.buyQuantity) ?? 0;
    }
    if (wanted.includes('sell')) {
      body.sell_price = priceValue(parseDecimal(v.sellPrice));
      body.sell_quantity = parseQuantity(v.sellQuantity) ?? 0;
    }
    mutateThen(answer, { rfqId: rfq.rfq_id, body }, { onSuccess: () => showToast({ message: 'Your quote has been sent' }) });
  };
  const decline = () =>
    mutateThen(answer, { rfqId: rfq.rfq_id, body: { state: 'REJECTED_BY_RESPONDER' } }, { onSuccess: () => showToast({ message: 'RFQ declined' }) });

  return (
    <Box component="form" noValidate aria-label="Quote" onSubmit={form.handleSubmit(submit)} sx={{ mt: 1.5 }}>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1.5}>
        {wanted.map((side) => (
          <Stack key={side} spacing={1} sx={{ flex: 1 }}>
            <Typography variant="caption" color="text.secondary">
              {side === 'buy' ? 'You buy (bid)' : 'You sell (offer)'}
            </Typography>
            <PriceField
              control={form.control}
              name={side === 'buy' ? 'buyPrice' : 'sellPrice'}
              label={side === 'buy' ? 'Bid price' : 'Offer price'}
              serverError={serverFieldError(answer.error, `${side}_price`)}
              onStep={(n) => step(side === 'buy' ? 'buyPrice' : 'sellPrice', n)}
            />
            <FormTextField
              control={form.control}
              name={side === 'buy' ? 'buyQuantity' : 'sellQuantity'}
              label={side === 'buy' ? 'Bid quantity' : 'Offer quantity'}
              serverError={serverFieldError(answer.error, `${side}_quantity`)}
              slotProps={{ htmlInput: { inputMode: 'numeric' } }}
              size="small"
            />
          </Stack>
        ))}
      </Stack>
      <Stack direction="row" spacing={1.5} sx={{ mt: 1.5, justifyContent: 'flex-end' }}>
        <Button color="error" onClick={decline} disabled={answer.isPending}>
          Decline
        </Button>
        <Button type="submit" variant="contained" disabled={!form.formState.isValid || answer.isPending || stopped}>
          {r.state === 'RESPONDED' ? 'Update quote' : 'Send quote'}
        </Button>
      </Stack>
    </Box>
  );
}

function PriceField({
  control,
  name,
  label,
  serverError,
  onStep,
}: {
  control: Control<QuoteValues>;
  name: 'buyPrice' | 'sellPrice';
  label: string;
  serverError?: string;
  onStep: (ticks: number) => void;
}) {
  return (
    <FormTextField
      control={control}
      name={name}
      label={label}
      size="small"
      serverError={serverError}
      slotProps={{
        htmlInput: { inputMode: 'decimal', 'aria-label': label },
        input: {
          startAdornment: (
            <InputAdornment position="start">
              <IconButton aria-label={`Decrease the ${label.toLowerCase()} by one tick`} edge="start" size="small" onClick={() => onStep(-1)}>
                <Remove fontSize="small" />
              </IconButton>
            </InputAdornment>
          ),
          endAdornment: (
            <InputAdornment position="end">
              <IconButton aria-label={`Increase the ${label.toLowerCase()} by one tick`} edge="end" size="small" onClick={() => onStep(1)}>
                <Add fontSize="small" />
              </IconButton>
            </InputAdornment>
          ),
        },
      }}
    />
  );
}
