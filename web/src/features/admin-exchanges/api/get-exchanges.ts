import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { POLL_MS } from '@/config/constants';
import { apiFetch } from '@/lib/api-client';
import { exchangeDaySchema, exchangeStatusSchema, holidaySchema } from '@/lib/api/get-platform-status';
import type { components } from '@/lib/api/schema';

/** An exchange's calendar as the admin screen lists it (ADR 0052), with its status now. */
export type Exchange = components['schemas']['ExchangeDto'];

export const exchangeSchema = z.object({
  mic: z.string(),
  name: z.string(),
  time_zone: z.string(),
  open_time: z.string(),
  close_time: z.string(),
  parent_orders_from: z.string(),
  days: z.array(exchangeDaySchema),
  holidays: z.array(holidaySchema),
  instruments: z.number().int(),
  updated_at: z.string(),
  status: exchangeStatusSchema,
}) satisfies z.ZodType<Exchange>;

export const exchangesQueryKey = ['admin', 'exchanges'] as const;

export function getExchanges(signal?: AbortSignal) {
  return apiFetch('/admin/exchanges', { schema: z.array(exchangeSchema), signal });
}

// Read again as the platform status is, so that 'Now' follows the opens and closes.
export const exchangesQueryOptions = () =>
  queryOptions({ queryKey: exchangesQueryKey, queryFn: ({ signal }) => getExchanges(signal), refetchInterval: POLL_MS });

/** GET /admin/exchanges: every exchange with a calendar, by MIC, each with its instruments and its status now. */
export function useExchanges() {
  return useQuery(exchangesQueryOptions());
}
