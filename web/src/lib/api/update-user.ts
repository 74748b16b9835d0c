import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { meQueryKey, userSchema, type User } from '@/lib/api/get-me';
import type { components } from '@/lib/api/schema';

type UpdateUserRequest = components['schemas']['UpdateUserRequest'];

export function updateUser({ userId, body }: { userId: string; body: UpdateUserRequest }): Promise<User> {
  return apiFetch(`/users/${encodeURIComponent(userId)}`, { method: 'PATCH', body, schema: userSchema });
}

/**
 * PATCH /users/{id}; the answer replaces the stored user. A read of the user on its way is
 * cancelled, both before the PATCH and when it answers: one that set off before the PATCH
 * committed and is answered after it would put back what the PATCH changed (a tip read
 * shown again). A read that sets off after the answer reads the PATCH's result.
 */
export function useUpdateUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: updateUser,
    onMutate: () => queryClient.cancelQueries({ queryKey: meQueryKey }),
    onSuccess: async (user) => {
      await queryClient.cancelQueries({ queryKey: meQueryKey });
      queryClient.setQueryData(meQueryKey, user);
    },
  });
}
