import { z } from 'zod';
import { dec, decimalsOf, eq, parseDecimal, toFixed } from '@/lib/decimal';
import type { Instrument, Order } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';
import { minExecutionError, parseQuantity, priceError, priceValue, quantityError } from '@/lib/order-validation';
import { addIssues, INCOMPLETE } from '@/lib/validation';

// Spec section 5 (order form, child order): work the remaining quantity of a parent
// order at a price, or edit a working child order.

type ParentOrder = components['schemas']['ParentOrderDto'];

export type OrderForm = {
  parent_order_id: string;
  price: string;
  quantity: string;
  iceberg: boolean;
  residual: boolean;
  /** The broker chosen in the field; '' until one is, when the company's default (or the first eligible) is used. */
  broker_id: string;
  /** The minimum execution size (ADR 0041); '' for none. */
  min_execution: string;
};

/** What the rules read besides the fields: the instrument, the parents to work and, when editing, the order. */
export type OrderFormContext = { instrument: Instrument; parents: ParentOrder[]; original: Order | null };

/** The parent order chosen in the form (the first one until another is). */
export function chosenParent(parents: ParentOrder[], parentOrderId: string): ParentOrder | undefined {
  return parents.find((p) => p.parent_order_id === parentOrderId) ?? parents[0];
}

/** Spec section 5: what can be worked; editing adds the order's own quantity to the parent's remaining. */
export function availableQuantity(parent: ParentOrder | undefined, original: Order | null): number {
  return (parent?.quantities.tradable ?? 0) + (original?.quantity ?? 0);
}

/** The broker the order goes to: the one chosen, else the company's default when eligible, else the first eligible. */
export function effectiveBroker(chosen: string, parent: ParentOrder | undefined, defaultBroker: string | undefined): string {
  const eligible = parent?.eligible_brokers ?? [];
  return chosen || (eligible.some((b) => b.company_id === defaultBroker) ? defaultBroker : eligible[0]?.company_id) || '';
}

/** The price field's text for a decimal, with the tick's decimals. */
export function priceText(price: number | string, tickSize: number | string): string {
  return toFixed(dec(price), decimalsOf(dec(tickSize)));
}

export function orderFormDefaults({ instrument, parents, original }: OrderFormContext, price: string): OrderForm {
  const parent = parents[0];
  return {
    parent_order_id: parent?.parent_order_id ?? '',
    price: original ? priceText(original.price, instrument.tick_size) : price,
    quantity: String(original ? original.quantity : (parent?.quantities.tradable ?? '')),
    iceberg: original?.iceberg ?? false,
    residual: original?.residual ?? true,
    broker_id: original?.broker_id ?? '',
    // An order starts from its parent's size (an execution system's MinQty), if any.
    min_execution: String((original ? original.min_execution : parent?.min_execution) ?? ''),
  };
}

/** A take starts from the row's price, with what the row shows (within what the parent has left), residual No. */
export function takeDefaults(context: OrderFormContext, price: string, shown: number): OrderForm {
  const defaults = orderFormDefaults(context, price);
  const tradable = context.parents[0]?.quantities.tradable ?? 0;
  const quantity = shown >= context.instrument.min_quantity ? Math.min(shown, tradable) : tradable;
  // A take has no size of its own (the field is not shown); 'Leave passive' then works
  // the order with the parent's, as the server gives it.
  return { ...defaults, quantity: String(quantity), residual: false, min_execution: '' };
}

/** The POST /order-match-requests body of a valid form (the caller adds dry_run). */
export function takeRequestBody(f: OrderForm, parent: ParentOrder, brokerId: string): components['schemas']['MatchRequestRequest'] {
  return {
    requesting_parent_order_id: parent.parent_order_id,
    price: priceValue(parseDecimal(f.price)) ?? 0,
    quantity: parseQuantity(f.quantity) ?? 0,
    requesting_broker_id: brokerId,
    residual: f.residual,
  };
}

/**
 * The messages under the price and quantity fields. An empty price or quantity, no parent
 * order or no broker to send to have none: they only keep submit disabled (INCOMPLETE).
 */
