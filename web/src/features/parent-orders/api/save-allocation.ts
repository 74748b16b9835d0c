import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';
import { writeList } from '@/lib/api/list-frames';
import { allocationSchema, allocationsQueryKey, withAllocation, type Allocation } from './get-allocation';

export type AllocationRequest = components['schemas']['AllocationRequest'];

/**
 * Never retried by itself: the server makes a new version of each PUT (sent to the broker),
 * so a retry after a lost answer would send the broker the same split twice.
 */
export function saveAllocation({ orderId, body }: { orderId: string; body: AllocationRequest }) {
  return apiFetch(`/orders/${encodeURIComponent(orderId)}/allocation`, { method: 'PUT', body, schema: allocationSchema });
}

/** PUT /orders/{id}/allocation: a new version, sent to the executing broker; the answer is the allocation now. */
export function useSaveAllocation() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: saveAllocation,
    onSuccess: (a) => writeList<Allocation>(queryClient, allocationsQueryKey, (list) => withAllocation(list, a)),
  });
}
