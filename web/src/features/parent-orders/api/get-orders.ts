import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { POLL_MS } from '@/config/constants';
import { apiFetch } from '@/lib/api-client';
import { orderSchema } from '@/lib/api/dto';
import { tradingKeys } from '@/lib/api/trading-keys';
import { useRealtimeConnected } from '@/lib/realtime';
import { LISTED_STATES } from '@/lib/trading-format';

export function getOrders(signal?: AbortSignal) {
  return apiFetch(`/orders?state=${LISTED_STATES.join(',')}`, { schema: z.array(orderSchema), signal });
}

export const ordersQueryOptions = (poll = true) =>
  queryOptions({ queryKey: tradingKeys.orders, queryFn: ({ signal }) => getOrders(signal), refetchInterval: poll ? POLL_MS : false });

/**
 * The caller's company's child orders that are still on a list (every state but the ended
 * ones); the orders topic says when to read them, so they are polled only while the socket is down.
 */
export function useOrders() {
  return useQuery(ordersQueryOptions(!useRealtimeConnected()));
}
