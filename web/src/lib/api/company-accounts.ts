import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import type { components } from './schema';

export type Account = components['schemas']['AccountDto'];

export const accountSchema = z.object({
  account_id: z.string(),
  company_id: z.string(),
  code: z.string(),
  name: z.string(),
  active: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
}) satisfies z.ZodType<Account>;

/** Under the company's key: a write to one of its accounts reads them again. */
export const companyAccountsQueryKey = (companyId: string) => ['companies', companyId, 'accounts'] as const;

export function getCompanyAccounts(companyId: string, signal?: AbortSignal) {
  return apiFetch(`/companies/${encodeURIComponent(companyId)}/accounts`, { schema: z.array(accountSchema), signal });
}

export const companyAccountsQueryOptions = (companyId: string) =>
  queryOptions({ queryKey: companyAccountsQueryKey(companyId), queryFn: ({ signal }) => getCompanyAccounts(companyId, signal) });

/**
 * GET /companies/{id}/accounts (ADR 0045): every account for the venue's staff (the
 * Companies panel), the open ones for the firm's own people (a trader allocating a trade).
 */
export function useCompanyAccounts(companyId: string) {
  return useQuery(companyAccountsQueryOptions(companyId));
}
