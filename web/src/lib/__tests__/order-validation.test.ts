import { describe, expect, it } from 'vitest';
import { dec } from '@/lib/decimal';
import { priceError, priceValue, quantityError } from '@/lib/order-validation';

describe('child order rules (spec section 5)', () => {
  const band = { tick: 0.005, min: -0.04, max: -0.015 };

  it.each([
    ['', null],
    ['-0.040', null],
    ['-0.015', null],
    ['-0.025', null],
    ['-0.027', 'Invalid tick value'],
    ['abc', 'Invalid tick value'],
    ['-0.045', 'Must be between electronic price'],
    ['-0.010', 'Must be between electronic price'],
  ])('price %j → %j', (text, message) => {
    expect(priceError(text, band)).toBe(message);
  });

  it.each([
    ['', null],
    ['500', null],
    ['3000', null],
    ['499', 'Min block size: 500'],
    ['1.5', 'Min block size: 500'],
    ['3001', 'Exceeds available quantity'],
  ])('quantity %j → %j', (text, message) => {
    expect(quantityError(text, { min: 500, available: 3000 })).toBe(message);
  });

  it('sends the exact decimal as a JSON number', () => {
    expect(JSON.stringify({ p: priceValue(dec('-0.025')) })).toBe('{"p":-0.025}');
    expect(JSON.stringify({ p: priceValue(dec('5512')) })).toBe('{"p":5512}');
    expect(priceValue(null)).toBeUndefined();
  });
});
