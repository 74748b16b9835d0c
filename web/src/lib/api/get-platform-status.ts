import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { POLL_MS } from '@/config/constants';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';

export type PlatformStatus = components['schemas']['PlatformStatusDto'];
export type ExchangeDay = components['schemas']['ExchangeDay'];
export type Holiday = components['schemas']['HolidayDto'];
/** An exchange's calendar and whether it is open now (ADR 0052). */
export type ExchangeStatus = components['schemas']['ExchangeStatusDto'];

/** The trading days in the week's order, as the server names them. */
export const EXCHANGE_DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const satisfies readonly ExchangeDay[];

export const exchangeDaySchema = z.enum(EXCHANGE_DAYS) satisfies z.ZodType<ExchangeDay>;
export const holidaySchema = z.object({ date: z.string(), name: z.string().nullable() }) satisfies z.ZodType<Holiday>;

export const exchangeStatusSchema = z.object({
  mic: z.string(),
  name: z.string(),
  time_zone: z.string(),
  open_time: z.string(),
  close_time: z.string(),
  parent_orders_from: z.string(),
  days: z.array(exchangeDaySchema),
  open: z.boolean(),
  parent_orders_open: z.boolean(),
  closing_soon: z.boolean(),
  next_open: z.string().nullable(),
  next_close: z.string().nullable(),
  holiday: holidaySchema.nullable(),
}) satisfies z.ZodType<ExchangeStatus>;

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
  holiday: holidaySchema.nullable(),
  trading_stopped_at: z.string().nullable(),
  exchanges: z.array(exchangeStatusSchema),
}) satisfies z.ZodType<PlatformStatus>;

export function getPlatformStatus(signal?: AbortSignal) {
  return apiFetch('/platform/status', { schema: platformStatusSchema, signal });
}

/** Refetched after an exchange's calendar changes (its status is in `exchanges`). */
export const platformStatusQueryKey = ['platform', 'status'] as const;

export const platformStatusQueryOptions = () =>
  queryOptions({ queryKey: platformStatusQueryKey, queryFn: ({ signal }) => getPlatformStatus(signal), refetchInterval: POLL_MS });

/** GET /platform/status: whether the venue is open (the server's calendar) and its hours. */
export function usePlatformStatus() {
  return useQuery(platformStatusQueryOptions());
}

/** A calendar's hours and whether it is open now: an exchange's, or the venue's own. */
export type Calendar = Omit<ExchangeStatus, 'mic' | 'name' | 'days'> & {
  /** The exchange, or null for the venue's own calendar. */
  exchange: { mic: string; name: string } | null;
  /** The trading days; the venue's own calendar trades Monday to Friday. */
  days: readonly ExchangeDay[];
};

const VENUE_DAYS: readonly ExchangeDay[] = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri'];

/**
 * The calendar an instrument follows (ADR 0052): the exchange whose MIC is the instrument's
 * `exchange_iso_code` when it has one, else the venue's own (the status's top-level fields,
 * `exchange` null). The MIC is compared as it is: both sides store it in capitals.
 */
export function calendarOf(status: PlatformStatus, mic: string | null | undefined): Calendar {
  const e = mic ? status.exchanges.find((x) => x.mic === mic) : undefined;
  if (e) {
    const { mic: code, name, ...rest } = e;
    return { ...rest, exchange: { mic: code, name } };
  }
  return {
    exchange: null,
    time_zone: status.time_zone,
    open_time: status.open_time,
    close_time: status.close_time,
    parent_orders_from: status.parent_orders_from,
    days: VENUE_DAYS,
    open: status.open,
    parent_orders_open: status.parent_orders_open,
    closing_soon: status.closing_soon,
    next_open: status.next_open,
    next_close: status.next_close,
    holiday: status.holiday,
  };
}

/**
 * Whether some calendar, the venue's or an exchange's (ADR 0052), is open now (`open`) or
 * takes parent orders now (`parent_orders_open`): the server checks each instrument's own.
 */
export function anyCalendar(status: PlatformStatus, what: 'open' | 'parent_orders_open'): boolean {
  return status[what] || status.exchanges.some((e) => e[what]);
}

/**
 * Whether the caller's company is stopped by the kill switch: the server refuses its new
 * parent orders, orders, takes, RFQs, quotes and quote accepts, so every control that sends
 * one is disabled while the alert says why (issue 28.14).
 */
export function useTradingStopped() {
  return Boolean(usePlatformStatus().data?.trading_stopped_at);
}
