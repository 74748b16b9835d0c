import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';

export type Newsletter = components['schemas']['NewsletterDto'];
export type Recipient = components['schemas']['NewsletterRecipientDto'];

export const recipientSchema = z.object({
  user_id: z.string(),
  email: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  company_name: z.string(),
  roles: z.array(z.string()),
}) satisfies z.ZodType<Recipient>;

export const newsletterSchema = z.object({
  newsletter_id: z.string(),
  name: z.string(),
  description: z.string(),
  filter_criteria: z.object({ instrument_ids: z.array(z.string()).nullable() }).nullable(),
  recipients: z.array(recipientSchema),
  created_at: z.string(),
  updated_at: z.string(),
  last_sent_at: z.string().nullable(),
}) satisfies z.ZodType<Newsletter>;

export const newslettersQueryKey = ['admin', 'newsletters'] as const;

export function getNewsletters(signal?: AbortSignal) {
  return apiFetch('/admin/newsletters', { schema: z.array(newsletterSchema), signal });
}

export const newslettersQueryOptions = () => queryOptions({ queryKey: newslettersQueryKey, queryFn: ({ signal }) => getNewsletters(signal) });

/** GET /admin/newsletters: every newsletter with its recipients. */
export function useNewsletters() {
  return useQuery(newslettersQueryOptions());
}
