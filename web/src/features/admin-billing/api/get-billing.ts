import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { allocationLineSchema, directionSchema } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';

export type BillingItem = components['schemas']['BillingItemDto'];

const billingItemSchema = z.object({
  company_name: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  user_id: z.string(),
  broker_name: z.string(),
  broker_id: z.string(),
  match_request_id: z.string(),
  order_id: z.string(),
  payment_order_id: z.string(),
  match_request_created_at: z.string(),
  instrument_name: z.string(),
  bbg_code: z.string().nullable(),
  exchange_instrument_id: z.string().nullable(),
  exchange: z.string(),
  exchange_iso_code: z.string(),
  tick_size: z.number(),
  term: z.string(),
  direction: directionSchema,
  quantity: z.number(),
  price: z.number(),
  allocations: z.array(allocationLineSchema),
  give_up_broker_name: z.string().nullable(),
}) satisfies z.ZodType<BillingItem>;

const billingSchema = z.object({ items: z.array(billingItemSchema) }) satisfies z.ZodType<components['schemas']['BillingDto']>;

export const billingQueryKey = ['admin', 'billing'] as const;

export function getBilling(signal?: AbortSignal) {
  return apiFetch('/billing', { schema: billingSchema, signal });
}

export const billingQueryOptions = () => queryOptions({ queryKey: billingQueryKey, queryFn: ({ signal }) => getBilling(signal), select: (b) => b.items });

/** GET /billing: one item per side of every trade, newest first (venue admins and sales). */
export function useBilling() {
  return useQuery(billingQueryOptions());
}