export function orderErrors(f: OrderForm, { instrument, parents, original }: OrderFormContext): Partial<Record<keyof OrderForm | typeof INCOMPLETE, string>> {
  const e: Partial<Record<keyof OrderForm | typeof INCOMPLETE, string>> = {};
  const parent = chosenParent(parents, f.parent_order_id);
  if (!parent) e[INCOMPLETE] = 'No parent order';
  else if (!f.broker_id && (parent.eligible_brokers ?? []).length === 0) e[INCOMPLETE] = 'No broker';
  if (f.price.trim() === '') e[INCOMPLETE] = 'No price';
  else if (!keepsPrice(f, original)) e.price = priceError(f.price, { tick: instrument.tick_size, min: instrument.min_tick_price, max: instrument.max_tick_price }) ?? undefined;
  if (f.quantity.trim() === '') e[INCOMPLETE] = 'No quantity';
  else e.quantity = quantityError(f.quantity, { min: instrument.min_quantity, available: availableQuantity(parent, original) }) ?? undefined;
  // As the server: a size kept on an edit is checked again only when the quantity changes
  // (a remainder below its size keeps it).
  if (!original || minExecutionChanged(f, original) || parseQuantity(f.quantity) !== original.quantity) {
    e.min_execution = minExecutionError(f.min_execution, { min: instrument.min_quantity, quantity: parseQuantity(f.quantity) }) ?? undefined;
  }
  return e;
}

function minExecutionChanged(f: OrderForm, original: Order): boolean {
  return parseQuantity(f.min_execution) !== (original.min_execution ?? null);
}

/**
 * An edit that keeps the order's price: the band and tick were checked when it was set, so
 * an order the band has moved away from can still have its quantity or flags changed
 * (the server checks a price only when it changes).
 */
function keepsPrice(f: OrderForm, original: Order | null): boolean {
  const p = parseDecimal(f.price);
  return original !== null && p !== null && eq(p, dec(original.price));
}

export function orderFormSchema(context: OrderFormContext) {
  return z
    .object({
      parent_order_id: z.string(),
      price: z.string(),
      quantity: z.string(),
      iceberg: z.boolean(),
      residual: z.boolean(),
      broker_id: z.string(),
      min_execution: z.string(),
    })
    .superRefine((f, ctx) => addIssues(ctx, orderErrors(f, context))) satisfies z.ZodType<OrderForm>;
}

/** What an edit changes, keyed as editMessage reads it; prices compare as exact decimals. */
export function orderChanges(f: OrderForm, original: Order): Parameters<typeof editMessage>[0] {
  const changed: Parameters<typeof editMessage>[0] = {};
  const q = parseQuantity(f.quantity) ?? 0;
  const p = parseDecimal(f.price);
  if (q !== original.quantity) changed.quantity = q;
  if (!p || !eq(p, dec(original.price))) changed.price = f.price;
  if (f.residual !== original.residual) changed.residual = f.residual;
  if (f.iceberg !== original.iceberg) changed.iceberg = f.iceberg;
  if (minExecutionChanged(f, original)) changed.min_execution = parseQuantity(f.min_execution);
  return changed;
}

/** The PATCH /orders/{id} body of a valid form; the size only when it changed (null removes it). */
export function editOrderBody(f: OrderForm, original: Order): components['schemas']['EditOrderRequest'] {
  const body: components['schemas']['EditOrderRequest'] = { quantity: parseQuantity(f.quantity) ?? 0, limit_price: priceValue(parseDecimal(f.price)), residual: f.residual, iceberg: f.iceberg };
  if (minExecutionChanged(f, original)) body.min_execution = parseQuantity(f.min_execution);
  return body;
}

/** The POST /orders body of a valid form, for the chosen parent order and broker. */
export function createOrderBody(f: OrderForm, instrument: Instrument, parent: ParentOrder, brokerId: string): components['schemas']['CreateOrderRequest'] {
  return {
    parent_order_id: parent.parent_order_id,
    instrument_id: instrument.instrument_id,
    direction: parent.direction,
    quantity: parseQuantity(f.quantity) ?? 0,
    limit_price: priceValue(parseDecimal(f.price)),
    residual: f.residual,
    iceberg: f.iceberg,
    min_execution: parseQuantity(f.min_execution),
    broker_id: brokerId,
  };
}

const number = new Intl.NumberFormat('en-GB');

/** The success message of spec section 8 for what an edit changed. */
export function editMessage(changed: { quantity?: number; price?: string; residual?: boolean; iceberg?: boolean; min_execution?: number | null }): string {
  const keys = Object.keys(changed) as (keyof typeof changed)[];
  if (keys.length !== 1) return 'Changes applied to current order.';
  switch (keys[0]) {
    case 'quantity':
      return `Order quantity updated to ${number.format(changed.quantity ?? 0)}.`;
    case 'price':
      return `Limit price updated to ${changed.price}.`;
    case 'residual':
      return 'Residuals setting updated.';
    case 'min_execution':
      return changed.min_execution == null ? 'Minimum execution size removed.' : `Minimum execution size updated to ${number.format(changed.min_execution)}.`;
    default:
      return 'Visibility preferences updated.';
  }
}
