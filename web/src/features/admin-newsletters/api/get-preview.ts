import { useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';
import { newslettersQueryKey } from './get-newsletters';

export type NewsletterPreview = components['schemas']['NewsletterPreviewDto'];

const levelSchema = z.object({ price: z.number(), quantity: z.number() }) satisfies z.ZodType<components['schemas']['DigestLevelDto']>;

const previewSchema = z.object({
  subject: z.string(),
  text: z.string(),
  html: z.string(),
  instruments: z.array(
    z.object({ name: z.string(), term: z.string(), min_block: z.number(), bids: z.array(levelSchema), offers: z.array(levelSchema) }) satisfies z.ZodType<
      components['schemas']['DigestInstrumentDto']
    >,
  ),
  recipients: z.number(),
}) satisfies z.ZodType<NewsletterPreview>;

export function getPreview(newsletterId: string, signal?: AbortSignal) {
  return apiFetch(`/admin/newsletters/${encodeURIComponent(newsletterId)}/preview`, { schema: previewSchema, signal });
}

/** GET /admin/newsletters/{id}/preview: the digest as it would go out now (fetched afresh each time it opens). */
export function usePreview(newsletterId: string) {
  return useQuery({
    queryKey: [...newslettersQueryKey, newsletterId, 'preview'],
    queryFn: ({ signal }) => getPreview(newsletterId, signal),
    staleTime: 0,
    gcTime: 0,
  });
}
