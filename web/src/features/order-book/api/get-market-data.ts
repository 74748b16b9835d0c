import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { POLL_MS } from '@/config/constants';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';
import { tradingKeys } from '@/lib/api/trading-keys';
import { useRealtimeConnected } from '@/lib/realtime';

/**
 * The best prices are null while the book has no order on that side. The server sends
 * them as `Option<Decimal>` but its OpenAPI document declares plain numbers, so those
 * two fields are widened here; the rest is checked against the generated type.
 */
export type MarketData = Omit<components['schemas']['MarketDataDto'], 'best_buy_price' | 'best_sell_price'> & {
  best_buy_price: number | null;
  best_sell_price: number | null;
};

const marketDataSchema = z.object({
  best_buy_price: z.number().nullable(),
  best_sell_price: z.number().nullable(),
  min_tick_price: z.number(),
  max_tick_price: z.number(),
  prices_stale: z.boolean(),
}) satisfies z.ZodType<MarketData>;

export function getMarketData(instrumentId: string, signal?: AbortSignal) {
  return apiFetch(`/instruments/${encodeURIComponent(instrumentId)}/market-data`, { schema: marketDataSchema, signal });
}

export const marketDataQueryOptions = (instrumentId: string, poll = true) =>
  queryOptions({
    queryKey: tradingKeys.marketData(instrumentId),
    queryFn: ({ signal }) => getMarketData(instrumentId, signal),
    refetchInterval: poll ? POLL_MS : false,
  });

/** GET /instruments/{id}/market-data: the best bid and offer of the book; its topic's frames carry it, so it is polled only while the socket is down. */
export function useMarketData(instrumentId: string) {
  return useQuery(marketDataQueryOptions(instrumentId, !useRealtimeConnected()));
}
