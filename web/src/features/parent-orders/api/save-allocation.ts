import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';
import { allocationQueryKey, allocationSchema } from './get-allocation';

export type AllocationRequest = components['schemas']['AllocationRequest'];

export function saveAllocation({ orderId, body }: { orderId: string; body: AllocationRequest }) {
  return apiFetch(`/orders/${encodeURIComponent(orderId)}/allocation`, { method: 'PUT', idempotent: true, body, schema: allocationSchema });
}

/** PUT /orders/{id}/allocation: a new version, sent to the executing broker; the answer is the allocation now. */
export function useSaveAllocation() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: saveAllocation,
    onSuccess: (a, { orderId }) => queryClient.setQueryData(allocationQueryKey(orderId), a),
  });
}
