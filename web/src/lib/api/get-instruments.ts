import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { instrumentSchema } from './dto';

/** Spec section 9: the instrument list is cached 900 s. */
const INSTRUMENTS_CACHE_MS = 900_000;

/** Every instrument query (lists, one instrument, books, market data) starts with this key. */
export const instrumentsQueryKey = ['instruments'] as const;

export function getInstruments(name: string, signal?: AbortSignal) {
  return apiFetch(`/instruments${name ? `?name=${encodeURIComponent(name)}` : ''}`, { schema: z.array(instrumentSchema), signal });
}

export const instrumentsQueryOptions = (name: string) =>
  queryOptions({
    queryKey: [...instrumentsQueryKey, 'list', name],
    queryFn: ({ signal }) => getInstruments(name, signal),
    staleTime: INSTRUMENTS_CACHE_MS,
    placeholderData: keepPreviousData,
  });

/** GET /instruments filtered by part of the name (parent order form, add-book dialog). */
export function useInstruments(name: string, enabled = true) {
  return useQuery({ ...instrumentsQueryOptions(name), enabled });
}
