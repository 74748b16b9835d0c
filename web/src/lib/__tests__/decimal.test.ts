import { describe, expect, it } from 'vitest';
import {
  addTicks, ceilDiv, cmp, dec, decimalsOf, floorDiv, mul, onTick, parseDecimal, sub, ticksBetween, toFixed, toGrouped, toJsonNumber, toPlain,
} from '@/lib/decimal';

describe('decimal', () => {
  it('parses text and JSON numbers exactly and rejects the rest', () => {
    expect(toPlain(dec('94.730'))).toBe('94.73');
    expect(toPlain(dec(0.1))).toBe('0.1');
    expect(toPlain(dec(1e-7))).toBe('0.0000001');
    expect(toPlain(dec('-0.5'))).toBe('-0.5');
    for (const bad of ['', 'abc', '1.2.3', '.5', '1,5', NaN, null]) expect(parseDecimal(bad as never)).toBeNull();
  });

  it('adds ticks without float drift', () => {
    // 0.1 + 0.2 in floats is 0.30000000000000004
    expect(toPlain(addTicks(dec('0.1'), dec('0.1'), 2))).toBe('0.3');
    expect(toPlain(addTicks(dec('94.73'), dec('0.005'), -3))).toBe('94.715');
    expect(ticksBetween(dec('94.26'), dec('95.20'), dec('0.01'))).toBe(94);
  });

  it('checks the tick and divides with floor and ceiling', () => {
    expect(onTick(dec('94.735'), dec('0.005'))).toBe(true);
    expect(onTick(dec('94.736'), dec('0.005'))).toBe(false);
    expect(onTick(dec('1'), dec('0'))).toBe(false);
    expect(floorDiv(dec('95.20365'), dec('0.01'))).toBe(9520n);
    expect(ceilDiv(dec('94.25635'), dec('0.01'))).toBe(9426n);
    expect(floorDiv(dec('-0.015'), dec('0.01'))).toBe(-2n);
    expect(ceilDiv(dec('-0.015'), dec('0.01'))).toBe(-1n);
  });

  it('formats with fixed places and thousands groups', () => {
    expect(toFixed(dec('94.7'), 3)).toBe('94.700');
    expect(toFixed(dec('0.125'), 2)).toBe('0.13');
    expect(toFixed(dec('-0.125'), 2)).toBe('-0.13');
    expect(toGrouped(mul(dec('94.73'), dec('2100')), 2)).toBe('198,933.00');
    expect(toGrouped(dec('-1234567.5'), 1)).toBe('-1,234,567.5');
    expect(decimalsOf(dec('0.005'))).toBe(3);
    expect(cmp(sub(dec('1'), dec('0.99')), dec('0.01'))).toBe(0);
  });

  it('sends a decimal as the JSON number whose text is exactly the decimal, or not at all', () => {
    expect(JSON.stringify({ v: toJsonNumber(dec('0.005')) })).toBe('{"v":0.005}');
    expect(JSON.stringify({ v: toJsonNumber(dec('-0.040')) })).toBe('{"v":-0.04}');
    expect(JSON.stringify({ v: toJsonNumber(dec('0.0000001')) })).toBe('{"v":1e-7}');
    expect(JSON.stringify({ v: toJsonNumber(dec('123456789.123456')) })).toBe('{"v":123456789.123456}');
    // 0.1 + 0.2 in floating point is 0.30000000000000004; exact decimals never are.
    expect(toJsonNumber(addTicks(dec('0.1'), dec('0.1'), 2))).toBe(0.3);
    expect(toJsonNumber(dec('0.12345678901234567'))).toBeNull();
    expect(toJsonNumber(dec('12345678901234567'))).toBeNull();
  });
});
