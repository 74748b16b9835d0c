import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { meQueryKey, userSchema, type User } from '@/lib/api/get-me';
import type { components } from '@/lib/api/schema';

type UpdateUserRequest = components['schemas']['UpdateUserRequest'];

export function updateUser({ userId, body }: { userId: string; body: UpdateUserRequest }): Promise<User> {
  return apiFetch(`/users/${encodeURIComponent(userId)}`, { method: 'PATCH', body, schema: userSchema });
}

/**
 * PATCH /users/{id}; the answer replaces the stored user. A read of the user still on its
 * way when the PATCH answers is cancelled first: set off before the PATCH committed and
 * answered after it, it would put back what the PATCH changed (a tip read shown again). A
 * read that sets off after the answer reads the PATCH's result.
 */
export function useUpdateUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: updateUser,
    onSuccess: async (user) => {
      await queryClient.cancelQueries({ queryKey: meQueryKey });
      queryClient.setQueryData(meQueryKey, user);
    },
  });
}
