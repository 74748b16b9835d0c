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
