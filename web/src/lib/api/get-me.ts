import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import type { components } from './schema';

export type User = components['schemas']['UserDto'];
export type AutoAccept = components['schemas']['AutoAcceptDto'];

export const autoAcceptSchema = z.enum(['INSTANT', 'ACCEPT_WITH_DELAY', 'REJECT_WITH_DELAY']);

// Checked at runtime on what the screens rely on; display-only fields are
// allowed to be missing so a newer server does not lock users out.
export const userSchema = z
  .looseObject({
    user_id: z.union([z.string(), z.number()]).transform(String),
    company_id: z.union([z.string(), z.number()]).transform(String),
    company_name: z.string().optional().default(''),
    email: z.string(),
    first_name: z.string().optional().default(''),
    last_name: z.string().optional().default(''),
    roles: z.array(z.string()).optional().default([]),
    auto_accept: autoAcceptSchema.nullish().transform((v) => v ?? null),
    parent_order_limit_multiplier: z.number().nullable().optional().default(null),
    ui_metadata: z.array(z.object({ key: z.string(), value: z.unknown() })).optional().default([]),
    created_at: z.string().optional().default(''),
    updated_at: z.string().optional().default(''),
  })
  .transform((u) => u as unknown as User);

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
