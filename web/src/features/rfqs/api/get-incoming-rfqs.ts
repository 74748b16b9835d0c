import { useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { directionSchema } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';
import { RFQ_POLL_MS, rfqKeys, rfqResponseSchema, rfqStates } from './get-rfqs';

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

/** GET /rfqs/all/responses: for liquidity providers, the open RFQs addressed to their firm. */
export function useIncomingRfqs(enabled: boolean) {
  return useQuery({
    queryKey: rfqKeys.incoming,
    queryFn: ({ signal }) => apiFetch('/rfqs/all/responses', { schema: z.array(incomingRfqSchema), signal }),
    refetchInterval: RFQ_POLL_MS,
    enabled,
  });
}
