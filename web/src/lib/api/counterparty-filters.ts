import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';

// Counterparty filters (issue 29, ADR 0042): the firms a firm or a trader never trades
// with, and the least reliability score of a counterparty firm.

export type CounterpartyFilter = components['schemas']['CounterpartyFilterDto'];
export type CounterpartyFilterBody = components['schemas']['CounterpartyFilterRequest'];
/** Whose filter: a firm's own (by its id), or the signed-in trader's. */
export type FilterOwner = { companyId: string } | 'me';

const firmSchema = z.object({ company_id: z.string(), name: z.string() });
const filterSchema = z.object({
  blocked_companies: z.array(firmSchema),
  min_reliability_score: z.number().nullable(),
}) satisfies z.ZodType<CounterpartyFilter>;

const path = (owner: FilterOwner) =>
  owner === 'me' ? '/users/me/counterparty-filter' : `/companies/${encodeURIComponent(owner.companyId)}/counterparty-filter`;
const key = (owner: FilterOwner) => ['counterparty-filter', owner === 'me' ? 'me' : owner.companyId] as const;

/** GET the filter of a firm (its people and the venue's staff) or of the signed-in trader. */
export function useCounterpartyFilter(owner: FilterOwner) {
  return useQuery({ queryKey: key(owner), queryFn: ({ signal }) => apiFetch(path(owner), { schema: filterSchema, signal }) });
}

/** PUT the filter whole; the answer replaces what the screen holds. */
export function useSaveCounterpartyFilter(owner: FilterOwner) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: CounterpartyFilterBody) => apiFetch(path(owner), { method: 'PUT', body, schema: filterSchema }),
    onSuccess: (f) => queryClient.setQueryData(key(owner), f),
  });
}

/** GET /counterparty-firms: the venue's firms a filter may name, by name. */
export function useCounterpartyFirms() {
  return useQuery({ queryKey: ['counterparty-firms'], queryFn: ({ signal }) => apiFetch('/counterparty-firms', { schema: z.array(firmSchema), signal }) });
}
