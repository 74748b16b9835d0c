import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { allocationLineSchema, companyRefSchema } from '@/lib/api/dto';
import { withRow } from '@/lib/api/list-frames';
import type { components } from '@/lib/api/schema';

export type Allocation = components['schemas']['AllocationDto'];
export type BrokerAck = 'PENDING' | 'ACCEPTED' | 'REJECTED';

export const allocationSchema = z.object({
  order_id: z.string(),
  version: z.number().int(),
  lines: z.array(allocationLineSchema),
  give_up_broker: companyRefSchema.nullable(),
  // The document types it as a string (its example PENDING); these are the three it sends.
  broker_ack: z.enum(['PENDING', 'ACCEPTED', 'REJECTED']),
  broker_ack_text: z.string().nullable(),
  updated_at: z.string(),
}) satisfies z.ZodType<Allocation>;

// Not under ['orders']: the order lists' refreshes do not read it again.
export const allocationsQueryKey = ['allocations'] as const;

/** GET /allocations: the allocations of the trader's own trades, the latest first. */
export function getAllocations(signal?: AbortSignal) {
  return apiFetch('/allocations', { schema: z.array(allocationSchema), signal });
}

/** Read once: every change reaches the trader's sessions as a frame, and a dropped socket reads it again. */
export const allocationsQueryOptions = () =>
  queryOptions({ queryKey: allocationsQueryKey, queryFn: ({ signal }) => getAllocations(signal), staleTime: Infinity });

/** The list with one allocation written in (a save's answer, a pushed frame). */
export function withAllocation(list: Allocation[] | undefined, a: Allocation): Allocation[] | undefined {
  return withRow(list, a, (x) => x.order_id, true);
}

/**
 * A trade's allocation (ADR 0045), or null when it has none: from the list of the trader's
 * allocations, read once for every card and kept current by `/user/topic/orders`'s
 * `ALLOCATION_UPDATED` frames (the broker's answer among them).
 */
export function useAllocation(orderId: string) {
  return useQuery({ ...allocationsQueryOptions(), select: (all) => all.find((a) => a.order_id === orderId) ?? null });
}
