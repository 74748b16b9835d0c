import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';
import { adminOrderSchema, adminOrdersQueryKey, type AdminOrder } from './get-admin-orders';

type Page = { items: AdminOrder[]; total_items: number };

export function correctOrderPrice({ orderId, body }: { orderId: string; body: components['schemas']['CorrectPriceRequest'] }) {
  return apiFetch(`/admin/orders/${encodeURIComponent(orderId)}`, { method: 'PATCH', body, schema: adminOrderSchema });
}

/**
 * PATCH /admin/orders/{id}: a working order's limit price (venue admins). The row is replaced
 * at once in every cached page that holds it, then the lists are refetched (the filters may
 * no longer match it).
 */
export function useCorrectOrderPrice() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: correctOrderPrice,
    onSuccess: (order) => {
      queryClient.setQueriesData<Page>({ queryKey: adminOrdersQueryKey }, (page) =>
        page && { ...page, items: page.items.map((o) => (o.order_id === order.order_id ? order : o)) },
      );
      void queryClient.invalidateQueries({ queryKey: adminOrdersQueryKey });
    },
  });
}
