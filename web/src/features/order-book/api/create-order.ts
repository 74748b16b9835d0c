import { useMutation } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { orderSchema } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';
import { useRefreshOrders } from '@/lib/api/trading-keys';

export function createOrder(body: components['schemas']['CreateOrderRequest']) {
  return apiFetch('/orders', { method: 'POST', idempotent: true, body, schema: orderSchema });
}

/** POST /orders: works part of a parent order in the book. */
export function useCreateOrder() {
  const refresh = useRefreshOrders();
  return useMutation({ mutationFn: createOrder, onSuccess: (o) => refresh(o.instrument_id) });
}
