import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { companyRefSchema, pageSchema } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';

export type Company = components['schemas']['CompanyDto'];

/** Admin spec sections 2 and 9: lists are fetched as page 0, size 200. */
export const LIST_SIZE = 200;

export const companySchema = z.object({
  company_id: z.string(),
  name: z.string(),
  full_name: z.string(),
  account: z.string().nullable(),
  ems_identifier: z.string().nullable(),
  trade_confirmation_email: z.string().nullable(),
  trade_confirmation_via_email_enabled: z.boolean(),
  fix_comp_id: z.string().nullable(),
  fix_password_set: z.boolean(),
  fix_reset_on_logon: z.boolean(),
  fix_cancel_on_disconnect: z.boolean(),
  default_broker: companyRefSchema.nullable(),
  brokers: z.array(companyRefSchema),
  roles: z.array(z.string()),
  reliability_score: z.number().int(),
  trading_stopped_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
}) satisfies z.ZodType<Company>;

const companyPageSchema = pageSchema(companySchema) satisfies z.ZodType<components['schemas']['Page_CompanyDto']>;
export type CompanyPage = z.infer<typeof companyPageSchema>;

export const companiesQueryKey = ['admin', 'companies'] as const;

export function getCompanies(signal?: AbortSignal) {
  return apiFetch(`/admin/companies?page=0&size=${LIST_SIZE}`, { schema: companyPageSchema, signal });
}

export const companiesQueryOptions = () => queryOptions({ queryKey: companiesQueryKey, queryFn: ({ signal }) => getCompanies(signal) });

/** GET /admin/companies, page 0 of 200. */
export function useCompanies() {
  return useQuery(companiesQueryOptions());
}
