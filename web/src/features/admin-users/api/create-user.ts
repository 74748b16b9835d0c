import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { userSchema } from '@/lib/api/get-me';
import type { components } from '@/lib/api/schema';
import { usersQueryKey } from './get-users';

export function createUser(body: components['schemas']['CreateUserRequest']) {
  return apiFetch('/users', { method: 'POST', idempotent: true, body, schema: userSchema });
}

/** POST /users: the new user gets an activation e-mail; the list is refetched. */
export function useCreateUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createUser,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: usersQueryKey }),
  });
}
