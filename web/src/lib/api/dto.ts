import { z } from 'zod';
import type { components } from './schema';

// zod schemas of the DTOs that several endpoints return. Each is checked against
// the generated OpenAPI type (`satisfies z.ZodType<…>`), so a server change that
// the schema does not follow is a compile error.

type Schemas = components['schemas'];
/**
 * The server sends `exchange_tick_size` as `Option<Decimal>` (null when never set) but its
 * OpenAPI document declares a plain number, so that one field is widened here.
 */
export type Instrument = Omit<Schemas['InstrumentDto'], 'exchange_tick_size'> & { exchange_tick_size: number | null };
export type CompanyRef = Schemas['CompanyRefDto'];
export type Direction = Schemas['Direction'];
export type Role = Schemas['Role'];

export const directionSchema = z.enum(['BUY', 'SELL']) satisfies z.ZodType<Direction>;
export const roleSchema = z.enum(['trader', 'upstairs-admin', 'company-admin', 'upstairs-sales', 'sandbox']) satisfies z.ZodType<Role>;

export const companyRefSchema = z.object({ company_id: z.string(), name: z.string() }) satisfies z.ZodType<CompanyRef>;

export const instrumentSchema = z.object({
  instrument_id: z.string(),
  name: z.string(),
  term: z.string(),
  description: z.string(),
  country: z.string(),
  currency: z.string(),
  exchange: z.string(),
  exchange_id: z.string(),
  exchange_iso_code: z.string(),
  exchange_instrument_id: z.string().nullable(),
  bbg_code: z.string().nullable(),
  tick_size: z.number(),
  exchange_tick_size: z.number().nullable(),
  min_quantity: z.number(),
  min_tick_price: z.number(),
  max_tick_price: z.number(),
  active: z.boolean(),
  is_sandbox: z.boolean(),
  reversed_spread: z.boolean(),
  band_seen_at: z.string(),
  prices_stale_after: z.number().nullable(),
  prices_stale: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
}) satisfies z.ZodType<Instrument>;

/** A page of a list (`items`, `total_items`). */
export const pageSchema = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), total_items: z.number() });

export type Order = Schemas['OrderDto'];

/** A child order: listed under its parent (parent-orders) and placed or edited from a book (order-book). */
export const orderSchema = z.object({
  order_id: z.string(),
  parent_order_id: z.string(),
  instrument_id: z.string(),
  state: z.string(),
  price: z.number(),
  quantity: z.number(),
  direction: directionSchema,
  iceberg: z.boolean(),
  residual: z.boolean(),
  min_execution: z.number().nullable(),
  broker_id: z.string(),
  matchable: z.boolean(),
  waiting_for_open: z.boolean(),
  created_by: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
}) satisfies z.ZodType<Order>;

export type MatchRequest = Schemas['MatchRequestDto'];
export type MatchRequestState = Schemas['MatchRequestState'];

export const matchRequestStates = [
  'PENDING', 'ACCEPTED', 'PARTIAL_BROKER_ACCEPTED', 'BROKER_ACCEPTED', 'PARTIAL_BROKER_FILLED', 'CANCELLED',
  'SYSTEM_CANCELLED_PRICE_OUT_OF_TICK', 'REJECTED', 'TIMED_OUT', 'BROKER_FILLED', 'BREAKDOWN',
] as const satisfies readonly MatchRequestState[];

/** A match request from the caller's side: their direction, their own child order. */
export const matchRequestSchema = z.object({
  order_match_request_id: z.string(),
  instrument_id: z.string(),
  order_id: z.string(),
  role: z.enum(['REQUESTER', 'RESPONDER']),
  direction: directionSchema,
  price: z.number(),
  quantity: z.number(),
  iceberg: z.boolean(),
  state: z.enum(matchRequestStates),
  created_at: z.string(),
  expired_at: z.string(),
  updated_at: z.string(),
  auto_answer_at: z.string().nullable(),
  auto_accept: z.boolean().nullable(),
  answered_automatically: z.boolean(),
}) satisfies z.ZodType<MatchRequest>;

export type AllocationLine = Schemas['AllocationLineDto'];

/** One account's part of a trade (ADR 0045): in a trader's allocation and on a billing item. */
export const allocationLineSchema = z.object({
  account_id: z.string(),
  code: z.string(),
  name: z.string(),
  quantity: z.number().int(),
}) satisfies z.ZodType<AllocationLine>;
