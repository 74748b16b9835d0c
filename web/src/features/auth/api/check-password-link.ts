import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';

const passwordLinkSchema = z.object({ purpose: z.enum(['RESET', 'ACTIVATION']) });
export type PasswordLink = z.infer<typeof passwordLinkSchema>;

export function checkPasswordLink(hash: string, signal?: AbortSignal) {
  return apiFetch(`/users/password-reset/${encodeURIComponent(hash)}`, { schema: passwordLinkSchema, signal });
}

export const passwordLinkQueryOptions = (hash: string) =>
  queryOptions({
    queryKey: ['password-link', hash],
    queryFn: ({ signal }) => checkPasswordLink(hash, signal),
    retry: false,
    staleTime: Infinity,
  });

/** Whether an e-mailed link is still valid; any error means expired. */
export function usePasswordLink(hash: string | null) {
  return useQuery({ ...passwordLinkQueryOptions(hash ?? ''), enabled: Boolean(hash) });
}
