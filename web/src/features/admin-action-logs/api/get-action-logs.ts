import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import type { components, operations } from '@/lib/api/schema';

export type ActionLog = components['schemas']['ActionLogDto'];
type Query = NonNullable<operations['action_logs']['parameters']['query']>;
export type SortBy = NonNullable<Query['sort_by']>;
export type OrderBy = NonNullable<Query['order_by']>;

/** Admin spec section 9: the action logs are cached 900 s (the panel refreshes on demand). */
const ACTION_LOGS_CACHE_MS = 900_000;

const actionLogSchema = z.object({
  action_log_id: z.string(),
  entity: z.string(),
  entity_id: z.string().nullable(),
  operation: z.string(),
  user: z.object({ user_id: z.string(), email: z.string(), company_name: z.string() }).nullable(),
  created_at: z.string(),
  details: z.unknown(),
}) satisfies z.ZodType<ActionLog>;

const actionLogPageSchema = z.object({
  items: z.array(actionLogSchema),
  total_items: z.number(),
}) satisfies z.ZodType<components['schemas']['Page_ActionLogDto']>;

/** The list's query: page, size, e-mail, sort, and the optional filters as the API names them (blank: all). */
export type ActionLogFilters = { page: number; size: number; email: string; sort_by: SortBy; order_by: OrderBy } & Pick<
  Query,
  'entity' | 'operation' | 'company_id' | 'from' | 'until' | 'automatic_band_moves'
>;

/** The entities the venue logs, for the filter. */
export const ENTITIES = [
  'order', 'parent_order', 'match_request', 'rfq', 'rfq_response', 'instrument', 'exchange', 'company', 'account', 'user',
  'counterparty_filter', 'session', 'newsletter', 'notification', 'fix_session',
] as const;

export const actionLogsQueryKey = ['admin', 'action-logs'] as const;

/** `GET /admin/action-logs` with the spec's params: page, size, email, order_by, sort_by. */
export function actionLogsPath(f: ActionLogFilters) {
  const q = new URLSearchParams({ page: String(f.page), size: String(f.size), sort_by: f.sort_by, order_by: f.order_by });
  if (f.email.trim()) q.set('email', f.email.trim());
  for (const key of ['entity', 'operation', 'company_id', 'from', 'until'] as const) {
    const v = f[key]?.trim();
    if (v) q.set(key, v);
  }
  if (f.automatic_band_moves === false) q.set('automatic_band_moves', 'false');
  return `/admin/action-logs?${q.toString()}`;
}

export function getActionLogs(filters: ActionLogFilters, signal?: AbortSignal) {
  return apiFetch(actionLogsPath(filters), { schema: actionLogPageSchema, signal });
}

export const actionLogsQueryOptions = (filters: ActionLogFilters) =>
  queryOptions({
    queryKey: [...actionLogsQueryKey, filters],
    queryFn: ({ signal }) => getActionLogs(filters, signal),
    staleTime: ACTION_LOGS_CACHE_MS,
    placeholderData: keepPreviousData,
  });

/** One page of the action log, newest first unless sorted otherwise (venue admins). */
export function useActionLogs(filters: ActionLogFilters) {
  return useQuery(actionLogsQueryOptions(filters));
}
