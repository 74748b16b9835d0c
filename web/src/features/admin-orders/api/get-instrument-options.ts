import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import type { Instrument } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';

/** Admin spec sections 2 and 9: admin lists are fetched as page 0, size 200. */
const LIST_SIZE = 200;
/** Admin spec section 9: the instrument list is cached 900 s. */
const INSTRUMENTS_CACHE_MS = 900_000;

/** Just what the instrument filter shows of each instrument. */
const instrumentOptionsSchema = z.object({
  items: z.array(z.object({ instrument_id: z.string(), name: z.string() })),
  total_items: z.number(),
}) satisfies z.ZodType<{ items: Pick<Instrument, 'instrument_id' | 'name'>[]; total_items: components['schemas']['Page_InstrumentDto']['total_items'] }>;

// Under the instruments panel's key, so its changes show here too.
export const instrumentOptionsQueryKey = ['admin', 'instruments', 'options'] as const;

/**
 * Every instrument, inactive and sandbox ones included, by name: pages of 200 until the
 * total, so that a venue with more instruments can still filter on each of them.
 */
export async function getInstrumentOptions(signal?: AbortSignal) {
  const fetchPage = (page: number) =>
    apiFetch(`/admin/instruments?page=${page}&size=${LIST_SIZE}&sort_by=name&order_by=ASC`, { schema: instrumentOptionsSchema, signal });
  const first = await fetchPage(0);
  const items = [...first.items];
  for (let page = 1; items.length < first.total_items; page += 1) {
    const next = await fetchPage(page);
    if (next.items.length === 0) break;
    items.push(...next.items);
  }
  return { items, total_items: first.total_items };
}

export const instrumentOptionsQueryOptions = () =>
  queryOptions({
    queryKey: instrumentOptionsQueryKey,
    queryFn: ({ signal }) => getInstrumentOptions(signal),
    staleTime: INSTRUMENTS_CACHE_MS,
    select: (page) => page.items,
  });

/** GET /admin/instruments (pages of 200) for the instrument filter (venue admins and sales; inactive and sandbox ones too). */
export function useInstrumentOptions() {
  return useQuery({ ...instrumentOptionsQueryOptions() });
}
