import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';
import { newsletterSchema, newslettersQueryKey } from './get-newsletters';

export type CreateNewsletterRequest = components['schemas']['CreateNewsletterRequest'];

export function createNewsletter(body: CreateNewsletterRequest) {
  return apiFetch('/admin/newsletters', { method: 'POST', idempotent: true, body, schema: newsletterSchema });
}

/** POST /admin/newsletters {name, description}; the list is refetched. */
export function useCreateNewsletter() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createNewsletter,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: newslettersQueryKey }),
  });
}
