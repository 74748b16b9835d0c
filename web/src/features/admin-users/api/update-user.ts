import { useMutation, useQueryClient } from '@tanstack/react-query';
import { updateUser } from '@/lib/api/update-user';
import { usersQueryKey } from './get-users';

/** PATCH /users/{id} by an admin for another user; the list is refetched (the signed-in user is left alone). */
export function useAdminUpdateUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: updateUser,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: usersQueryKey }),
  });
}
