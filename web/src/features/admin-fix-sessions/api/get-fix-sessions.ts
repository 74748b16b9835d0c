import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';

export type FixSession = components['schemas']['FixSessionDto'];
export type FixSessionState = components['schemas']['FixSessionStateDto'];

/** How often the screen asks again while it is open. */
export const FIX_SESSIONS_REFRESH_MS = 5_000;

const fixSessionSchema = z.object({
  company_id: z.string(),
  company_name: z.string(),
  fix_comp_id: z.string(),
  state: z.enum(['LOGGED_ON', 'LOGGED_OFF', 'NEVER']),
  next_sender_seq: z.number().int(),
  next_target_seq: z.number().int(),
  last_message_at: z.string().nullable(),
}) satisfies z.ZodType<FixSession>;

export type MarketDataSession = components['schemas']['MarketDataSessionDto'];

const marketDataSchema = z.object({
  provider: z.string(),
  sender_comp_id: z.string(),
  target_comp_id: z.string(),
  state: z.enum(['LOGGED_ON', 'LOGGED_OFF', 'NEVER']),
  node_id: z.string(),
  since: z.string(),
  last_price_at: z.string().nullable(),
  symbols: z.number().int(),
  stale_instruments: z.number().int(),
}) satisfies z.ZodType<MarketDataSession>;

const fixSessionListSchema = z.object({
  items: z.array(fixSessionSchema),
  acceptor: z.object({ address: z.string(), tls: z.boolean(), comp_id: z.string() }).nullable(),
  market_data: marketDataSchema.nullable(),
}) satisfies z.ZodType<components['schemas']['FixSessionList']>;

export const fixSessionsQueryKey = ['admin', 'fix-sessions'] as const;

export function getFixSessions(signal?: AbortSignal) {
  return apiFetch('/admin/fix-sessions', { schema: fixSessionListSchema, signal });
}

export const fixSessionsQueryOptions = () =>
  queryOptions({ queryKey: fixSessionsQueryKey, queryFn: ({ signal }) => getFixSessions(signal), refetchInterval: FIX_SESSIONS_REFRESH_MS });

/** GET /admin/fix-sessions: every company with a FIX CompID and its session, by company name; refreshed every 5 s. */
export function useFixSessions() {
  return useQuery(fixSessionsQueryOptions());
}
