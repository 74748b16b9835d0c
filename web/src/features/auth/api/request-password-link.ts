import { useMutation } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';
import { emailSchema } from '@/lib/validation';

export const passwordLinkInputSchema = z.object({ email: emailSchema });
export type PasswordLinkInput = z.infer<typeof passwordLinkInputSchema>;

/**
 * Asks for a password-reset e-mail, or with `newAccount` a new activation link.
 * The server answers 204 whether or not the account exists.
 */
export function requestPasswordLink({ email, newAccount }: PasswordLinkInput & { newAccount: boolean }) {
  const body: components['schemas']['EmailRequest'] = { email };
  const query = newAccount ? '?new_account_email=true' : '';
  return apiFetch(`/users/password-reset${query}`, { method: 'POST', body });
}

export function useRequestPasswordLink() {
  return useMutation({ mutationFn: requestPasswordLink });
}
