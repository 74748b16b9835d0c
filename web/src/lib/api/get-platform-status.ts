import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { POLL_MS } from '@/config/constants';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';

export type PlatformStatus = components['schemas']['PlatformStatusDto'];

const platformStatusSchema = z.object({
  open: z.boolean(),
  parent_orders_open: z.boolean(),
  closing_soon: z.boolean(),
  always_open: z.boolean(),
  open_time: z.string(),
  close_time: z.string(),
  parent_orders_from: z.string(),
  time_zone: z.string(),
  next_open: z.string().nullable(),
  next_close: z.string().nullable(),
  holiday: z.object({ date: z.string(), name: z.string().nullable() }).nullable(),
  trading_stopped_at: z.string().nullable(),
}) satisfies z.ZodType<PlatformStatus>;

export function getPlatformStatus(signal?: AbortSignal) {
  return apiFetch('/platform/status', { schema: platformStatusSchema, signal });
}

export const platformStatusQueryOptions = () =>
  queryOptions({ queryKey: ['platform', 'status'], queryFn: ({ signal }) => getPlatformStatus(signal), refetchInterval: POLL_MS });

/** GET /platform/status: whether the venue is open (the server's calendar) and its hours. */
export function usePlatformStatus() {
  return useQuery(platformStatusQueryOptions());
}

/**
 * Whether the caller's company is stopped by the kill switch: the server refuses its new
 * parent orders, orders, takes, RFQs, quotes and quote accepts, so every control that sends
 * one is disabled while the alert says why (issue 28.14).
 */
export function useTradingStopped() {
  return Boolean(usePlatformStatus().data?.trading_stopped_at);
}
