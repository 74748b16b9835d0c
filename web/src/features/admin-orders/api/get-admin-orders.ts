import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { directionSchema } from '@/lib/api/dto';
import type { components, operations } from '@/lib/api/schema';

export type AdminOrder = components['schemas']['AdminOrderDto'];
type Query = NonNullable<operations['admin_orders']['parameters']['query']>;

const namedRefSchema = z.object({ id: z.string(), name: z.string() }) satisfies z.ZodType<components['schemas']['NamedRefDto']>;

export const adminOrderSchema = z.object({
  order_id: z.string(),
  parent_order_id: z.string(),
  created_by: z.object({
    user_id: z.string(),
    email: z.string(),
    company_id: z.string(),
    company_name: z.string(),
  }) satisfies z.ZodType<components['schemas']['OrderCreatorDto']>,
  instrument: namedRefSchema,
  quantity: z.number(),
  direction: directionSchema,
  price: z.number().nullable(),
  tick_size: z.number(),
  rfq: z.boolean(),
  state: z.string(),
  iceberg: z.boolean(),
  residual: z.boolean(),
  broker: namedRefSchema,
  created_at: z.string(),
  updated_at: z.string(),
}) satisfies z.ZodType<AdminOrder>;

const adminOrderPageSchema = z.object({
  items: z.array(adminOrderSchema),
  total_items: z.number(),
}) satisfies z.ZodType<components['schemas']['Page_AdminOrderDto']>;

/** The panel's filters as sent: empty means 'all'; `from`/`until` are RFC 3339 instants. */
export type AdminOrderFilters = {
  page: number;
  size: number;
  company_id: string;
  instrument_id: string;
  states: string[];
  from: string;
  until: string;
};

export const adminOrdersQueryKey = ['admin', 'orders'] as const;

/** `GET /admin/orders` with only the filters that are set (states comma-separated). */
export function adminOrdersPath(f: AdminOrderFilters) {
  const q = new URLSearchParams({ page: String(f.page), size: String(f.size) });
  const optional: [keyof Query, string][] = [
    ['company_id', f.company_id],
    ['instrument_id', f.instrument_id],
    ['state', f.states.join(',')],
    ['from', f.from],
    ['until', f.until],
  ];
  for (const [key, value] of optional) if (value) q.set(key, value);
  return `/admin/orders?${q.toString()}`;
}

export function getAdminOrders(filters: AdminOrderFilters, signal?: AbortSignal) {
  return apiFetch(adminOrdersPath(filters), { schema: adminOrderPageSchema, signal });
}

export const adminOrdersQueryOptions = (filters: AdminOrderFilters) =>
  queryOptions({
    queryKey: [...adminOrdersQueryKey, filters],
    queryFn: ({ signal }) => getAdminOrders(filters, signal),
    placeholderData: keepPreviousData,
  });

/** One page of every company's child orders, newest first (venue admins and sales). */
export function useAdminOrders(filters: AdminOrderFilters) {
  return useQuery(adminOrdersQueryOptions(filters));
}
