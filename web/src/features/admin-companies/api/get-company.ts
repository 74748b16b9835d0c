import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { companiesQueryKey, companySchema } from './get-companies';

// Under the companies list's key: the kill switch's refetch of the list refetches it too.
export const companyQueryKey = (id: string) => [...companiesQueryKey, id] as const;

export function getCompany(id: string, signal?: AbortSignal) {
  return apiFetch(`/companies/${encodeURIComponent(id)}`, { schema: companySchema, signal });
}

export const companyQueryOptions = (id: string) =>
  queryOptions({ queryKey: companyQueryKey(id), queryFn: ({ signal }) => getCompany(id, signal) });

/** GET /companies/{id}: one's own company (any, for a venue admin). */
export function useCompany(id: string) {
  return useQuery(companyQueryOptions(id));
}
