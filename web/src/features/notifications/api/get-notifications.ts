import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { matchRequestStates, pageSchema } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';
import { tradingKeys } from '@/lib/api/trading-keys';

export type Notification = components['schemas']['NotificationDto'];
type NotificationType = components['schemas']['NotificationType'];

const types = [
  'MATCH_REQUEST_ACCEPTED', 'MATCH_REQUEST_CANCELLED', 'MATCH_REQUEST_RECEIVED', 'MATCH_REQUEST_REJECTED',
  'MATCH_REQUEST_TIMED_OUT', 'MATCH_REQUEST_SYSTEM_CANCELLED_OUT_OF_TICK_PRICE', 'RFQ_RECEIVED', 'RFQ_QUOTE_RECEIVED',
  'RFQ_QUOTE_ACCEPTED', 'MATCH_REQUEST_BROKER_REJECTED', 'ORDER_PRICE_CORRECTED',
  'ORDER_CANCELLED_ON_DISCONNECT',
] as const satisfies readonly NotificationType[];

export const notificationSchema = z.object({
  notification_id: z.string(),
  type: z.enum(types),
  status: z.enum(matchRequestStates),
  instrument_id: z.string(),
  order_match_request_id: z.string().nullable(),
  rfq_id: z.string().nullable(),
  order_id: z.string().nullable(),
  old_price: z.number().nullable(),
  new_price: z.number().nullable(),
  role: z.enum(['REQUESTER', 'RESPONDER']),
  // Who made it: the recipient, another firm (never named) or the venue (ADR 0046).
  requestor: z.object({ party: z.enum(['YOU', 'COUNTERPARTY', 'VENUE']) }),
  direction: z.enum(['BUY', 'SELL']).nullable(),
  quantity: z.number().nullable(),
  price: z.number().nullable(),
  read: z.boolean(),
  archived: z.boolean(),
  created_at: z.string(),
  expired_at: z.string(),
}) satisfies z.ZodType<Notification>;

const notificationPageSchema = pageSchema(notificationSchema) satisfies z.ZodType<components['schemas']['Page_NotificationDto']>;

type NotificationPage = z.infer<typeof notificationPageSchema>;
type Listed = z.infer<typeof notificationSchema>;

export const notificationsQueryKey = tradingKeys.notifications;

/** How many notifications the list holds (its one page). */
const LISTED = 100;

/** GET /notifications?archived=false&order_by=DESC: the caller's notifications, newest first. */
export const notificationsQueryOptions = () =>
  queryOptions({
    queryKey: notificationsQueryKey,
    queryFn: ({ signal }) =>
      apiFetch(`/notifications?archived=false&order_by=DESC&size=${LISTED}`, { schema: notificationPageSchema, signal }),
  });

/**
 * The list held with a pushed notification written in (ADR 0029): a changed one replaced
 * where it stands, a new one in its place by time (newest first, the page's length kept),
 * an archived one taken out. Nothing held yet: nothing to write into.
 */
export function withNotification(page: NotificationPage | undefined, n: Listed): NotificationPage | undefined {
  if (!page) return page;
  const at = page.items.findIndex((x) => x.notification_id === n.notification_id);
  if (n.archived) {
    return at < 0 ? page : { items: page.items.filter((_, i) => i !== at), total_items: Math.max(0, page.total_items - 1) };
  }
  if (at >= 0) return { ...page, items: page.items.map((x, i) => (i === at ? n : x)) };
  const items = [n, ...page.items].sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at)).slice(0, LISTED);
  return { items, total_items: page.total_items + 1 };
}

/** Reads a notification frame's payload: the notification, or null when it is not one. */
export function pushedNotification(body: unknown): Listed | null {
  const parsed = notificationSchema.safeParse(body);
  return parsed.success ? parsed.data : null;
}

export function useNotifications() {
  return useQuery(notificationsQueryOptions());
}
