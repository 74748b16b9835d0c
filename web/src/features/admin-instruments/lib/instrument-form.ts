import { z } from 'zod';
import { addTicks, cmp, decimalsOf, onTick, parseDecimal, toFixed } from '@/lib/decimal';
import { addIssues } from '@/lib/validation';

// Admin spec section 5, with its texts as quoted (including the two where the
// rule and the message disagree: the rule is kept, the quoted message shown).

type Errors<K extends string> = Partial<Record<K, string>>;

export type InstrumentForm = {
  name: string;
  term: string;
  description: string;
  country: string;
  currency: string;
  exchange_id: string;
  exchange: string;
  exchange_iso_code: string;
  exchange_instrument_id: string;
  bbg_code: string;
  tick_size: string;
  exchange_tick_size: string;
  min_quantity: string;
  min_tick_price: string;
  max_tick_price: string;
  active: boolean;
  is_sandbox: boolean;
  reversed_spread: boolean;
};

/** Admin spec section 9: best bid and best offer are set 10 ticks apart. */
export const BAND_TICKS = 10;

function priceError(text: string, tick: string): string | undefined {
  const p = parseDecimal(text);
  const t = parseDecimal(tick);
  if (!p) return 'Invalid value';
  return t && t.units > 0n && !onTick(p, t) ? 'Invalid value' : undefined;
}

export function instrumentErrors(f: InstrumentForm): Errors<keyof InstrumentForm> {
  const e: Errors<keyof InstrumentForm> = {};
  if (f.name.trim().length < 2) e.name = 'Name must be at least 2 characters long';
  if (!f.term.trim()) e.term = 'Term is required';
  if (!f.exchange_id.trim()) e.exchange_id = 'Exchange is required';
  if (!f.currency.trim()) e.currency = 'Currency is required';
  if (!f.min_quantity.trim()) e.min_quantity = 'Minimum block size is required';
  else if (!/^\d+$/.test(f.min_quantity.trim()) || Number(f.min_quantity) < 1) e.min_quantity = 'Invalid value';
  const tick = parseDecimal(f.tick_size);
  if (!tick || tick.units <= 0n) e.tick_size = 'Tick size must be greater than 0';
  if (f.exchange_tick_size.trim()) {
    const x = parseDecimal(f.exchange_tick_size);
    if (!x || x.units <= 0n) e.exchange_tick_size = 'Tick size must be greater than 0';
  }
  e.min_tick_price = priceError(f.min_tick_price, f.tick_size);
  e.max_tick_price = priceError(f.max_tick_price, f.tick_size);
  const bid = parseDecimal(f.min_tick_price);
  const offer = parseDecimal(f.max_tick_price);
  if (!e.max_tick_price && bid && offer && cmp(offer, bid) <= 0) e.max_tick_price = 'Best offer must be above best bid';
  return e;
}

/** Admin spec section 4: the other side of the band, 10 ticks away; null when the input is not a price. */
export function otherSide(changed: 'min_tick_price' | 'max_tick_price', value: string, tickSize: string): string | null {
  const p = parseDecimal(value);
  const t = parseDecimal(tickSize);
  if (!p || !t || t.units <= 0n || !onTick(p, t)) return null;
  const other = addTicks(p, t, changed === 'min_tick_price' ? BAND_TICKS : -BAND_TICKS);
  return toFixed(other, Math.max(decimalsOf(t), p.scale));
}

/** Exact decimal text as the JSON number the server parses exactly. */
export function decimalValue(text: string): number | undefined {
  const d = parseDecimal(text);
  return d ? Number(toFixed(d, d.scale)) : undefined;
}

export const instrumentFormSchema = z
  .object({
    name: z.string(),
    term: z.string(),
    description: z.string(),
    country: z.string(),
    currency: z.string(),
    exchange_id: z.string(),
    exchange: z.string(),
    exchange_iso_code: z.string(),
    exchange_instrument_id: z.string(),
    bbg_code: z.string(),
    tick_size: z.string(),
    exchange_tick_size: z.string(),
    min_quantity: z.string(),
    min_tick_price: z.string(),
    max_tick_price: z.string(),
    active: z.boolean(),
    is_sandbox: z.boolean(),
    reversed_spread: z.boolean(),
  })
  .superRefine((f, ctx) => addIssues(ctx, instrumentErrors(f))) satisfies z.ZodType<InstrumentForm>;
