import { z } from 'zod';
import { addIssues } from '@/lib/validation';
import { add, ceilDiv, cmp, dec, floorDiv, mul, parseDecimal, sub, times, toGrouped, type Decimal } from '@/lib/decimal';

/** Admin spec section 9: defaults, and the band of ±0.5 % (ADR 0007). */
export const CALCULATOR_DEFAULTS = { average: '94.73', size: '2100', tick: '0.01' } as const;
const BAND = dec('0.005');

export type CalculatorResult =
  | { ok: true; low: Decimal; high: Decimal; ticks: bigint; levels: bigint; notional: Decimal }
  | { ok: false; field: 'average' | 'size' | 'tick' | 'band'; message: string };

const abs = (d: Decimal): Decimal => (d.units < 0n ? { units: -d.units, scale: d.scale } : d);

/** ADR 0007: the band (±0.5 % of the price's size) rounded inward to the tick, its width in ticks, and the notional. */
export function calculateBlock(average: string, size: string, tick: string): CalculatorResult {
  const p = parseDecimal(average);
  const q = parseDecimal(size);
  const t = parseDecimal(tick);
  // Spreads trade at zero or below (Euribor calendars): any price, the band around its size.
  if (!p) return { ok: false, field: 'average', message: 'Enter a price, such as 94.73 or -0.025' };
  if (!q || q.units <= 0n || q.scale > 0) return { ok: false, field: 'size', message: 'Enter a whole block size greater than 0' };
  if (!t || t.units <= 0n) return { ok: false, field: 'tick', message: 'Enter a tick size greater than 0' };
  const half = mul(abs(p), BAND);
  const low = times(t, ceilDiv(sub(p, half), t));
  const high = times(t, floorDiv(add(p, half), t));
  if (cmp(low, high) > 0) return { ok: false, field: 'band', message: 'The tick is wider than the ±0.5 % band' };
  const ticks = floorDiv(sub(high, low), t);
  return { ok: true, low, high, ticks, levels: ticks + 1n, notional: mul(p, q) };
}

export const formatNotional = (d: Decimal) => toGrouped(d, 2);

/** The calculator's inputs for react-hook-form: each input shows the first rule it breaks. */
export const calculatorSchema = z
  .object({ average: z.string(), size: z.string(), tick: z.string() })
  .superRefine((v, ctx) => {
    const r = calculateBlock(v.average, v.size, v.tick);
    if (!r.ok && r.field !== 'band') addIssues(ctx, { [r.field]: r.message });
  });
