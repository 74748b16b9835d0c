import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import type { CompanyRequest } from './create-company';
import { companiesQueryKey, companySchema } from './get-companies';

export function updateCompany({ id, body }: { id: string; body: CompanyRequest }) {
  return apiFetch(`/admin/companies/${encodeURIComponent(id)}`, { method: 'PATCH', body, schema: companySchema });
}

/** PATCH /admin/companies/{id}; the list is refetched. */
export function useUpdateCompany() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: updateCompany,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: companiesQueryKey }),
  });
}
