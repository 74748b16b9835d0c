import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { platformStatusQueryKey } from '@/lib/api/get-platform-status';
import { exchangesQueryKey } from './get-exchanges';

export function deleteExchange(mic: string) {
  return apiFetch(`/admin/exchanges/${encodeURIComponent(mic)}`, { method: 'DELETE' });
}

/**
 * DELETE /admin/exchanges/{mic}: its instruments follow the venue's hours again. A 404 (deleted
 * meanwhile) says so in the snackbar; the list and the platform status are read again either way.
 */
export function useDeleteExchange() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: deleteExchange,
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: exchangesQueryKey });
      void queryClient.invalidateQueries({ queryKey: platformStatusQueryKey });
    },
  });
}
