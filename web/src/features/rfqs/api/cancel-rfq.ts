import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { useRefreshOrders } from '@/lib/api/trading-keys';
import { rfqKeys, rfqSchema } from './get-rfqs';

/** PATCH /rfqs/{id} {state: CANCELLED}: the requester withdraws; the quantity returns to the parent. */
export function useCancelRfq() {
  const queryClient = useQueryClient();
  const refresh = useRefreshOrders();
  return useMutation({
    mutationFn: (rfqId: string) =>
      apiFetch(`/rfqs/${encodeURIComponent(rfqId)}`, { method: 'PATCH', body: { state: 'CANCELLED' }, schema: rfqSchema }),
    onSuccess: (rfq) => {
      void queryClient.invalidateQueries({ queryKey: rfqKeys.all });
      refresh(rfq.instrument_id);
    },
  });
}
