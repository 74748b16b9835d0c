import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { directionSchema } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';

export type Rfq = components['schemas']['RfqDto'];
export type RfqResponse = components['schemas']['RfqResponseDto'];
export type ResponseState = components['schemas']['ResponseState'];

export const responseStates = [
  'AWAITING_RESPONSE', 'RESPONDED', 'ACCEPTED', 'REJECTED_BY_REQUESTER', 'REJECTED_BY_RESPONDER', 'EXPIRED', 'CANCELLED',
] as const satisfies readonly ResponseState[];

export const rfqStates = ['OPEN', 'COMPLETED', 'EXPIRED', 'CANCELLED'] as const satisfies readonly components['schemas']['RfqState'][];

export const rfqResponseSchema = z.object({
  rfq_response_id: z.string(),
  rfq_id: z.string(),
  state: z.enum(responseStates),
  company_name: z.string(),
  buy_price: z.number().nullable(),
  buy_quantity: z.number().nullable(),
  sell_price: z.number().nullable(),
  sell_quantity: z.number().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
}) satisfies z.ZodType<RfqResponse>;

export const rfqSchema = z.object({
  rfq_id: z.string(),
  parent_order_id: z.string(),
  order_id: z.string(),
  instrument_id: z.string(),
  direction: directionSchema,
  quantity: z.number(),
  two_way: z.boolean(),
  anonymous: z.boolean(),
  state: z.enum(rfqStates),
  liquidity_provider_ids: z.array(z.string()),
  responses_ids: z.array(z.string()),
  responses: z.array(rfqResponseSchema),
  created_at: z.string(),
  expired_at: z.string(),
  expires_in_seconds: z.number(),
}) satisfies z.ZodType<Rfq>;

export const rfqKeys = {
  all: ['rfqs'] as const,
  open: ['rfqs', 'open'] as const,
  incoming: ['rfqs', 'incoming'] as const,
};

/** Spec section 7: the open RFQs are polled on a fast interval; /user/topic/rfqs refreshes them at once. */
export const RFQ_POLL_MS = 5_000;

/** GET /rfqs?state=OPEN: the caller's firm's open RFQs with their responses, newest first. */
export const openRfqsQueryOptions = () =>
  queryOptions({
    queryKey: rfqKeys.open,
    queryFn: ({ signal }) => apiFetch('/rfqs?state=OPEN', { schema: z.array(rfqSchema), signal }),
    refetchInterval: RFQ_POLL_MS,
  });

export function useOpenRfqs() {
  return useQuery(openRfqsQueryOptions());
}
