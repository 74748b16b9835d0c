import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { matchRequestStates, pageSchema } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';

export type Notification = components['schemas']['NotificationDto'];
type NotificationType = components['schemas']['NotificationTypeDto'];

const types = [
  'MATCH_REQUEST_ACCEPTED', 'MATCH_REQUEST_CANCELLED', 'MATCH_REQUEST_RECEIVED', 'MATCH_REQUEST_REJECTED',
  'MATCH_REQUEST_TIMED_OUT', 'MATCH_REQUEST_SYSTEM_CANCELLED_OUT_OF_TICK_PRICE', 'RFQ_RECEIVED', 'RFQ_QUOTE_RECEIVED',
  'RFQ_QUOTE_ACCEPTED',
] as const satisfies readonly NotificationType[];

export const notificationSchema = z.object({
  notification_id: z.string(),
  type: z.enum(types),
  status: z.enum(matchRequestStates),
  instrument_id: z.string(),
  order_match_request_id: z.string().nullable(),
  rfq_id: z.string().nullable(),
  role: z.enum(['REQUESTER', 'RESPONDER']),
  read: z.boolean(),
  archived: z.boolean(),
  created_at: z.string(),
  expired_at: z.string(),
}) satisfies z.ZodType<Notification>;

const notificationPageSchema = pageSchema(notificationSchema) satisfies z.ZodType<components['schemas']['Page_NotificationDto']>;

export const notificationsQueryKey = ['notifications'] as const;

/** GET /notifications?archived=false&order_by=DESC: the caller's notifications, newest first. */
export const notificationsQueryOptions = () =>
  queryOptions({
    queryKey: notificationsQueryKey,
    queryFn: ({ signal }) =>
      apiFetch('/notifications?archived=false&order_by=DESC&size=100', { schema: notificationPageSchema, signal }),
  });

export function useNotifications() {
  return useQuery(notificationsQueryOptions());
}
