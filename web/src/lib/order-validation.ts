import { cmp, dec, onTick, parseDecimal, toPlain, type Decimal } from '@/lib/decimal';

/** Spec section 5 (child order): the texts shown under the fields. */
export const MESSAGES = {
  minBlock: (n: number) => `Min block size: ${n}`,
  exceeds: 'Exceeds available quantity',
  tick: 'Invalid tick value',
  band: 'Must be between electronic price',
  overQuantity: 'Must not exceed the quantity',
} as const;

/** A whole quantity from the field's text, or null. */
export function parseQuantity(text: string): number | null {
  const t = text.trim().replace(/,/g, '');
  return /^\d+$/.test(t) ? Number(t) : null;
}

/** Quantity between the minimum block and what is available (tradable, plus the order's own when editing). */
export function quantityError(text: string, { min, available }: { min: number; available: number }): string | null {
  if (text.trim() === '') return null;
  const q = parseQuantity(text);
  if (q === null || q < min) return MESSAGES.minBlock(min);
  if (q > available) return MESSAGES.exceeds;
  return null;
}

/**
 * A minimum execution size (ADR 0041), optional: from the minimum block to the order's
 * quantity, as the server checks it.
 */
export function minExecutionError(text: string, { min, quantity }: { min: number; quantity: number | null }): string | null {
  if (text.trim() === '') return null;
  const m = parseQuantity(text);
  if (m === null || m < min) return MESSAGES.minBlock(min);
  if (quantity !== null && m > quantity) return MESSAGES.overQuantity;
  return null;
}

type Band = { tick: number | string; min: number | string; max: number | string };

/** A limit price on the tick and inside the electronic band. */
export function priceError(text: string, band: Band): string | null {
  if (text.trim() === '') return null;
  const p = parseDecimal(text);
  if (!p || !onTick(p, dec(band.tick))) return MESSAGES.tick;
  if (cmp(p, dec(band.min)) < 0 || cmp(p, dec(band.max)) > 0) return MESSAGES.band;
  return null;
}

/** The price to send: a JSON number whose text is exactly the decimal (prices have far fewer than 15 digits). */
export function priceValue(d: Decimal | null): number | undefined {
  return d ? Number(toPlain(d)) : undefined;
}
