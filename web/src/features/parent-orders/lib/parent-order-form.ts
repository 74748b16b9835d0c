import { z } from 'zod';
import { directionSchema, type Direction, type Instrument } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';
import { parseQuantity } from '@/lib/order-validation';
import { addIssues, INCOMPLETE } from '@/lib/validation';

// Spec section 5 (parent order form), with its texts as quoted.

/** Spec section 5: the maximum parent quantity without a multiplier. */
export const DEFAULT_MAX_PARENT_QUANTITY = 100_000;

/** Spec section 5 (parent order form); null for an empty field, which has no message. */
export function parentQuantityError(text: string, min: number, multiplier: number | null): string | null {
  if (text.trim() === '') return null;
  const q = parseQuantity(text);
  const max = multiplier ? multiplier * min : DEFAULT_MAX_PARENT_QUANTITY;
  if (q === null || q < min) return `The minimum block size is ${min}`;
  if (q > max) return `The maximum quantity is ${max}`;
  return null;
}

export type ParentOrderForm = {
  direction: Direction | null;
  instrument: Instrument | null;
  quantity: string;
  broker_instructions: string;
};

export const emptyParentOrderForm: ParentOrderForm = { direction: null, instrument: null, quantity: '', broker_instructions: '' };

/**
 * The messages under the fields. No instrument or no quantity has none: they only keep
 * submit disabled (INCOMPLETE). The quantity's limits come from the instrument and the
 * user's parent_order_limit_multiplier.
 */
export function parentOrderErrors(f: ParentOrderForm, multiplier: number | null): Partial<Record<keyof ParentOrderForm | typeof INCOMPLETE, string>> {
  const e: Partial<Record<keyof ParentOrderForm | typeof INCOMPLETE, string>> = {};
  if (!f.direction) e.direction = 'Direction is required';
  if (!f.instrument) e[INCOMPLETE] = 'No instrument chosen';
  else if (f.quantity.trim() === '') e[INCOMPLETE] = 'No quantity';
  else e.quantity = parentQuantityError(f.quantity, f.instrument.min_quantity, multiplier) ?? undefined;
  return e;
}

export function parentOrderFormSchema(multiplier: number | null) {
  return z
    .object({
      direction: directionSchema.nullable(),
      instrument: z.custom<Instrument>().nullable(),
      quantity: z.string(),
      broker_instructions: z.string(),
    })
    .superRefine((f, ctx) => addIssues(ctx, parentOrderErrors(f, multiplier))) satisfies z.ZodType<ParentOrderForm>;
}

/** The POST /parent-orders body of a valid form. */
export function parentOrderBody(f: ParentOrderForm): components['schemas']['CreateParentOrderRequest'] | null {
  if (!f.direction || !f.instrument) return null;
  return {
    direction: f.direction,
    instrument_id: f.instrument.instrument_id,
    quantity: parseQuantity(f.quantity) ?? 0,
    broker_instructions: f.broker_instructions.trim() || null,
  };
}
