import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { roleSchema } from './dto';
import type { components } from './schema';

export type User = components['schemas']['UserDto'];
export type AutoAccept = components['schemas']['AutoAccept'];

export const autoAcceptSchema = z.enum(['INSTANT', 'ACCEPT_WITH_DELAY', 'REJECT_WITH_DELAY']) satisfies z.ZodType<AutoAccept>;

export const userSchema = z.object({
  user_id: z.string(),
  company_id: z.string(),
  company_name: z.string(),
  email: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  roles: z.array(roleSchema),
  active: z.boolean(),
  verified: z.boolean(),
  fix_integration: z.boolean(),
  cancel_on_disconnect: z.boolean(),
  ems_trader_id: z.string().nullable(),
  auto_accept: autoAcceptSchema.nullable(),
  parent_order_limit_multiplier: z.number().nullable(),
  ui_metadata: z.array(z.object({ key: z.string(), value: z.unknown() })),
  reliability_score: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
}) satisfies z.ZodType<User>;

export function getMe(signal?: AbortSignal, token?: string): Promise<User> {
  return apiFetch('/users/me', { schema: userSchema, signal, token });
}

export const meQueryKey = ['users', 'me'] as const;

export const meQueryOptions = () =>
  queryOptions({ queryKey: meQueryKey, queryFn: ({ signal }) => getMe(signal), retry: false, staleTime: 30_000 });

/** The signed-in user; only enabled while a token exists. */
export function useMe(enabled = true) {
  return useQuery({ ...meQueryOptions(), enabled });
}

/** The signed-in user inside the protected gate, which guarantees it is loaded. */
export function useCurrentUser(): User {
  const { data } = useMe();
  if (!data) throw new Error('useCurrentUser outside the protected gate');
  return data;
}
