import { describe, expect, it } from 'vitest';
import type { Instrument, Order } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';
import { INCOMPLETE } from '@/lib/validation';
import { createOrderBody, editMessage, editOrderBody, effectiveBroker, orderChanges, orderErrors, orderFormDefaults, takeDefaults, type OrderForm, type OrderFormContext } from '../lib/order-form';

type ParentOrder = components['schemas']['ParentOrderDto'];

const euribor = { instrument_id: 'i-1', name: 'Euribor', tick_size: 0.005, min_quantity: 500, min_tick_price: -0.04, max_tick_price: -0.015 } as Instrument;
const parent = {
  parent_order_id: 'p-1', instrument_id: 'i-1', direction: 'BUY', quantity: 3000,
  quantities: { tradable: 3000, working: 0, matched: 0 }, eligible_brokers: [{ company_id: 'b-1', name: 'Northgate' }, { company_id: 'b-2', name: 'Southgate' }],
} as ParentOrder;
const order = { order_id: 'o-9', parent_order_id: 'p-1', price: -0.03, quantity: 1000, iceberg: false, residual: false, broker_id: 'b-1' } as Order;

const work: OrderFormContext = { instrument: euribor, parents: [parent], original: null };
const editing: OrderFormContext = { instrument: euribor, parents: [{ ...parent, quantities: { tradable: 2000, working: 1000, matched: 0 } }], original: order };

describe('child order rules', () => {
  const errors = (f: Partial<OrderForm>, context = work) =>
    Object.fromEntries(Object.entries(orderErrors({ ...orderFormDefaults(context, '-0.025'), ...f }, context)).filter(([, v]) => v));

  it('starts from the row price and the remaining quantity, or from the order', () => {
    expect(orderFormDefaults(work, '-0.025')).toEqual({ parent_order_id: 'p-1', price: '-0.025', quantity: '3000', iceberg: false, residual: true, broker_id: '', min_execution: '' });
    expect(orderFormDefaults(editing, '')).toEqual({ parent_order_id: 'p-1', price: '-0.030', quantity: '1000', iceberg: false, residual: false, broker_id: 'b-1', min_execution: '' });
  });

  it('gives the spec texts, and none for an empty price or quantity, which only keep submit disabled', () => {
    expect(errors({})).toEqual({});
    expect(errors({ price: '-0.027' })).toEqual({ price: 'Invalid tick value' });
    expect(errors({ price: '-0.010' })).toEqual({ price: 'Must be between electronic price' });
    expect(errors({ price: '' })).toEqual({ [INCOMPLETE]: 'No price' });
    expect(errors({ quantity: '499' })).toEqual({ quantity: 'Min block size: 500' });
    expect(errors({ quantity: '3001' })).toEqual({ quantity: 'Exceeds available quantity' });
    expect(errors({ quantity: ' ' })).toEqual({ [INCOMPLETE]: 'No quantity' });
    // Editing: the remaining quantity plus the order's own.
    expect(errors({ quantity: '3000' }, editing)).toEqual({});
    expect(errors({ quantity: '3001' }, editing)).toEqual({ quantity: 'Exceeds available quantity' });
    // No broker to send to.
    expect(errors({}, { ...work, parents: [{ ...parent, eligible_brokers: [] }] })).toEqual({ [INCOMPLETE]: 'No broker' });
  });

  it('sends to the chosen broker, else the eligible default, else the first eligible', () => {
    expect(effectiveBroker('b-2', parent, 'b-1')).toBe('b-2');
    expect(effectiveBroker('', parent, 'b-2')).toBe('b-2');
    expect(effectiveBroker('', parent, 'b-3')).toBe('b-1');
    expect(effectiveBroker('', { ...parent, eligible_brokers: [] }, 'b-3')).toBe('');
  });

  it('compares prices as exact decimals and sends them exactly', () => {
    const f = orderFormDefaults(editing, '');
    expect(orderChanges({ ...f, price: '-0.03' }, order)).toEqual({});
    expect(orderChanges({ ...f, price: '-0.035' }, order)).toEqual({ price: '-0.035' });
    expect(editMessage(orderChanges({ ...f, quantity: '1500' }, order))).toBe('Order quantity updated to 1,500.');
    expect(editMessage(orderChanges({ ...f, quantity: '1500', iceberg: true }, order))).toBe('Changes applied to current order.');
    expect(createOrderBody({ ...orderFormDefaults(work, '-0.020'), quantity: '2,000' }, euribor, parent, 'b-1')).toEqual({
      parent_order_id: 'p-1', instrument_id: 'i-1', direction: 'BUY', quantity: 2000, limit_price: -0.02, residual: true, iceberg: false, min_execution: null, broker_id: 'b-1',
    });
  });

  it('takes a minimum execution size from the block to the quantity, starting from the parent\'s (ADR 0041)', () => {
    expect(errors({ min_execution: '' })).toEqual({});
    expect(errors({ min_execution: '499' })).toEqual({ min_execution: 'Min block size: 500' });
    expect(errors({ min_execution: '1.5' })).toEqual({ min_execution: 'Min block size: 500' });
    expect(errors({ min_execution: '3001' })).toEqual({ min_execution: 'Must not exceed the quantity' });
    expect(errors({ quantity: '1000', min_execution: '1,000' })).toEqual({});
    const sized: OrderFormContext = { ...work, parents: [{ ...parent, min_execution: 1500 }] };
    expect(orderFormDefaults(sized, '-0.025').min_execution).toBe('1500');
    // A take has no size of its own: the field is not shown, and nothing holds it back.
    expect(takeDefaults(sized, '-0.025', 500).min_execution).toBe('');
    expect(createOrderBody({ ...orderFormDefaults(sized, '-0.020'), min_execution: '2,000' }, euribor, parent, 'b-1').min_execution).toBe(2000);
  });

  it('edits a size only when it changes, and keeps a remainder\'s size below its quantity', () => {
    // A remainder of 1000 left with its size of 2000: its price changes without a word.
    const remainder: OrderFormContext = { ...editing, original: { ...order, min_execution: 2000 } };
    const f = orderFormDefaults(remainder, '');
    expect(f.min_execution).toBe('2000');
    expect(errors({ price: '-0.025' }, remainder)).toEqual({});
    expect(editOrderBody({ ...f, price: '-0.025' }, remainder.original as Order)).not.toHaveProperty('min_execution');
    // Its quantity changed: the size is checked again.
    expect(errors({ quantity: '1500' }, remainder)).toEqual({ min_execution: 'Must not exceed the quantity' });
    const removed = { ...f, min_execution: '' };
    expect(editOrderBody(removed, remainder.original as Order).min_execution).toBeNull();
    expect(editMessage(orderChanges(removed, remainder.original as Order))).toBe('Minimum execution size removed.');
    expect(editMessage(orderChanges({ ...f, min_execution: '1000' }, remainder.original as Order))).toBe('Minimum execution size updated to 1,000.');
  });
});
