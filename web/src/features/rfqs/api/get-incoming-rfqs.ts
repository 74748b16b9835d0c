import { useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { directionSchema } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';
import { RFQ_POLL_MS, rfqKeys, rfqResponseSchema, rfqStates, type ResponseState } from './get-rfqs';

export type IncomingRfq = components['schemas']['IncomingRfqDto'];

export const incomingRfqSchema = z.object({
  rfq_id: z.string(),
  instrument_id: z.string(),
  direction: directionSchema.nullable(),
  quantity: z.number(),
  two_way: z.boolean(),
  requester_company_name: z.string().nullable(),
  state: z.enum(rfqStates),
  created_at: z.string(),
  expired_at: z.string(),
  expires_in_seconds: z.number(),
  response: rfqResponseSchema,
}) satisfies z.ZodType<IncomingRfq>;

/** The caller's response still takes a quote: the ones shown with a quote form and countdown. */
export const openResponseStates = ['AWAITING_RESPONSE', 'RESPONDED'] as const satisfies readonly ResponseState[];

export function isOpenResponse(rfq: IncomingRfq): boolean {
  return (openResponseStates as readonly ResponseState[]).includes(rfq.response.state);
}

/**
 * GET /rfqs/all/responses (no state): for liquidity providers, the RFQs addressed to their
 * firm whose response is open, and those created since the start of the day (London) whose
 * response has ended, newest first.
 */
export function useIncomingRfqs(enabled: boolean) {
  return useQuery({
    queryKey: rfqKeys.incoming,
    queryFn: ({ signal }) => apiFetch('/rfqs/all/responses', { schema: z.array(incomingRfqSchema), signal }),
    refetchInterval: RFQ_POLL_MS,
    enabled,
  });
}
