import { useMutation } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { orderSchema } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';
import { useRefreshOrders } from '@/lib/api/trading-keys';

export function editOrder({ orderId, body }: { orderId: string; body: components['schemas']['EditOrderRequest'] }) {
  return apiFetch(`/orders/${encodeURIComponent(orderId)}`, { method: 'PATCH', body, schema: orderSchema });
}

/** PATCH /orders/{id}: a working order's price, quantity, residual or iceberg. */
export function useEditOrder() {
  const refresh = useRefreshOrders();
  return useMutation({ mutationFn: editOrder, onSuccess: (o) => refresh(o.instrument_id) });
}
