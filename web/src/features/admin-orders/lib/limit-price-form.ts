import { z } from 'zod';
import type { components } from '@/lib/api/schema';
import { dec, decimalsOf, eq, onTick, parseDecimal, toFixed, toJsonNumber, type Decimal } from '@/lib/decimal';
import { addIssues, INCOMPLETE } from '@/lib/validation';

// Admin spec section 5, order edit: the limit price must fit the instrument's tick size
// ('Invalid value'). Exact decimals throughout: 0.035 on a 0.005 tick is 35 × 0.001 = 7 ticks,
// never a floating-point remainder.

export const INVALID_VALUE = 'Invalid value';

export type LimitPriceForm = { limit_price: string };

/** The field's text for an order's price, with at least the tick's decimals (0.05 on a 0.005 tick → '0.050'). */
export function limitPriceText(price: number, tickSize: number): string {
  const p = dec(price);
  return toFixed(p, Math.max(decimalsOf(dec(tickSize)), p.scale));
}

/** 'Invalid value' unless the text is a decimal on the tick that a JSON number carries exactly. */
export function limitPriceError(text: string, tick: Decimal): string | undefined {
  const p = parseDecimal(text);
  if (!p || toJsonNumber(p) === null) return INVALID_VALUE;
  return tick.units > 0n && onTick(p, tick) ? undefined : INVALID_VALUE;
}

/** An empty field or the order's own price keeps submit disabled without a message. */
export function limitPriceErrors(f: LimitPriceForm, tick: Decimal, current: Decimal): Partial<Record<keyof LimitPriceForm | typeof INCOMPLETE, string>> {
  const text = f.limit_price.trim();
  if (text === '') return { [INCOMPLETE]: 'No price' };
  const error = limitPriceError(text, tick);
  if (error) return { limit_price: error };
  const p = parseDecimal(text);
  return p && eq(p, current) ? { [INCOMPLETE]: 'Unchanged' } : {};
}

export function limitPriceFormSchema({ tickSize, price }: { tickSize: number; price: number }) {
  const tick = dec(tickSize);
  const current = dec(price);
  return z
    .object({ limit_price: z.string() })
    .superRefine((f, ctx) => addIssues(ctx, limitPriceErrors(f, tick, current))) satisfies z.ZodType<LimitPriceForm>;
}

/** The PATCH body of a valid form: the JSON number whose text is exactly the decimal typed. */
export function limitPriceRequest(f: LimitPriceForm): components['schemas']['CorrectPriceRequest'] {
  const n = toJsonNumber(dec(f.limit_price.trim()));
  // The form refuses a decimal a double cannot carry exactly, so this never happens.
  if (n === null) throw new Error(`not an exact decimal: ${f.limit_price}`);
  return { limit_price: n };
}
