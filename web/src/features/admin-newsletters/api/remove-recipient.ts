import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { newsletterSchema } from './get-newsletters';
import { storeNewsletter } from './update-cache';

export function removeRecipient({ newsletterId, recipientId }: { newsletterId: string; recipientId: string }) {
  return apiFetch(`/admin/newsletters/${encodeURIComponent(newsletterId)}/recipients/${encodeURIComponent(recipientId)}`, {
    method: 'DELETE',
    schema: newsletterSchema,
  });
}

/** DELETE /admin/newsletters/{newsletterId}/recipients/{recipientId}: one recipient at a time. */
export function useRemoveRecipient() {
  const queryClient = useQueryClient();
  return useMutation({ mutationFn: removeRecipient, onSuccess: (n) => storeNewsletter(queryClient, n) });
}
