import { describe, expect, it } from 'vitest';
import type { Instrument } from '@/lib/api/dto';
import { instrumentErrors, instrumentRequest, otherSide, toInstrumentForm, type InstrumentForm } from '../lib/instrument-form';

describe('instrument rules', () => {
  const ok: InstrumentForm = {
    name: 'Euribor', term: 'Dec26-Mar27', description: '', country: '', currency: 'EUR', exchange_id: 'I', exchange: '', exchange_iso_code: '',
    exchange_instrument_id: '', bbg_code: '', tick_size: '0.005', exchange_tick_size: '', min_quantity: '500', min_tick_price: '-0.040', max_tick_price: '-0.015',
    prices_stale_after: '', active: true, is_sandbox: false, reversed_spread: false,
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

  it('takes an empty exchange tick size (none), and checks a typed one', () => {
    expect(errors({ exchange_tick_size: '' })).toEqual({});
    expect(errors({ exchange_tick_size: '   ' })).toEqual({});
    expect(errors({ exchange_tick_size: '0.0025' })).toEqual({});
    expect(errors({ exchange_tick_size: 'null' })).toEqual({ exchange_tick_size: 'Tick size must be greater than 0' });
    expect(errors({ exchange_tick_size: '0' })).toEqual({ exchange_tick_size: 'Tick size must be greater than 0' });
    // More digits than a JSON number carries exactly: refused rather than rounded.
    expect(errors({ exchange_tick_size: '0.12345678901234567' })).toEqual({ exchange_tick_size: 'Invalid value' });
  });

  it('takes an empty stale-price limit (no guard), or whole seconds from 1 to a day', () => {
    for (const fine of ['', ' ', '1', '30', '86400']) expect(errors({ prices_stale_after: fine })).toEqual({});
    for (const bad of ['0', '86401', '-5', '1.5', '30s', '1e3']) {
      expect(errors({ prices_stale_after: bad }), bad).toEqual({ prices_stale_after: 'Must be between 1 and 86400 seconds' });
    }
  });
});

describe('instrument form values and request', () => {
  const instrument: Instrument = {
    instrument_id: 'i-1', name: 'Euribor 3M Dec26-Mar27', term: 'Dec26-Mar27', description: '', country: 'EU', currency: 'EUR', exchange: '', exchange_id: 'I',
    exchange_iso_code: '', exchange_instrument_id: null, bbg_code: null, tick_size: 0.005, exchange_tick_size: null, min_quantity: 500,
    min_tick_price: -0.04, max_tick_price: -0.015, active: true, is_sandbox: false, reversed_spread: false, created_at: '', updated_at: '',
    band_seen_at: '', prices_stale_after: null, prices_stale: false,
  };

  it('shows an instrument without an exchange tick size as an empty field, never "null"', () => {
    const form = toInstrumentForm(instrument);
    expect(form.exchange_tick_size).toBe('');
    expect(instrumentErrors(form)).toEqual(expect.not.objectContaining({ exchange_tick_size: expect.any(String) }));
    expect(toInstrumentForm({ ...instrument, exchange_tick_size: 0.0025 }).exchange_tick_size).toBe('0.0025');
    expect(toInstrumentForm({ ...instrument, tick_size: 1e-7, exchange_tick_size: 1e-7 })).toMatchObject({ tick_size: '0.0000001', exchange_tick_size: '0.0000001' });
    expect(toInstrumentForm(instrument)).toMatchObject({ tick_size: '0.005', min_tick_price: '-0.040', max_tick_price: '-0.015' });
  });

  it('sends an empty exchange tick size as null and a typed one as its exact decimal', () => {
    const form = toInstrumentForm(instrument);
    expect(instrumentRequest(form).exchange_tick_size).toBeNull();
    expect(instrumentRequest({ ...form, exchange_tick_size: '  ' }).exchange_tick_size).toBeNull();
    const typed = instrumentRequest({ ...form, exchange_tick_size: ' 0.0025 ', min_tick_price: '-0.030', max_tick_price: '0.020' });
    // The JSON text is the typed decimal itself: no float artefacts, no trailing zeros to round.
    expect(JSON.stringify(typed)).toContain('"tick_size":0.005,"exchange_tick_size":0.0025');
    expect(JSON.stringify(typed)).toContain('"min_tick_price":-0.03,"max_tick_price":0.02');
    expect(instrumentRequest({ ...form, tick_size: '0.1', min_tick_price: '0.3', max_tick_price: '1.3' })).toMatchObject({ tick_size: 0.1, min_tick_price: 0.3, max_tick_price: 1.3 });
  });

  it('shows and sends the stale-price limit: empty is null (no guard)', () => {
    expect(toInstrumentForm(instrument).prices_stale_after).toBe('');
    expect(instrumentRequest(toInstrumentForm(instrument)).prices_stale_after).toBeNull();
    const guarded = toInstrumentForm({ ...instrument, prices_stale_after: 30 });
    expect(guarded.prices_stale_after).toBe('30');
    expect(instrumentRequest({ ...guarded, prices_stale_after: ' 45 ' }).prices_stale_after).toBe(45);
  });
});
