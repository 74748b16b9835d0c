import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { POLL_MS } from '@/config/constants';
import { instrumentSchema } from './dto';
import { instrumentsQueryKey } from './get-instruments';

export function getInstrument(id: string, signal?: AbortSignal) {
  return apiFetch(`/instruments/${encodeURIComponent(id)}`, { schema: instrumentSchema, signal });
}

export const instrumentQueryOptions = (id: string) =>
  queryOptions({ queryKey: [...instrumentsQueryKey, 'one', id], queryFn: ({ signal }) => getInstrument(id, signal), staleTime: POLL_MS });

/** GET /instruments/{id}: its name, tick and current band. */
export function useInstrument(id: string) {
  return useQuery(instrumentQueryOptions(id));
}
