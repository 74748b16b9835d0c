import { useMutation } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { useRefreshOrders } from '@/lib/api/trading-keys';

export function cancelOrder({ orderId }: { orderId: string; instrumentId: string }) {
  return apiFetch(`/orders/${encodeURIComponent(orderId)}`, { method: 'DELETE' });
}

/** DELETE /orders/{id}: the quantity returns to the parent order. */
export function useCancelOrder() {
  const refresh = useRefreshOrders();
  return useMutation({ mutationFn: cancelOrder, onSuccess: (_, { instrumentId }) => refresh(instrumentId) });
}
