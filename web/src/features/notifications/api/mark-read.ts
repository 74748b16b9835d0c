import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { notificationSchema, notificationsQueryKey } from './get-notifications';

/** PATCH /notifications/{id} {read: true} for each id, then the list again. */
export function useMarkRead() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (ids: string[]) =>
      Promise.all(
        ids.map((id) =>
          apiFetch(`/notifications/${encodeURIComponent(id)}`, { method: 'PATCH', body: { read: true }, schema: notificationSchema }),
        ),
      ),
    onSettled: () => queryClient.invalidateQueries({ queryKey: notificationsQueryKey }),
  });
}
