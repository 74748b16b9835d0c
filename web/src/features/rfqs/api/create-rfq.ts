import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';
import { useRefreshOrders } from '@/lib/api/trading-keys';
import { rfqKeys, rfqSchema } from './get-rfqs';

export type CreateRfqBody = components['schemas']['CreateRfqRequest'];

/** POST /rfqs: the quantity is reserved from the parent while the RFQ is open. */
export function useCreateRfq() {
  const queryClient = useQueryClient();
  const refresh = useRefreshOrders();
  return useMutation({
    mutationFn: (body: CreateRfqBody) => apiFetch('/rfqs', { method: 'POST', idempotent: true, body, schema: rfqSchema }),
    onSuccess: (rfq) => {
      void queryClient.invalidateQueries({ queryKey: rfqKeys.all });
      refresh(rfq.instrument_id);
    },
  });
}
