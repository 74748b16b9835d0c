import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { useRefreshOrders } from '@/lib/api/trading-keys';
import { rfqKeys, rfqSchema } from './get-rfqs';

/** PATCH /rfqs/{id}/responses/{responseId} {state: ACCEPTED}: the quote becomes a match. */
export function useAcceptQuote() {
  const queryClient = useQueryClient();
  const refresh = useRefreshOrders();
  return useMutation({
    mutationFn: ({ rfqId, responseId }: { rfqId: string; responseId: string }) =>
      apiFetch(`/rfqs/${encodeURIComponent(rfqId)}/responses/${encodeURIComponent(responseId)}`, {
        method: 'PATCH',
        body: { state: 'ACCEPTED' },
        schema: rfqSchema,
      }),
    onSuccess: (rfq) => {
      void queryClient.invalidateQueries({ queryKey: rfqKeys.all });
      refresh(rfq.instrument_id);
    },
  });
}
