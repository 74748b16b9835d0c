import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { POLL_MS } from '@/config/constants';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';
import { tradingKeys } from '@/lib/api/trading-keys';
import { useRealtimeConnected } from '@/lib/realtime';

type Schemas = components['schemas'];

const levelSchema = z.object({
  price: z.number(),
  buy_quantity: z.number(),
  sell_quantity: z.number(),
  own_buy_quantity: z.number(),
  own_sell_quantity: z.number(),
}) satisfies z.ZodType<Schemas['LevelDto']>;

const bookSchema = z.object({
  instrument_id: z.string(),
  min_tick_price: z.number(),
  max_tick_price: z.number(),
  prices_stale: z.boolean(),
  levels: z.array(levelSchema),
}) satisfies z.ZodType<Schemas['BookDto']>;

export type Book = z.infer<typeof bookSchema>;

export function getBook(instrumentId: string, signal?: AbortSignal) {
  return apiFetch(`/instruments/${encodeURIComponent(instrumentId)}/book`, { schema: bookSchema, signal });
}

export const bookQueryOptions = (instrumentId: string, poll = true) =>
  queryOptions({ queryKey: tradingKeys.book(instrumentId), queryFn: ({ signal }) => getBook(instrumentId, signal), refetchInterval: poll ? POLL_MS : false });

/**
 * GET /instruments/{id}/book: the book with our own share, kept current by its topic's
 * frames (ADR 0029); polled every 15 s only while the socket is down.
 */
export function useBook(instrumentId: string) {
  return useQuery(bookQueryOptions(instrumentId, !useRealtimeConnected()));
}
