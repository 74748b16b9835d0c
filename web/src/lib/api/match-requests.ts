import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { type MatchRequest, type MatchRequestState, matchRequestSchema } from '@/lib/api/dto';
import { tradingKeys, useRefreshOrders } from '@/lib/api/trading-keys';

export const matchRequestQueryKey = (id: string) => [...tradingKeys.matchRequests, id] as const;

/** GET /order-match-requests/{id}: the request from the caller's side. */
export function useMatchRequest(id: string | null) {
  return useQuery({
    queryKey: matchRequestQueryKey(id ?? ''),
    queryFn: ({ signal }) => apiFetch(`/order-match-requests/${encodeURIComponent(id ?? '')}`, { schema: matchRequestSchema, signal }),
    enabled: id !== null,
  });
}

/**
 * GET /order-match-requests?state=PENDING: the caller's match requests waiting for an answer,
 * newest first. Every notification frame reads it again (the bell invalidates the match
 * requests), and so does the caller's own take or withdrawal, while a screen shows it
 * (`enabled`: only where a request can be, so that an order write reads nothing more).
 */
export function usePendingMatchRequests({ enabled = true }: { enabled?: boolean } = {}) {
  return useQuery({
    enabled,
    queryKey: tradingKeys.pendingMatchRequests,
    queryFn: ({ signal }) => apiFetch('/order-match-requests?state=PENDING', { schema: z.array(matchRequestSchema), signal }),
  });
}

/**
 * PATCH /order-match-requests/{id} {state}: the responder accepts or rejects, the requester withdraws.
 * `onSettled` runs even when the caller has unmounted meanwhile (a `mutate` call's own
 * callbacks would not): a notification's frame may change the screen before the answer comes.
 */
export function useAnswerMatchRequest({ onSettled }: { onSettled?: () => void } = {}) {
  const queryClient = useQueryClient();
  const refresh = useRefreshOrders();
  return useMutation({
    onSettled,
    mutationFn: ({ id, state }: { id: string; state: Extract<MatchRequestState, 'ACCEPTED' | 'REJECTED' | 'CANCELLED'> }) =>
      apiFetch(`/order-match-requests/${encodeURIComponent(id)}`, { method: 'PATCH', body: { state }, schema: matchRequestSchema }),
    onSuccess: (m) => {
      queryClient.setQueryData(matchRequestQueryKey(m.order_match_request_id), m);
      // Answered or withdrawn: off the pending list at once, before its read comes back.
      queryClient.setQueryData<MatchRequest[]>(tradingKeys.pendingMatchRequests, (list) =>
        list?.filter((p) => p.order_match_request_id !== m.order_match_request_id),
      );
      void queryClient.invalidateQueries({ queryKey: tradingKeys.notifications });
      refresh(m.instrument_id);
    },
  });
}
