import { useMutation } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { useRefreshOrders } from '@/lib/api/trading-keys';

export function cancelParentOrder({ parentOrderId }: { parentOrderId: string; instrumentId: string }) {
  return apiFetch(`/parent-orders/${encodeURIComponent(parentOrderId)}`, { method: 'DELETE' });
}

/** DELETE /parent-orders/{id}: the parent and its working child orders. */
export function useCancelParentOrder() {
  const refresh = useRefreshOrders();
  return useMutation({ mutationFn: cancelParentOrder, onSuccess: (_, { instrumentId }) => refresh(instrumentId) });
}
