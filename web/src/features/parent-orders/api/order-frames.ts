import type { QueryClient } from '@tanstack/react-query';
import { orderSchema, type Order } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';
import { withRow, writeList } from '@/lib/api/list-frames';
import { tradingKeys } from '@/lib/api/trading-keys';
import { LISTED_STATES } from '@/lib/trading-format';
import { allocationSchema, allocationsQueryKey, withAllocation, type Allocation } from './get-allocation';
import { parentOrderSchema, type ParentOrder } from './get-parent-orders';

export type OrderMessage = components['schemas']['OrderMessage'];

/** Parent order states the list of spec section 4 shows (`GET /parent-orders?state=ACTIVE,FILLED`). */
const LISTED_PARENT_STATES: readonly string[] = ['ACTIVE', 'FILLED'];

/** The child order list (`GET /orders` of the listed states) with a pushed order written in. */
export function withOrder(list: Order[] | undefined, order: Order): Order[] | undefined {
  return withRow(list, order, (o) => o.order_id, (LISTED_STATES as readonly string[]).includes(order.state));
}

/** The parent order list with a pushed parent written in. */
export function withParentOrder(list: ParentOrder[] | undefined, parent: ParentOrder): ParentOrder[] | undefined {
  return withRow(list, parent, (p) => p.parent_order_id, LISTED_PARENT_STATES.includes(parent.state));
}

/**
 * Applies one `/user/topic/orders` frame (ADR 0029): it carries the order, parent or
 * allocation as the lists show it, written in without a read of any list.
 */
export function applyOrderFrame(queryClient: QueryClient, message: OrderMessage) {
  if (message.type === 'ORDER_UPDATED') {
    const order = orderSchema.safeParse(message);
    writeList<Order>(queryClient, tradingKeys.orders, order.success ? (list) => withOrder(list, order.data) : null);
  } else if (message.type === 'ALLOCATION_UPDATED') {
    const allocation = allocationSchema.safeParse(message);
    writeList<Allocation>(queryClient, allocationsQueryKey, allocation.success ? (list) => withAllocation(list, allocation.data) : null);
  } else {
    const parent = parentOrderSchema.safeParse(message);
    writeList<ParentOrder>(queryClient, tradingKeys.parentOrders, parent.success ? (list) => withParentOrder(list, parent.data) : null);
  }
}
