import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { accountSchema, companyAccountsQueryKey } from '@/lib/api/company-accounts';
import type { components } from '@/lib/api/schema';

export type UpdateAccountRequest = components['schemas']['UpdateAccountRequest'];

export function updateAccount({ companyId, accountId, body }: { companyId: string; accountId: string; body: UpdateAccountRequest }) {
  return apiFetch(`/admin/companies/${encodeURIComponent(companyId)}/accounts/${encodeURIComponent(accountId)}`, {
    method: 'PATCH',
    body,
    schema: accountSchema,
  });
}

/** PATCH /admin/companies/{id}/accounts/{account_id}: renames, closes or reopens an account; the company's accounts are read again. */
export function useUpdateAccount() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: updateAccount,
    onSuccess: (_, { companyId }) => queryClient.invalidateQueries({ queryKey: companyAccountsQueryKey(companyId) }),
  });
}
