import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { ApiError } from '@/lib/api-errors';
import { allocationLineSchema, companyRefSchema } from '@/lib/api/dto';
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

/** The server's answer for a trade never allocated. */
export const NOT_ALLOCATED = 'This trade is not allocated.';

// Not under ['orders']: the order lists' refreshes would read every allocation open again.
export const allocationQueryKey = (orderId: string) => ['allocations', orderId] as const;

/** GET /orders/{id}/allocation, or null when the trade is not allocated (its 404 is expected, not an error to show). */
export async function getAllocation(orderId: string, signal?: AbortSignal) {
  try {
    return await apiFetch(`/orders/${encodeURIComponent(orderId)}/allocation`, { schema: allocationSchema, signal, quiet: [404] });
  } catch (e) {
    if (e instanceof ApiError && e.status === 404 && e.detail === NOT_ALLOCATED) return null;
    throw e;
  }
}

export const allocationQueryOptions = (orderId: string) =>
  queryOptions({ queryKey: allocationQueryKey(orderId), queryFn: ({ signal }) => getAllocation(orderId, signal) });

/**
 * A trade's allocation (ADR 0045), read only while `enabled` (its dialog is open): the child
 * order lists carry none, and a read per matched order would cost a call each. While not
 * enabled it still gives what was read or saved before.
 */
export function useAllocation(orderId: string, { enabled }: { enabled: boolean }) {
  return useQuery({ ...allocationQueryOptions(orderId), enabled });
}
