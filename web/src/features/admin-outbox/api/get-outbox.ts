import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { pageSchema } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';

export type OutboxMessage = components['schemas']['OutboxMessageDto'];

const outboxMessageSchema = z.object({
  outbox_id: z.string(),
  message_id: z.string(),
  to: z.string(),
  kind: z.enum(['PASSWORD_RESET', 'ACCOUNT_ACTIVATION', 'EMAIL_CHANGED', 'TRADE_ACCEPTANCE', 'TRADE_FILL', 'TRADE_DECLINED', 'TRADE_ALLOCATED', 'ORDERS_DIGEST']),
  summary: z.string(),
  created_at: z.string(),
  sent_at: z.string().nullable(),
  attempts: z.number(),
  last_error: z.string().nullable(),
  links: z.array(z.string()),
  links_hidden: z.boolean(),
}) satisfies z.ZodType<OutboxMessage>;

const outboxPageSchema = pageSchema(outboxMessageSchema) satisfies z.ZodType<components['schemas']['Page_OutboxMessageDto']>;

/** GET /admin/outbox: one page of the e-mails the venue queued, newest first; refreshed every 5 s. */
export function useOutbox(page: number, size: number) {
  return useQuery({
    queryKey: ['admin', 'outbox', page, size],
    queryFn: ({ signal }) => apiFetch(`/admin/outbox?page=${page}&size=${size}`, { schema: outboxPageSchema, signal }),
    placeholderData: keepPreviousData,
    refetchInterval: 5_000,
  });
}
