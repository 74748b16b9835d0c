import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { LISTED_STATES } from '../lib/format';
import {
  bookSchema, companySchema, instrumentSchema, marketDataSchema, orderSchema, parentOrderSchema, platformStatusSchema,
} from './schemas';

/** Spec section 9: orders and market data are polled every 15 s; the realtime topics refresh them at once. */
export const POLL_MS = 15_000;
/** Spec section 9: the instrument list is cached 900 s. */
const INSTRUMENTS_CACHE_MS = 900_000;

export const keys = {
  parentOrders: ['parent-orders'] as const,
  orders: ['orders'] as const,
  instruments: (name: string) => ['instruments', 'list', name] as const,
  instrument: (id: string) => ['instruments', 'one', id] as const,
  book: (id: string) => ['instruments', 'book', id] as const,
  marketData: (id: string) => ['instruments', 'market-data', id] as const,
  platform: ['platform', 'status'] as const,
  company: (id: string) => ['companies', id] as const,
};

export function useParentOrders() {
  return useQuery({
    queryKey: keys.parentOrders,
    queryFn: ({ signal }) => apiFetch('/parent-orders?state=ACTIVE,FILLED', { schema: z.array(parentOrderSchema), signal }),
    refetchInterval: POLL_MS,
  });
}

/** The caller's company's child orders that are still on a list (every state but the ended ones). */
export function useOrders() {
  return useQuery({
    queryKey: keys.orders,
    queryFn: ({ signal }) => apiFetch(`/orders?state=${LISTED_STATES.join(',')}`, { schema: z.array(orderSchema), signal }),
    refetchInterval: POLL_MS,
  });
}

export function useInstruments(name: string, enabled = true) {
  return useQuery({
    queryKey: keys.instruments(name),
    queryFn: ({ signal }) =>
      apiFetch(`/instruments${name ? `?name=${encodeURIComponent(name)}` : ''}`, { schema: z.array(instrumentSchema), signal }),
    staleTime: INSTRUMENTS_CACHE_MS,
    placeholderData: keepPreviousData,
    enabled,
  });
}

export const instrumentQuery = (id: string) =>
  queryOptions({
    queryKey: keys.instrument(id),
    queryFn: ({ signal }) => apiFetch(`/instruments/${encodeURIComponent(id)}`, { schema: instrumentSchema, signal }),
    staleTime: POLL_MS,
  });

export function useInstrument(id: string) {
  return useQuery(instrumentQuery(id));
}

export function useBook(instrumentId: string) {
  return useQuery({
    queryKey: keys.book(instrumentId),
    queryFn: ({ signal }) => apiFetch(`/instruments/${encodeURIComponent(instrumentId)}/book`, { schema: bookSchema, signal }),
    refetchInterval: POLL_MS,
  });
}

export function useMarketData(instrumentId: string) {
  return useQuery({
    queryKey: keys.marketData(instrumentId),
    queryFn: ({ signal }) =>
      apiFetch(`/instruments/${encodeURIComponent(instrumentId)}/market-data`, { schema: marketDataSchema, signal }),
    refetchInterval: POLL_MS,
  });
}

export function usePlatformStatus() {
  return useQuery({
    queryKey: keys.platform,
    queryFn: ({ signal }) => apiFetch('/platform/status', { schema: platformStatusSchema, signal }),
    refetchInterval: POLL_MS,
  });
}

export function useCompany(companyId: string) {
  return useQuery({
    queryKey: keys.company(companyId),
    queryFn: ({ signal }) => apiFetch(`/companies/${encodeURIComponent(companyId)}`, { schema: companySchema, signal }),
    staleTime: INSTRUMENTS_CACHE_MS,
  });
}
