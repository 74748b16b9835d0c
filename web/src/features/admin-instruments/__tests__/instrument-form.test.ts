import { describe, expect, it } from 'vitest';
import { instrumentErrors, otherSide, type InstrumentForm } from '../lib/instrument-form';

describe('instrument rules', () => {
  const ok: InstrumentForm = {
    name: 'Euribor', term: 'Dec26-Mar27', description: '', country: '', currency: 'EUR', exchange_id: 'I', exchange: '', exchange_iso_code: '',
    exchange_instrument_id: '', bbg_code: '', tick_size: '0.005', exchange_tick_size: '', min_quantity: '500', min_tick_price: '-0.040', max_tick_price: '-0.015',
    active: true, is_sandbox: false, reversed_spread: false,
  };
  const errors = (f: Partial<InstrumentForm>) => Object.fromEntries(Object.entries(instrumentErrors({ ...ok, ...f })).filter(([, v]) => v));
  it('requires the minimum block and prices on the tick, offer above bid', () => {
    expect(errors({})).toEqual({});
    expect(errors({ min_quantity: '' })).toEqual({ min_quantity: 'Minimum block size is required' });
    expect(errors({ min_tick_price: '-0.041' })).toEqual({ min_tick_price: 'Invalid value' });
    expect(errors({ max_tick_price: 'abc' })).toEqual({ max_tick_price: 'Invalid value' });
    expect(errors({ max_tick_price: '-0.040' })).toEqual({ max_tick_price: 'Best offer must be above best bid' });
  });

  it('sets the other side 10 ticks away, exactly', () => {
    expect(otherSide('min_tick_price', '94.7', '0.01')).toBe('94.80');
    expect(otherSide('max_tick_price', '-0.015', '0.005')).toBe('-0.065');
    expect(otherSide('min_tick_price', '0.1', '0.1')).toBe('1.1');
    expect(otherSide('min_tick_price', '94.705', '0.01')).toBeNull();
  });
});
