import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';
import { z } from 'zod';

export type Company = components['schemas']['CompanyDto'];
export type CompanyRequest = components['schemas']['CompanyRequest'];
export type AdminUser = components['schemas']['UserDto'];
export type CreateUserRequest = components['schemas']['CreateUserRequest'];
export type UpdateUserRequest = components['schemas']['UpdateUserRequest'];
export type AdminInstrument = components['schemas']['InstrumentDto'];
export type InstrumentRequest = components['schemas']['InstrumentRequest'];
export type Role = components['schemas']['RoleDto'];

/** Admin spec sections 2 and 9: lists are fetched as page 0, size 200. */
export const LIST_SIZE = 200;
/** Admin spec section 9: the instrument list is cached 900 s (refetched after every change). */
const INSTRUMENTS_CACHE_MS = 900_000;

// The admin screens show what the server sends; the page wrapper is checked, the rows pass through.
const page = <T,>() => z.looseObject({ items: z.array(z.looseObject({})), total_items: z.number() }).transform((p) => p as unknown as { items: T[]; total_items: number });
const one = <T,>() => z.looseObject({}).transform((v) => v as unknown as T);

export const adminKeys = {
  companies: ['admin', 'companies'] as const,
  users: ['admin', 'users'] as const,
  instruments: (filters: InstrumentFilters) => ['admin', 'instruments', filters] as const,
  allInstruments: ['admin', 'instruments'] as const,
};

export function useCompanies() {
  return useQuery({
    queryKey: adminKeys.companies,
    queryFn: ({ signal }) => apiFetch(`/admin/companies?page=0&size=${LIST_SIZE}`, { schema: page<Company>(), signal }),
  });
}

export function useSaveCompany() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id?: string; body: CompanyRequest }) =>
      id
        ? apiFetch(`/admin/companies/${encodeURIComponent(id)}`, { method: 'PATCH', body, schema: one<Company>() })
        : apiFetch('/admin/companies', { method: 'POST', body, schema: one<Company>() }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: adminKeys.companies }),
  });
}

export function useUsers() {
  return useQuery({
    queryKey: adminKeys.users,
    queryFn: ({ signal }) => apiFetch(`/admin/users?page=0&size=${LIST_SIZE}`, { schema: page<AdminUser>(), signal }),
  });
}

export function useSaveUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id?: string; body: CreateUserRequest | UpdateUserRequest }) =>
      id
        ? apiFetch(`/users/${encodeURIComponent(id)}`, { method: 'PATCH', body, schema: one<AdminUser>() })
        : apiFetch('/users', { method: 'POST', body, schema: one<AdminUser>() }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: adminKeys.users }),
  });
}

export type SortBy = 'name' | 'term' | 'exchange_id' | 'created_at' | 'updated_at';
export type InstrumentFilters = { name: string; exchange_id: string; active: '' | 'true' | 'false'; sort_by: SortBy; order_by: 'ASC' | 'DESC' };

export function instrumentsPath(f: InstrumentFilters) {
  const q = new URLSearchParams({ page: '0', size: String(LIST_SIZE), sort_by: f.sort_by, order_by: f.order_by });
  if (f.name.trim()) q.set('name', f.name.trim());
  if (f.exchange_id.trim()) q.set('exchange_id', f.exchange_id.trim());
  if (f.active) q.set('active', f.active);
  return `/admin/instruments?${q.toString()}`;
}

export function useAdminInstruments(filters: InstrumentFilters) {
  return useQuery({
    queryKey: adminKeys.instruments(filters),
    queryFn: ({ signal }) => apiFetch(instrumentsPath(filters), { schema: page<AdminInstrument>(), signal }),
    staleTime: INSTRUMENTS_CACHE_MS,
    placeholderData: (previous) => previous,
  });
}

export function useSaveInstrument() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id?: string; body: InstrumentRequest }) =>
      id
        ? apiFetch(`/admin/instruments/${encodeURIComponent(id)}`, { method: 'PATCH', body, schema: one<AdminInstrument>() })
        : apiFetch('/admin/instruments', { method: 'POST', body, schema: one<AdminInstrument>() }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: adminKeys.allInstruments });
      void queryClient.invalidateQueries({ queryKey: ['instruments'] });
    },
  });
}
