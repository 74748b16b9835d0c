import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';
import { companiesQueryKey, companySchema } from './get-companies';

export type CompanyRequest = components['schemas']['CompanyRequest'];

export function createCompany(body: CompanyRequest) {
  return apiFetch('/admin/companies', { method: 'POST', idempotent: true, body, schema: companySchema });
}

/** POST /admin/companies; the list is refetched. */
export function useCreateCompany() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createCompany,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: companiesQueryKey }),
  });
}
