import { z } from 'zod';
import type { components } from '@/lib/api/schema';

export type Instrument = components['schemas']['InstrumentDto'];
export type ParentOrder = components['schemas']['ParentOrderDto'];
export type Order = components['schemas']['OrderDto'];
export type Book = components['schemas']['BookDto'];
export type Level = components['schemas']['LevelDto'];
export type PlatformStatus = components['schemas']['PlatformStatusDto'];
export type Direction = components['schemas']['DirectionDto'];
export type CompanyRef = components['schemas']['CompanyRefDto'];
/** Best prices are null while the book has no order on that side. */
export type MarketData = { best_buy_price: number | null; best_sell_price: number | null; min_tick_price: number; max_tick_price: number };

// Checked at runtime on the fields the screens use; the rest passes through.
const id = z.union([z.string(), z.number()]).transform(String);
const price = z.number();
const companyRef = z.looseObject({ company_id: id, name: z.string() });
const direction = z.enum(['BUY', 'SELL']);

export const instrumentSchema = z
  .looseObject({
    instrument_id: id,
    name: z.string(),
    term: z.string().default(''),
    tick_size: price,
    min_quantity: z.number(),
    min_tick_price: price,
    max_tick_price: price,
    reversed_spread: z.boolean().default(false),
  })
  .transform((i) => i as unknown as Instrument);

export const parentOrderSchema = z
  .looseObject({
    parent_order_id: id,
    instrument_id: id,
    direction,
    quantity: z.number(),
    quantities: z.object({ tradable: z.number(), working: z.number(), matched: z.number() }),
    eligible_brokers: z.array(companyRef).default([]),
    broker_instructions: z.string().nullish().transform((v) => v ?? null),
    state: z.string(),
    created_at: z.string(),
  })
  .transform((p) => p as unknown as ParentOrder);

export const orderSchema = z
  .looseObject({
    order_id: id,
    parent_order_id: id,
    instrument_id: id,
    state: z.string(),
    price,
    quantity: z.number(),
    direction,
    iceberg: z.boolean(),
    residual: z.boolean(),
    broker_id: id,
    matchable: z.boolean().default(true),
    created_at: z.string(),
  })
  .transform((o) => o as unknown as Order);

const level = z.looseObject({
  price,
  buy_quantity: z.number(),
  sell_quantity: z.number(),
  own_buy_quantity: z.number().default(0),
  own_sell_quantity: z.number().default(0),
});

export const bookSchema = z
  .looseObject({ instrument_id: id, min_tick_price: price, max_tick_price: price, levels: z.array(level) })
  .transform((b) => b as unknown as Book);

export const marketDataSchema = z.looseObject({
  best_buy_price: price.nullable(),
  best_sell_price: price.nullable(),
  min_tick_price: price,
  max_tick_price: price,
});

export const platformStatusSchema = z
  .looseObject({
    open: z.boolean(),
    parent_orders_open: z.boolean(),
    closing_soon: z.boolean(),
    always_open: z.boolean().default(false),
    open_time: z.string(),
    close_time: z.string(),
    parent_orders_from: z.string().default('05:30'),
    time_zone: z.string(),
    next_open: z.string().nullable(),
    next_close: z.string().nullable(),
  })
  .transform((s) => s as unknown as PlatformStatus);

export const companySchema = z.looseObject({
  company_id: id,
  default_broker: companyRef.nullish().transform((v) => v ?? null),
  brokers: z.array(companyRef).default([]),
});
