import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { companyRefSchema } from '@/lib/api/dto';

/** The caller's company is cached like the instruments (900 s). */
const COMPANY_CACHE_MS = 900_000;

// GET /companies/{id} answers a CompanyDto; the order drawer reads its brokers only.
const companyBrokersSchema = z.object({
  company_id: z.string(),
  default_broker: companyRefSchema.nullable(),
  brokers: z.array(companyRefSchema),
});

export function getCompany(companyId: string, signal?: AbortSignal) {
  return apiFetch(`/companies/${encodeURIComponent(companyId)}`, { schema: companyBrokersSchema, signal });
}

export const companyQueryOptions = (companyId: string) =>
  queryOptions({ queryKey: ['companies', companyId], queryFn: ({ signal }) => getCompany(companyId, signal), staleTime: COMPANY_CACHE_MS });

/** The caller's company: its default broker for a new child order. */
export function useCompany(companyId: string) {
  return useQuery(companyQueryOptions(companyId));
}
