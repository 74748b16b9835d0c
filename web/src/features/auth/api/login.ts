import { useMutation, useQueryClient } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';
import { setToken } from '@/lib/auth-token';
import { getMe, meQueryKey } from '@/lib/api/get-me';
import { emailSchema } from '@/lib/validation';

export const loginInputSchema = z.object({
  email: emailSchema,
  password: z
    .string()
    .min(1, 'Password is required')
    .min(10, 'Password must be at least 10 characters long'),
  rememberMe: z.boolean(),
});

export type LoginInput = z.infer<typeof loginInputSchema>;
type LoginRequest = components['schemas']['LoginRequest'];

const loginResponseSchema = z.object({ token: z.string() });

export function login(input: LoginInput) {
  const body: LoginRequest = input;
  return apiFetch('/auth/login', { method: 'POST', body, schema: loginResponseSchema });
}

/**
 * Signs in, loads the user with the new token (so the gate has it at once) and
 * keeps the token: local storage with Remember me, else session storage.
 */
export function useLogin() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (input: LoginInput) => {
      const { token } = await login(input);
      const me = await getMe(undefined, token);
      return { token, me };
    },
    onSuccess: ({ token, me }, input) => {
      queryClient.setQueryData(meQueryKey, me);
      setToken(token, input.rememberMe);
    },
  });
}
