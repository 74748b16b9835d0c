import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { useRefreshOrders } from '@/lib/api/trading-keys';
import { rfqKeys, rfqSchema } from './get-rfqs';

type Accept = { rfqId: string; responseId: string; price: number; quantity: number };

/**
 * PATCH /rfqs/{id}/responses/{responseId} {state: ACCEPTED, price, quantity}: the quote
 * becomes a match, at the price and quantity the requester saw; a quote the provider
 * changed since is refused (409) and the RFQs are read again.
 */
export function useAcceptQuote() {
  const queryClient = useQueryClient();
  const refresh = useRefreshOrders();
  return useMutation({
    mutationFn: ({ rfqId, responseId, price, quantity }: Accept) =>
      apiFetch(`/rfqs/${encodeURIComponent(rfqId)}/responses/${encodeURIComponent(responseId)}`, {
        method: 'PATCH',
        body: { state: 'ACCEPTED', price, quantity },
        schema: rfqSchema,
      }),
    onSuccess: (rfq) => {
      refresh(rfq.instrument_id);
    },
    // Not awaited: the card's own callbacks (the toast) run before the refetch that
    // takes a completed RFQ, and the card with it, off the panel.
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: rfqKeys.all });
    },
  });
}
