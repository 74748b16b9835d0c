import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';

type Company = components['schemas']['CompanyDto'];

/** Admin spec sections 2 and 9: admin lists are fetched as page 0, size 200. */
const LIST_SIZE = 200;

/** Just what the company filter shows of each company. */
const companyOptionsSchema = z.object({
  items: z.array(z.object({ company_id: z.string(), name: z.string() })),
  total_items: z.number(),
}) satisfies z.ZodType<{ items: Pick<Company, 'company_id' | 'name'>[]; total_items: components['schemas']['Page_CompanyDto']['total_items'] }>;

// Under the companies panel's key, so a company it creates or renames shows here too.
export const companyOptionsQueryKey = ['admin', 'companies', 'options'] as const;

export function getCompanyOptions(signal?: AbortSignal) {
  return apiFetch(`/admin/companies?page=0&size=${LIST_SIZE}`, { schema: companyOptionsSchema, signal });
}

export const companyOptionsQueryOptions = () =>
  queryOptions({ queryKey: companyOptionsQueryKey, queryFn: ({ signal }) => getCompanyOptions(signal), select: (page) => page.items });

/** GET /admin/companies (page 0 of 200) for the company filter (venue admins and sales). */
export function useCompanyOptions() {
  return useQuery({ ...companyOptionsQueryOptions() });
}
