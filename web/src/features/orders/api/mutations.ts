import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';
import { keys } from './queries';
import { orderSchema, parentOrderSchema } from './schemas';

type CreateParentOrder = components['schemas']['CreateParentOrderRequest'];
type CreateOrder = components['schemas']['CreateOrderRequest'];
type EditOrder = components['schemas']['EditOrderRequest'];

/** After any order change: the lists, and the book and market data of its instrument. */
function useRefresh() {
  const queryClient = useQueryClient();
  return (instrumentId?: string) => {
    void queryClient.invalidateQueries({ queryKey: keys.parentOrders });
    void queryClient.invalidateQueries({ queryKey: keys.orders });
    if (instrumentId) {
      void queryClient.invalidateQueries({ queryKey: keys.book(instrumentId) });
      void queryClient.invalidateQueries({ queryKey: keys.marketData(instrumentId) });
    }
  };
}

export function useCreateParentOrder() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: (body: CreateParentOrder) => apiFetch('/parent-orders', { method: 'POST', body, schema: parentOrderSchema }),
    onSuccess: (p) => refresh(p.instrument_id),
  });
}

export function useCancelParentOrder() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: ({ parentOrderId }: { parentOrderId: string; instrumentId: string }) =>
      apiFetch(`/parent-orders/${encodeURIComponent(parentOrderId)}`, { method: 'DELETE' }),
    onSuccess: (_, { instrumentId }) => refresh(instrumentId),
  });
}

export function useCreateOrder() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: (body: CreateOrder) => apiFetch('/orders', { method: 'POST', body, schema: orderSchema }),
    onSuccess: (o) => refresh(o.instrument_id),
  });
}

export function useEditOrder() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: ({ orderId, body }: { orderId: string; body: EditOrder }) =>
      apiFetch(`/orders/${encodeURIComponent(orderId)}`, { method: 'PATCH', body, schema: orderSchema }),
    onSuccess: (o) => refresh(o.instrument_id),
  });
}

export function useCancelOrder() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: ({ orderId }: { orderId: string; instrumentId: string }) =>
      apiFetch(`/orders/${encodeURIComponent(orderId)}`, { method: 'DELETE' }),
    onSuccess: (_, { instrumentId }) => refresh(instrumentId),
  });
}
