import { useMutation } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';
import { useRefreshOrders } from '@/lib/api/trading-keys';
import { parentOrderSchema } from './get-parent-orders';

export function createParentOrder(body: components['schemas']['CreateParentOrderRequest']) {
  return apiFetch('/parent-orders', { method: 'POST', idempotent: true, body, schema: parentOrderSchema });
}

/** POST /parent-orders; the lists and the instrument's book are refreshed. */
export function useCreateParentOrder() {
  const refresh = useRefreshOrders();
  return useMutation({ mutationFn: createParentOrder, onSuccess: (p) => refresh(p.instrument_id) });
}
