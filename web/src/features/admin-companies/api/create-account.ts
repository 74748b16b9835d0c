import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { accountSchema, companyAccountsQueryKey } from '@/lib/api/company-accounts';
import type { components } from '@/lib/api/schema';

export type CreateAccountRequest = components['schemas']['CreateAccountRequest'];

export function createAccount({ companyId, body }: { companyId: string; body: CreateAccountRequest }) {
  return apiFetch(`/admin/companies/${encodeURIComponent(companyId)}/accounts`, { method: 'POST', idempotent: true, body, schema: accountSchema });
}

/** POST /admin/companies/{id}/accounts (venue admins); the company's accounts are read again. */
export function useCreateAccount() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createAccount,
    onSuccess: (_, { companyId }) => queryClient.invalidateQueries({ queryKey: companyAccountsQueryKey(companyId) }),
  });
}
