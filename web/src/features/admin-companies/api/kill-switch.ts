import { useMutation, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { companiesQueryKey, companySchema, type Company, type CompanyPage } from './get-companies';

export type KillSwitchAction = 'stop' | 'release';

const path = (id: string) => `/companies/${encodeURIComponent(id)}/kill-switch`;

export function stopTrading(id: string) {
  return apiFetch(path(id), { method: 'POST', schema: companySchema });
}

export function releaseTrading(id: string) {
  return apiFetch(path(id), { method: 'DELETE', schema: companySchema });
}

/** The company as the server answered goes into the list at once; then the list is refetched. */
function store(queryClient: QueryClient, c: Company) {
  queryClient.setQueryData<CompanyPage>(companiesQueryKey, (page) =>
    page && { ...page, items: page.items.map((x) => (x.company_id === c.company_id ? c : x)) },
  );
  return queryClient.invalidateQueries({ queryKey: companiesQueryKey });
}

/**
 * The kill switch (DESIGN section 4): POST /companies/{id}/kill-switch stops a company's
 * trading; DELETE releases it (venue admins only; 409 when it is not stopped).
 */
export function useKillSwitch() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, action }: { id: string; action: KillSwitchAction }) => (action === 'stop' ? stopTrading(id) : releaseTrading(id)),
    onSuccess: (c) => store(queryClient, c),
  });
}
