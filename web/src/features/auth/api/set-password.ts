import { useMutation, useQueryClient } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';
import { passwordRules } from '../lib/password-rules';
import type { LinkPurpose } from './check-password-link';

export const setPasswordInputSchema = z
  .object({
    password: z.string().superRefine((value, ctx) => {
      for (const rule of passwordRules) {
        if (!rule.test(value)) ctx.addIssue({ code: 'custom', message: rule.text });
      }
    }),
    confirmPassword: z.string(),
  })
  .refine((v) => v.password === v.confirmPassword, {
    path: ['confirmPassword'],
    message: 'Passwords do not match. Please try again',
  });

export type SetPasswordInput = z.infer<typeof setPasswordInputSchema>;

export function setPassword({ hash, password, purpose }: { hash: string; password: string; purpose: LinkPurpose }) {
  const body: components['schemas']['PasswordRequest'] = { password, purpose };
  return apiFetch(`/users/password-reset/${encodeURIComponent(hash)}`, { method: 'POST', body });
}

/** Sets the password through an e-mailed link; the link is spent afterwards. */
export function useSetPassword() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: setPassword,
    onSuccess: (_, { hash }) => queryClient.removeQueries({ queryKey: ['password-link', hash] }),
  });
}
