import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { meQueryKey, userSchema, type User } from '@/lib/api/get-me';
import type { components } from '@/lib/api/schema';

type UpdateUserRequest = components['schemas']['UpdateUserRequest'];

export function updateUser({ userId, body }: { userId: string; body: UpdateUserRequest }): Promise<User> {
  return apiFetch(`/users/${encodeURIComponent(userId)}`, { method: 'PATCH', body, schema: userSchema });
}

/**
 * PATCH /users/{id}; the answer replaces the stored user. A read of the user already on its
 * way is cancelled first: answered after the PATCH, it would put back what the PATCH changed
 * (a tip read shown again).
 */
export function useUpdateUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: updateUser,
    onMutate: () => queryClient.cancelQueries({ queryKey: meQueryKey }),
    onSuccess: (user) => queryClient.setQueryData(meQueryKey, user),
  });
}
