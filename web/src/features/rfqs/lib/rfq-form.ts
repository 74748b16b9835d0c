import { z } from 'zod';
import { MESSAGES, parseQuantity } from '@/lib/order-validation';
import type { CreateRfqBody } from '../api/create-rfq';

/** Spec section 5 (RFQ form): the texts under the fields. */
export const RFQ_MESSAGES = {
  quantityRequired: 'Quantity is required',
  negative: 'Quantity cannot be negative',
  providers: 'Choose at least one liquidity provider',
  minutes: 'A whole number of minutes from 1 to 15',
} as const;

export const DEFAULT_MINUTES = 2;

export type RfqForm = { twoWay: boolean; minutes: string; quantity: string; providers: string[]; anonymous: boolean };

export const emptyRfqForm: RfqForm = { twoWay: false, minutes: String(DEFAULT_MINUTES), quantity: '', providers: [], anonymous: false };

/** The RFQ form's rules for a parent with `tradable` left on an instrument of minimum block `min`. */
export function rfqFormSchema({ min, tradable }: { min: number; tradable: number }) {
  return z.object({
    twoWay: z.boolean(),
    minutes: z.string().refine((m) => /^\d+$/.test(m.trim()) && Number(m) >= 1 && Number(m) <= 15, RFQ_MESSAGES.minutes),
    quantity: z
      .string()
      .min(1, RFQ_MESSAGES.quantityRequired)
      .superRefine((text, ctx) => {
        if (text.trim().startsWith('-')) return ctx.addIssue({ code: 'custom', message: RFQ_MESSAGES.negative });
        const q = parseQuantity(text);
        if (q === null || q < min) return ctx.addIssue({ code: 'custom', message: MESSAGES.minBlock(min) });
        if (q > tradable) ctx.addIssue({ code: 'custom', message: MESSAGES.exceeds });
      }),
    providers: z.array(z.string()).min(1, RFQ_MESSAGES.providers),
    anonymous: z.boolean(),
  }) satisfies z.ZodType<RfqForm>;
}

/** The POST /rfqs body of a valid form. */
export function rfqBody(parentOrderId: string, v: RfqForm): CreateRfqBody {
  return {
    parent_order_id: parentOrderId,
    quantity: parseQuantity(v.quantity) ?? 0,
    two_way: v.twoWay,
    anonymous: v.anonymous,
    liquidity_provider_ids: v.providers,
    expires_in_seconds: Number(v.minutes) * 60,
  };
}
