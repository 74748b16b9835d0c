import { QueryClient } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import type { Order } from '@/lib/api/dto';
import { tradingKeys } from '@/lib/api/trading-keys';
import { applyOrderFrame, withOrder, withParentOrder, type OrderMessage } from '../api/order-frames';
import { allocationsQueryKey, type Allocation } from '../api/get-allocation';
import type { ParentOrder } from '../api/get-parent-orders';

const order = (id: string, state: string): Order => ({
  order_id: id,
  parent_order_id: 'p-1',
  instrument_id: 'i-1',
  state,
  price: 94.75,
  quantity: 1000,
  direction: 'SELL',
  iceberg: false,
  residual: true,
  min_execution: null,
  broker_id: 'b-1',
  matchable: true,
  waiting_for_open: false,
  created_by: 'u-1',
  created_at: '2026-03-03T10:00:00Z',
  updated_at: '2026-03-03T10:00:00Z',
});

const parent = (id: string, state: string, working: number): ParentOrder => ({
  parent_order_id: id,
  instrument_id: 'i-1',
  direction: 'SELL',
  quantity: 2000,
  quantities: { tradable: 2000 - working, working, matched: 0 },
  eligible_brokers: [{ company_id: 'b-1', name: 'Baltic' }],
  broker_instructions: null,
  min_execution: null,
  state,
  created_by: 'u-1',
  created_at: '2026-03-03T10:00:00Z',
  updated_at: '2026-03-03T10:00:00Z',
});

describe('order frames', () => {
  it('write a child order in: replaced, first when new, gone once it ends', () => {
    const list = [order('o-2', 'WORKING'), order('o-1', 'WORKING')];
    expect(withOrder(list, order('o-1', 'MATCHED'))?.map((o) => [o.order_id, o.state])).toEqual([['o-2', 'WORKING'], ['o-1', 'MATCHED']]);
    expect(withOrder(list, order('o-3', 'WORKING'))?.map((o) => o.order_id)).toEqual(['o-3', 'o-2', 'o-1']);
    expect(withOrder(list, order('o-2', 'CANCELLED'))?.map((o) => o.order_id)).toEqual(['o-1']);
    expect(withOrder(list, order('o-9', 'EXPIRED')), 'an ended order never listed').toBe(list);
    expect(withOrder(undefined, order('o-1', 'WORKING')), 'nothing read yet: the screen reads it').toBeUndefined();
  });

  it('write a parent in with its quantities; a cancelled one leaves the list', () => {
    const list = [parent('p-1', 'ACTIVE', 0)];
    expect(withParentOrder(list, parent('p-1', 'ACTIVE', 1000))?.[0]?.quantities).toEqual({ tradable: 1000, working: 1000, matched: 0 });
    expect(withParentOrder(list, parent('p-2', 'ACTIVE', 0))?.map((p) => p.parent_order_id)).toEqual(['p-2', 'p-1']);
    expect(withParentOrder(list, parent('p-1', 'FILLED', 0))?.[0]?.state).toBe('FILLED');
    expect(withParentOrder(list, parent('p-1', 'CANCELLED', 0))).toEqual([]);
  });

  it('apply frames with no read of either list; an unreadable frame or a read under way reads again', async () => {
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    let reads = 0;
    const read = <T,>(data: T) => client.fetchQuery({ queryKey: tradingKeys.orders, queryFn: () => (reads++, data), staleTime: Infinity });
    await read([order('o-1', 'WORKING')]);
    client.setQueryData(tradingKeys.parentOrders, [parent('p-1', 'ACTIVE', 1000)]);
    const frames: OrderMessage[] = [
      { type: 'ORDER_UPDATED', seq: 1, ...order('o-2', 'WORKING') },
      { type: 'ORDER_UPDATED', seq: 2, ...order('o-1', 'CANCELLED') },
      { type: 'PARENT_ORDER_UPDATED', seq: 3, ...parent('p-1', 'ACTIVE', 1000) },
    ];
    for (const f of frames) applyOrderFrame(client, f);
    expect(client.getQueryData<Order[]>(tradingKeys.orders)?.map((o) => o.order_id)).toEqual(['o-2']);
    expect(client.getQueryData<ParentOrder[]>(tradingKeys.parentOrders)?.[0]?.quantities.working).toBe(1000);
    expect(reads).toBe(1);

    applyOrderFrame(client, { type: 'ORDER_UPDATED', seq: 4, order_id: 'o-3' } as unknown as OrderMessage);
    expect(client.getQueryState(tradingKeys.orders)?.isInvalidated, 'a frame it cannot read').toBe(true);
  });

  it("write an allocation in as its broker answers it, with no read; an unreadable one reads the allocations again", () => {
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    const allocation = (order: string, ack: Allocation['broker_ack']): Allocation => ({
      order_id: order,
      version: 2,
      lines: [{ account_id: 'a-1', code: 'HAL-1', name: 'Halyard one', quantity: 1000 }],
      give_up_broker: null,
      broker_ack: ack,
      broker_ack_text: ack === 'REJECTED' ? 'Unknown account' : null,
      updated_at: '2026-03-03T10:00:00Z',
    });
    client.setQueryData(allocationsQueryKey, [allocation('o-1', 'PENDING')]);
    applyOrderFrame(client, { type: 'ALLOCATION_UPDATED', seq: 1, ...allocation('o-1', 'ACCEPTED') });
    applyOrderFrame(client, { type: 'ALLOCATION_UPDATED', seq: 2, ...allocation('o-2', 'REJECTED') });
    expect(client.getQueryData<Allocation[]>(allocationsQueryKey)?.map((a) => [a.order_id, a.broker_ack])).toEqual([
      ['o-2', 'REJECTED'],
      ['o-1', 'ACCEPTED'],
    ]);
    expect(client.getQueryState(allocationsQueryKey)?.isInvalidated).toBe(false);
    applyOrderFrame(client, { type: 'ALLOCATION_UPDATED', seq: 3, order_id: 'o-3' } as unknown as OrderMessage);
    expect(client.getQueryState(allocationsQueryKey)?.isInvalidated, 'a frame it cannot read').toBe(true);
  });
});
