import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';

const passwordLinkSchema = z.object({ purpose: z.enum(['RESET', 'ACTIVATION']) });
export type PasswordLink = z.infer<typeof passwordLinkSchema>;

export type LinkPurpose = PasswordLink['purpose'];

/** Checks a link for the page's purpose: a link made for the other one answers 410. */
export function checkPasswordLink(hash: string, purpose: LinkPurpose, signal?: AbortSignal) {
  return apiFetch(`/users/password-reset/${encodeURIComponent(hash)}?purpose=${purpose}`, {
    schema: passwordLinkSchema,
    signal,
  });
}

export const passwordLinkQueryOptions = (hash: string, purpose: LinkPurpose) =>
  queryOptions({
    queryKey: ['password-link', hash],
    queryFn: ({ signal }) => checkPasswordLink(hash, purpose, signal),
    retry: false,
    staleTime: Infinity,
  });

/** Whether an e-mailed link is still valid for the page's purpose; any error means expired. */
export function usePasswordLink(hash: string | null, purpose: LinkPurpose) {
  return useQuery({ ...passwordLinkQueryOptions(hash ?? '', purpose), enabled: Boolean(hash) });
}
