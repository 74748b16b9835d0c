import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { POLL_MS } from '@/config/constants';
import { apiFetch } from '@/lib/api-client';
import { orderSchema } from '@/lib/api/dto';
import { tradingKeys } from '@/lib/api/trading-keys';
import { LISTED_STATES } from '@/lib/trading-format';

export function getOrders(signal?: AbortSignal) {
  return apiFetch(`/orders?state=${LISTED_STATES.join(',')}`, { schema: z.array(orderSchema), signal });
}

export const ordersQueryOptions = () => queryOptions({ queryKey: tradingKeys.orders, queryFn: ({ signal }) => getOrders(signal), refetchInterval: POLL_MS });

/** The caller's company's child orders that are still on a list (every state but the ended ones). */
export function useOrders() {
  return useQuery(ordersQueryOptions());
}
