import { describe, expect, it } from 'vitest';
import { toPlain } from '@/lib/decimal';
import { calculateBlock, CALCULATOR_DEFAULTS, formatNotional } from '../lib/block-calculator';

describe('block calculator (ADR 0007)', () => {
  it('shows the ±0.5 % band rounded inward, its ticks and the notional for the defaults', () => {
    const r = calculateBlock(CALCULATOR_DEFAULTS.average, CALCULATOR_DEFAULTS.size, CALCULATOR_DEFAULTS.tick);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect([toPlain(r.low), toPlain(r.high), r.ticks, r.levels]).toEqual(['94.26', '95.2', 94n, 95n]);
    expect(formatNotional(r.notional)).toBe('198,933.00');
  });

  it('prices spreads at zero or below: the band is ±0.5 % of the price’s size', () => {
    const r = calculateBlock('-12.5', '1000', '0.01');
    expect(r.ok && [toPlain(r.low), toPlain(r.high), r.ticks, formatNotional(r.notional)]).toEqual(['-12.56', '-12.44', 12n, '-12,500.00']);
    // A Euribor calendar near zero: the band is narrower than a tick, one price level.
    expect(calculateBlock('-0.025', '500', '0.005')).toMatchObject({ ok: true, ticks: 0n, levels: 1n });
    const zero = calculateBlock('0', '500', '0.005');
    expect(zero.ok && [toPlain(zero.low), toPlain(zero.high), zero.levels]).toEqual(['0', '0', 1n]);
  });

  it('rounds inward on coarse ticks and refuses what is not a block', () => {
    const r = calculateBlock('100', '10', '0.25');
    expect(r.ok && [toPlain(r.low), toPlain(r.high), r.ticks]).toEqual(['99.5', '100.5', 4n]);
    expect(calculateBlock('94.73', '2100', '10')).toMatchObject({ ok: false, field: 'band' });
    expect(calculateBlock('94.73', '2100', '5')).toMatchObject({ ok: true, ticks: 0n });
    expect(calculateBlock('abc', '2100', '0.01')).toMatchObject({ ok: false, field: 'average' });
    expect(calculateBlock('94.73', '21.5', '0.01')).toMatchObject({ ok: false, field: 'size' });
    expect(calculateBlock('94.73', '2100', 'x')).toMatchObject({ ok: false, field: 'tick' });
  });
});
