import { z } from 'zod';
import type { Instrument } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';
import { addTicks, cmp, dec, decimalsOf, onTick, parseDecimal, toFixed, toJsonNumber, toPlain } from '@/lib/decimal';
import { addIssues } from '@/lib/validation';

type InstrumentRequest = components['schemas']['InstrumentRequest'];

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
  /** Seconds without a price before trading is held (issue 30); empty: no guard. */
  prices_stale_after: string;
  min_tick_price: string;
  max_tick_price: string;
  active: boolean;
  is_sandbox: boolean;
  reversed_spread: boolean;
};

/** The longest stale-price limit the server takes: a day. */
export const MAX_STALE_AFTER = 86400;

/** Admin spec section 9: best bid and best offer are set 10 ticks apart. */
export const BAND_TICKS = 10;

/** A decimal the form can send exactly (see `toJsonNumber`), or null. */
function exact(text: string) {
  const d = parseDecimal(text);
  return d && toJsonNumber(d) !== null ? d : null;
}

function priceError(text: string, tick: string): string | undefined {
  const p = exact(text);
  const t = parseDecimal(tick);
  if (!p) return 'Invalid value';
  return t && t.units > 0n && !onTick(p, t) ? 'Invalid value' : undefined;
}

/** A tick size: a decimal above 0 that can be sent exactly. */
export function tickError(text: string): string | undefined {
  const t = parseDecimal(text);
  if (!t || t.units <= 0n) return 'Tick size must be greater than 0';
  return exact(text) ? undefined : 'Invalid value';
}

export function instrumentErrors(f: InstrumentForm): Errors<keyof InstrumentForm> {
  const e: Errors<keyof InstrumentForm> = {};
  if (f.name.trim().length < 2) e.name = 'Name must be at least 2 characters long';
  if (!f.term.trim()) e.term = 'Term is required';
  if (!f.exchange_id.trim()) e.exchange_id = 'Exchange is required';
  if (!f.currency.trim()) e.currency = 'Currency is required';
  if (!f.min_quantity.trim()) e.min_quantity = 'Minimum block size is required';
  else if (!/^\d+$/.test(f.min_quantity.trim()) || Number(f.min_quantity) < 1) e.min_quantity = 'Invalid value';
  const staleAfter = f.prices_stale_after.trim();
  if (staleAfter && (!/^\d+$/.test(staleAfter) || Number(staleAfter) < 1 || Number(staleAfter) > MAX_STALE_AFTER)) {
    e.prices_stale_after = `Must be between 1 and ${MAX_STALE_AFTER} seconds`;
  }
  e.tick_size = tickError(f.tick_size);
  // Optional: empty is 'none' (sent as null).
  if (f.exchange_tick_size.trim()) e.exchange_tick_size = tickError(f.exchange_tick_size);
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

/** A valid form field's decimal as the JSON number whose text is exactly what was typed. */
export function decimalValue(text: string): number {
  const n = toJsonNumber(dec(text));
  // The form's rules refuse a decimal a double cannot carry exactly, so this never happens.
  if (n === null) throw new Error(`not an exact decimal: ${text}`);
  return n;
}

/** An instrument's decimal as the form shows it: its plain exact text ('0.005', never '5e-3'). */
export const plain = (value: number) => toPlain(dec(value));

/** The edit form's values for an instrument (a new one when null); an instrument without an exchange tick size shows an empty field. */
export function toInstrumentForm(i: Instrument | null): InstrumentForm {
  const price = (value: number, tick: number) => toFixed(dec(value), Math.max(decimalsOf(dec(tick)), dec(value).scale));
  return {
    name: i?.name ?? '',
    term: i?.term ?? '',
    description: i?.description ?? '',
    country: i?.country ?? '',
    currency: i?.currency ?? '',
    exchange_id: i?.exchange_id ?? '',
    exchange: i?.exchange ?? '',
    exchange_iso_code: i?.exchange_iso_code ?? '',
    exchange_instrument_id: i?.exchange_instrument_id ?? '',
    bbg_code: i?.bbg_code ?? '',
    tick_size: i ? plain(i.tick_size) : '',
    exchange_tick_size: i?.exchange_tick_size != null ? plain(i.exchange_tick_size) : '',
    min_quantity: i ? String(i.min_quantity) : '',
    prices_stale_after: i?.prices_stale_after != null ? String(i.prices_stale_after) : '',
    min_tick_price: i ? price(i.min_tick_price, i.tick_size) : '',
    max_tick_price: i ? price(i.max_tick_price, i.tick_size) : '',
    active: i?.active ?? true,
    is_sandbox: i?.is_sandbox ?? false,
    reversed_spread: i?.reversed_spread ?? false,
  };
}

/**
 * The body of POST and PATCH /admin/instruments for a valid form. Decimals go as exact JSON
 * numbers; an empty exchange tick size is null (none: on an edit, the server clears it).
 */
export function instrumentRequest(v: InstrumentForm): InstrumentRequest {
  const exchangeTick = v.exchange_tick_size.trim();
  return {
    name: v.name.trim(),
    term: v.term.trim(),
    description: v.description.trim(),
    country: v.country.trim(),
    currency: v.currency.trim(),
    exchange_id: v.exchange_id.trim(),
    exchange: v.exchange.trim(),
    exchange_iso_code: v.exchange_iso_code.trim(),
    exchange_instrument_id: v.exchange_instrument_id.trim() || null,
    bbg_code: v.bbg_code.trim() || null,
    tick_size: decimalValue(v.tick_size),
    exchange_tick_size: exchangeTick ? decimalValue(exchangeTick) : null,
    min_quantity: Number(v.min_quantity.trim()),
    prices_stale_after: v.prices_stale_after.trim() ? Number(v.prices_stale_after.trim()) : null,
    min_tick_price: decimalValue(v.min_tick_price),
    max_tick_price: decimalValue(v.max_tick_price),
    active: v.active,
    is_sandbox: v.is_sandbox,
    reversed_spread: v.reversed_spread,
  };
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
    prices_stale_after: z.string(),
    min_tick_price: z.string(),
    max_tick_price: z.string(),
    active: z.boolean(),
    is_sandbox: z.boolean(),
    reversed_spread: z.boolean(),
  })
  .superRefine((f, ctx) => addIssues(ctx, instrumentErrors(f))) satisfies z.ZodType<InstrumentForm>;
