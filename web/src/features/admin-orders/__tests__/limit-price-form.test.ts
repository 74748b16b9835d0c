import { describe, expect, it } from 'vitest';
import { dec } from '@/lib/decimal';
import { INCOMPLETE } from '@/lib/validation';
import { limitPriceError, limitPriceErrors, limitPriceFormSchema, limitPriceRequest, limitPriceText } from '../lib/limit-price-form';
import { createdRange, DATE_RANGE_ERROR, ORDER_STATES } from '../lib/order-filters';

describe('the limit price rule (admin spec section 5)', () => {
  it('accepts a whole number of ticks, by exact decimals where floats go wrong', () => {
    // In floating point 0.3 % 0.1 and 0.035 % 0.005 are not 0; 1.1 / 0.1 is 11.000000000000002.
    expect(0.3 % 0.1).not.toBe(0);
    expect(limitPriceError('0.3', dec('0.1'))).toBeUndefined();
    expect(limitPriceError('0.035', dec('0.005'))).toBeUndefined();
    expect(limitPriceError('-0.035', dec('0.005'))).toBeUndefined();
    expect(limitPriceError('1.1', dec('0.1'))).toBeUndefined();
    expect(limitPriceError('5520', dec('1'))).toBeUndefined();
    expect(limitPriceError('0.0350000', dec('0.005'))).toBeUndefined();
  });

  it("answers 'Invalid value' off the tick, for what is no decimal, and for more digits than a JSON number carries", () => {
    expect(limitPriceError('0.033', dec('0.005'))).toBe('Invalid value');
    expect(limitPriceError('5520.5', dec('1'))).toBe('Invalid value');
    expect(limitPriceError('0.0051', dec('0.005'))).toBe('Invalid value');
    expect(limitPriceError('abc', dec('0.005'))).toBe('Invalid value');
    expect(limitPriceError('1,5', dec('0.005'))).toBe('Invalid value');
    expect(limitPriceError('0.12345678901234567890', dec('0.00000000000000000001'))).toBe('Invalid value');
  });

  it('keeps submit disabled without a message when empty or unchanged', () => {
    expect(limitPriceErrors({ limit_price: ' ' }, dec('0.005'), dec('-0.02'))).toEqual({ [INCOMPLETE]: 'No price' });
    expect(limitPriceErrors({ limit_price: '-0.020' }, dec('0.005'), dec('-0.02'))).toEqual({ [INCOMPLETE]: 'Unchanged' });
    expect(limitPriceErrors({ limit_price: '-0.025' }, dec('0.005'), dec('-0.02'))).toEqual({});
    const schema = limitPriceFormSchema({ tickSize: 0.005, price: -0.02 });
    expect(schema.safeParse({ limit_price: '-0.025' }).success).toBe(true);
    expect(schema.safeParse({ limit_price: '-0.026' }).error?.issues.map((i) => [i.path, i.message])).toEqual([[['limit_price'], 'Invalid value']]);
  });

  it('shows the order’s price with the tick’s decimals and sends exactly what was typed', () => {
    expect(limitPriceText(-0.02, 0.005)).toBe('-0.020');
    expect(limitPriceText(0.0525, 0.005)).toBe('0.0525');
    expect(limitPriceText(5520, 1)).toBe('5520');
    expect(limitPriceRequest({ limit_price: ' -0.035 ' })).toEqual({ limit_price: -0.035 });
    expect(JSON.stringify(limitPriceRequest({ limit_price: '0.0350' }))).toBe('{"limit_price":0.035}');
  });
});

describe('the order filters', () => {
  it('offers the 13 order states of admin spec section 4', () => {
    expect(ORDER_STATES).toHaveLength(13);
    expect(new Set(ORDER_STATES).size).toBe(13);
  });

  it('turns the date fields into a created-at range of whole local days', () => {
    expect(createdRange('', '')).toEqual({ from: '', until: '' });
    expect(createdRange('2026-11-24', '')).toEqual({ from: new Date(2026, 10, 24).toISOString(), until: '' });
    expect(createdRange('', '2026-11-24')).toEqual({ from: '', until: new Date(2026, 10, 25).toISOString() });
    expect(createdRange('2026-11-24', '2026-11-24')).toEqual({ from: new Date(2026, 10, 24).toISOString(), until: new Date(2026, 10, 25).toISOString() });
    expect(createdRange('2026-12-31', '2026-12-31').until).toBe(new Date(2027, 0, 1).toISOString());
    expect(createdRange('2026-11-24', '2026-11-23')).toEqual({ from: '', until: '', error: DATE_RANGE_ERROR });
  });
});
