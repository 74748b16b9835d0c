import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { POLL_MS } from '@/config/constants';
import { apiFetch } from '@/lib/api-client';
import { companyRefSchema, directionSchema } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';
import { tradingKeys } from '@/lib/api/trading-keys';

export type ParentOrder = components['schemas']['ParentOrderDto'];

export const parentOrderSchema = z.object({
  parent_order_id: z.string(),
  instrument_id: z.string(),
  direction: directionSchema,
  quantity: z.number(),
  quantities: z.object({ tradable: z.number(), working: z.number(), matched: z.number() }),
  eligible_brokers: z.array(companyRefSchema),
  broker_instructions: z.string().nullable(),
  min_execution: z.number().nullable(),
  state: z.string(),
  created_by: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
}) satisfies z.ZodType<ParentOrder>;

export function getParentOrders(signal?: AbortSignal) {
  return apiFetch('/parent-orders?state=ACTIVE,FILLED', { schema: z.array(parentOrderSchema), signal });
}

export const parentOrdersQueryOptions = () =>
  queryOptions({ queryKey: tradingKeys.parentOrders, queryFn: ({ signal }) => getParentOrders(signal), refetchInterval: POLL_MS });

/** GET /parent-orders?state=ACTIVE,FILLED: the list of spec section 4, polled every 15 s. */
export function useParentOrders() {
  return useQuery(parentOrdersQueryOptions());
}
