import { describe, expect, it } from 'vitest';
import { toPlain } from '@/lib/decimal';
import { calculateBlock, CALCULATOR_DEFAULTS, formatNotional } from '../lib/block-calculator';
import { companyErrors, instrumentErrors, multiplierValue, nextDefaultBroker, otherSide, userErrors, type InstrumentForm } from '../lib/rules';

describe('block calculator (ADR 0007)', () => {
  it('shows the ±0.5 % band rounded inward, its ticks and the notional for the defaults', () => {
    const r = calculateBlock(CALCULATOR_DEFAULTS.average, CALCULATOR_DEFAULTS.size, CALCULATOR_DEFAULTS.tick);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect([toPlain(r.low), toPlain(r.high), r.ticks, r.levels]).toEqual(['94.26', '95.2', 94n, 95n]);
    expect(formatNotional(r.notional)).toBe('198,933.00');
  });

  it('rounds inward on coarse ticks and refuses what is not a block', () => {
    const r = calculateBlock('100', '10', '0.25');
    expect(r.ok && [toPlain(r.low), toPlain(r.high), r.ticks]).toEqual(['99.5', '100.5', 4n]);
    expect(calculateBlock('94.73', '2100', '10')).toMatchObject({ ok: false, field: 'band' });
    expect(calculateBlock('94.73', '2100', '5')).toMatchObject({ ok: true, ticks: 0n });
    expect(calculateBlock('0', '2100', '0.01')).toMatchObject({ ok: false, field: 'average' });
    expect(calculateBlock('94.73', '21.5', '0.01')).toMatchObject({ ok: false, field: 'size' });
    expect(calculateBlock('94.73', '2100', 'x')).toMatchObject({ ok: false, field: 'tick' });
  });
});

describe('company rules', () => {
  const ok = { name: 'Halyard', full_name: 'Ha', trade_confirmation_email: '', trade_confirmation_via_email_enabled: false, brokers: ['b'], default_broker: 'b', roles: [] };
  it('keeps the rule and shows the quoted message', () => {
    expect(companyErrors(ok)).toEqual({});
    expect(companyErrors({ ...ok, full_name: 'H' }).full_name).toBe('Full name must be at least 4 characters long');
    expect(companyErrors({ ...ok, name: 'H' }).name).toBe('Name must be at least 2 characters long');
    expect(companyErrors({ ...ok, default_broker: '' }).default_broker).toBe('Broker is required');
    expect(companyErrors({ ...ok, default_broker: '', roles: ['broker'] }).default_broker).toBeUndefined();
    expect(companyErrors({ ...ok, trade_confirmation_email: 'a@b' }).trade_confirmation_email).toBe('Email must be at least 5 characters long');
    expect(companyErrors({ ...ok, trade_confirmation_email: 'not-an-email' }).trade_confirmation_email).toBe('Please enter a valid email address');
  });

  it('resets the default broker to the first selected one when it is removed', () => {
    expect(nextDefaultBroker('b', ['a', 'b'])).toBe('b');
    expect(nextDefaultBroker('b', ['c', 'a'])).toBe('c');
    expect(nextDefaultBroker('b', [])).toBe('');
  });
});

describe('user rules', () => {
  const ok = { first_name: 'Tess', last_name: 'Trader', email: 'tess@acme.test', company_id: 'c', ems_trader_id: '', parent_order_limit_multiplier: '', roles: ['trader'], active: true, fix_integration: false };
  it('checks names, e-mail, multiplier and roles', () => {
    expect(userErrors(ok)).toMatchObject({});
    expect(Object.values(userErrors(ok)).filter(Boolean)).toEqual([]);
    expect(userErrors({ ...ok, email: 'a@b' }).email).toBe('Email must be at least 5 characters long');
    expect(userErrors({ ...ok, email: 'tess-at-acme' }).email).toBe('Please enter a valid email address');
    expect(userErrors({ ...ok, first_name: 'T' }).first_name).toBe('First name must be at least 2 characters long');
    expect(userErrors({ ...ok, parent_order_limit_multiplier: '0' }).parent_order_limit_multiplier).toBe('Must be greater than 0');
    expect(userErrors({ ...ok, parent_order_limit_multiplier: '3' }).parent_order_limit_multiplier).toBeUndefined();
    expect(multiplierValue('')).toBe(-1);
    expect(multiplierValue(' 4 ')).toBe(4);
  });
});

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
