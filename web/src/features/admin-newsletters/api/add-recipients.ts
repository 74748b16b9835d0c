import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { newsletterSchema } from './get-newsletters';
import { storeNewsletter } from './update-cache';

export function addRecipients({ newsletterId, recipientIds }: { newsletterId: string; recipientIds: string[] }) {
  return apiFetch(`/admin/newsletters/${encodeURIComponent(newsletterId)}/recipients`, {
    method: 'POST',
    body: { recipient_ids: recipientIds },
    schema: newsletterSchema,
  });
}

/** POST /admin/newsletters/{newsletterId}/recipients {recipient_ids}. */
export function useAddRecipients() {
  const queryClient = useQueryClient();
  return useMutation({ mutationFn: addRecipients, onSuccess: (n) => storeNewsletter(queryClient, n) });
}
