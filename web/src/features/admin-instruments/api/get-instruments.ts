import { queryOptions, useQuery } from '@tanstack/react-query';
import type { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { instrumentSchema, pageSchema, type Instrument } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';

/** Admin spec sections 2 and 9: lists are fetched as page 0, size 200. */
export const LIST_SIZE = 200;
/** Admin spec section 9: the instrument list is cached 900 s (refetched after every change). */
const INSTRUMENTS_CACHE_MS = 900_000;

const instrumentPageSchema = pageSchema(instrumentSchema) satisfies z.ZodType<{ items: Instrument[]; total_items: components['schemas']['Page_InstrumentDto']['total_items'] }>;

export type SortBy = 'name' | 'term' | 'exchange_id' | 'created_at' | 'updated_at';
export type InstrumentFilters = { name: string; exchange_id: string; active: '' | 'true' | 'false'; sort_by: SortBy; order_by: 'ASC' | 'DESC' };

export const adminInstrumentsQueryKey = ['admin', 'instruments'] as const;

export function instrumentsPath(f: InstrumentFilters) {
  const q = new URLSearchParams({ page: '0', size: String(LIST_SIZE), sort_by: f.sort_by, order_by: f.order_by });
  if (f.name.trim()) q.set('name', f.name.trim());
  if (f.exchange_id.trim()) q.set('exchange_id', f.exchange_id.trim());
  if (f.active) q.set('active', f.active);
  return `/admin/instruments?${q.toString()}`;
}

export function getAdminInstruments(filters: InstrumentFilters, signal?: AbortSignal) {
  return apiFetch(instrumentsPath(filters), { schema: instrumentPageSchema, signal });
}

export const adminInstrumentsQueryOptions = (filters: InstrumentFilters) =>
  queryOptions({
    queryKey: [...adminInstrumentsQueryKey, filters],
    queryFn: ({ signal }) => getAdminInstruments(filters, signal),
    staleTime: INSTRUMENTS_CACHE_MS,
    placeholderData: (previous) => previous,
  });

/** GET /admin/instruments with the panel's filters and sorting, page 0 of 200. */
export function useAdminInstruments(filters: InstrumentFilters) {
  return useQuery(adminInstrumentsQueryOptions(filters));
}
