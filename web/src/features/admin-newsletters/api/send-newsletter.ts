import { useMutation, useQueryClient } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';
import { newslettersQueryKey } from './get-newsletters';

const sentSchema = z.object({ queued: z.number() }) satisfies z.ZodType<components['schemas']['NewsletterSentDto']>;

export function sendNewsletter(newsletterId: string) {
  return apiFetch(`/admin/newsletters/${encodeURIComponent(newsletterId)}/send`, { method: 'POST', schema: sentSchema });
}

/** POST /admin/newsletters/{id}/send: the digest is queued to every recipient; the list (last sent) is refetched. */
export function useSendNewsletter() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: sendNewsletter,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: newslettersQueryKey }),
  });
}
