import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { POLL_MS } from '@/config/constants';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';
import { tradingKeys } from '@/lib/api/trading-keys';

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
  levels: z.array(levelSchema),
}) satisfies z.ZodType<Schemas['BookDto']>;

export function getBook(instrumentId: string, signal?: AbortSignal) {
  return apiFetch(`/instruments/${encodeURIComponent(instrumentId)}/book`, { schema: bookSchema, signal });
}

export const bookQueryOptions = (instrumentId: string) =>
  queryOptions({ queryKey: tradingKeys.book(instrumentId), queryFn: ({ signal }) => getBook(instrumentId, signal), refetchInterval: POLL_MS });

/** GET /instruments/{id}/book: the anonymous book, polled every 15 s and pushed by its topic. */
export function useBook(instrumentId: string) {
  return useQuery(bookQueryOptions(instrumentId));
}
