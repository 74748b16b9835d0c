import { describe, expect, it } from 'vitest';
import { buildLadder, formatK, formatPrice, legLabels, NO_PRICE, stateLabel, truncateName } from '@/lib/trading-format';

describe('ladder', () => {
  it('runs from two ticks above the best offer to two ticks below the best bid, highest first', () => {
    const rows = buildLadder({ min_tick_price: -0.04, max_tick_price: -0.015, levels: [] }, 0.005);
    expect(rows.map((r) => r.text)).toEqual([
      '-0.005', '-0.010', '-0.015', '-0.020', '-0.025', '-0.030', '-0.035', '-0.040', '-0.045', '-0.050',
    ]);
    expect(rows.map((r) => r.tradable)).toEqual([false, false, true, true, true, true, true, true, false, false]);
  });

  it('puts quantities and own shares on their rows and keeps levels left outside the band', () => {
    const rows = buildLadder(
      {
        min_tick_price: 0.42,
        max_tick_price: 0.44,
        levels: [
          { price: 0.43, buy_quantity: 3000, sell_quantity: 0, own_buy_quantity: 1000, own_sell_quantity: 0 },
          { price: 0.5, buy_quantity: 0, sell_quantity: 1000, own_buy_quantity: 0, own_sell_quantity: 0 },
        ],
      },
      0.01,
    );
    expect(rows[0]).toMatchObject({ text: '0.50', sell: 1000, tradable: false });
    expect(rows.find((r) => r.text === '0.43')).toMatchObject({ buy: 3000, ownBuy: 1000, tradable: true });
    expect(rows.map((r) => r.text)).toEqual(['0.50', '0.46', '0.45', '0.44', '0.43', '0.42', '0.41', '0.40']);
  });

  it('marks the ticks left out between rows far apart, and keeps a level off the tick (not tradable)', () => {
    const rows = buildLadder(
      {
        min_tick_price: 0.42,
        max_tick_price: 0.44,
        levels: [
          { price: 0.5, buy_quantity: 0, sell_quantity: 1000, own_buy_quantity: 0, own_sell_quantity: 0 },
          { price: 0.4325, buy_quantity: 500, sell_quantity: 0, own_buy_quantity: 500, own_sell_quantity: 0 },
          { price: 0.3, buy_quantity: 700, sell_quantity: 0, own_buy_quantity: 0, own_sell_quantity: 0 },
        ],
      },
      0.01,
    );
    expect(rows.map((r) => [r.text, r.gapAbove])).toEqual([
      ['0.50', null], ['0.46', 3], ['0.45', null], ['0.44', null], ['0.4325', null], ['0.43', null], ['0.42', null], ['0.41', null], ['0.40', null], ['0.30', 9],
    ]);
    expect(rows.find((r) => r.text === '0.4325')).toMatchObject({ buy: 500, ownBuy: 500, tradable: false });
    expect(buildLadder({ min_tick_price: 0.42, max_tick_price: 0.44, levels: [{ price: 0.375, buy_quantity: 1, sell_quantity: 0, own_buy_quantity: 0, own_sell_quantity: 0 }] }, 0.01).at(-1))
      .toMatchObject({ text: '0.375', gapAbove: 2 });
  });

  it('steps whole ticks exactly on a tick of 0.1 (no float drift)', () => {
    const rows = buildLadder({ min_tick_price: 0.1, max_tick_price: 0.3, levels: [] }, 0.1);
    expect(rows.map((r) => r.text)).toEqual(['0.5', '0.4', '0.3', '0.2', '0.1', '0.0', '-0.1']);
  });
});

describe('formats', () => {
  it('shows thousands, prices with the tick decimals and the placeholder', () => {
    expect(formatK(2100)).toBe('2.1k');
    expect(formatK(500)).toBe('0.5k');
    expect(formatK(125)).toBe('0.125k');
    expect(formatK(0)).toBe('');
    expect(formatPrice(0.5, 0.005)).toBe('0.500');
    expect(formatPrice(5512, 1)).toBe('5512');
    expect(formatPrice(null, 0.01)).toBe(NO_PRICE);
    // Finer than the tick (a tick changed since): its own decimals, never rounded.
    expect(formatPrice(0.0025, 0.005)).toBe('0.0025');
    expect(formatPrice('-0.5', '0.005')).toBe('-0.500');
  });

  it('cuts names after 35 characters and splits the term into leg labels', () => {
    expect(truncateName('A'.repeat(35))).toBe('A'.repeat(35));
    expect(truncateName('B'.repeat(36))).toBe(`${'B'.repeat(35)}…`);
    expect(legLabels({ term: 'Dec26-Mar27', reversed_spread: false })).toEqual(['Dec26', 'Mar27']);
    expect(legLabels({ term: 'Dec26-Mar27', reversed_spread: true })).toEqual(['Mar27', 'Dec26']);
    expect(legLabels({ term: 'Dec26', reversed_spread: false })).toEqual(['Dec26']);
  });

  it('labels states as the spec cards do', () => {
    expect(stateLabel('AWAITING_MATCH')).toBe('Awaiting Match');
    expect(stateLabel('PARTIAL_BROKER_FILLED')).toBe('Partially Filled');
    expect(stateLabel('CANCELLED')).toBe('Cancelled');
    // Beside 'Broker Filled' in the same list, in the same case (issue 28.19).
    expect(stateLabel('BROKER_REJECTED')).toBe('Broker Rejected');
  });
});

describe('hours', () => {
  it('writes the configured hours as the spec does', async () => {
    const { formatHour, operatingHours, shortHours } = await import('@/lib/trading-format');
    expect(['00:00', '05:30', '09:00', '12:00', '17:00'].map(formatHour)).toEqual(['12:00 AM', '5:30 AM', '9:00 AM', '12:00 PM', '5:00 PM']);
    expect(operatingHours({ open_time: '08:00', close_time: '16:30', time_zone: 'Europe/London' })).toBe(
      'Operating hours are 8:00 AM to 4:30 PM (UK time, Monday to Friday only).',
    );
    expect(shortHours({ open_time: '08:00', close_time: '16:30', time_zone: 'Europe/London' })).toBe('8:00 AM–4:30 PM UK time, Mon–Fri');
    expect(shortHours({ open_time: '17:00', close_time: '16:00', time_zone: 'America/Chicago' })).toBe(
      '5:00 PM–4:00 PM next day America/Chicago time, Mon–Fri',
    );
    const { sessionHours } = await import('@/lib/trading-format');
    expect([sessionHours('08:00', '22:00'), sessionHours('17:00', '16:00')]).toEqual(['8:00 AM–10:00 PM', '5:00 PM–4:00 PM next day']);
  });

  it('says which holiday closes the venue and when it opens again, in its own time zone', async () => {
    const { closedText } = await import('@/lib/trading-format');
    const hours = { open_time: '09:00', close_time: '17:00', time_zone: 'Europe/London' };
    // Friday 25 December 2026, 10:00 UK time; the venue opens on Monday.
    const christmas = new Date('2026-12-25T10:00:00Z');
    expect(closedText({ ...hours, holiday: { date: '2026-12-25', name: 'Christmas Day' }, next_open: '2026-12-28T09:00:00Z' }, christmas)).toBe(
      'Closed today for Christmas Day. It opens again on Monday 28 December at 9:00 AM UK time.',
    );
    expect(closedText({ ...hours, holiday: { date: '2026-12-25', name: null }, next_open: null }, christmas)).toBe('Closed today for a holiday.');
    // After the close: tomorrow; before the open: today (summer time, 08:00 UTC is 9:00 AM).
    expect(closedText({ ...hours, holiday: null, next_open: '2026-06-17T08:00:00Z' }, new Date('2026-06-16T18:00:00Z'))).toBe(
      'It opens again tomorrow at 9:00 AM UK time.',
    );
    expect(closedText({ ...hours, holiday: null, next_open: '2026-06-17T08:00:00Z' }, new Date('2026-06-17T05:00:00Z'))).toBe(
      'It opens again today at 9:00 AM UK time.',
    );
    expect(closedText({ ...hours, holiday: null, next_open: null })).toBe('');
  });

  it("writes an exchange's trading days: ranges of three days or more, lists otherwise, a run over Sunday first", async () => {
    const { daysText, operatingHours, shortHours } = await import('@/lib/trading-format');
    const hours = { open_time: '08:00', close_time: '18:00', time_zone: 'Europe/London' };
    // Monday to Friday reads as it always did, given or not.
    expect(operatingHours({ ...hours, days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri'] })).toBe('Operating hours are 8:00 AM to 6:00 PM (UK time, Monday to Friday only).');
    expect(shortHours({ ...hours, days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri'] })).toBe('8:00 AM–6:00 PM UK time, Mon–Fri');
    expect(operatingHours({ ...hours, days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] })).toBe('Operating hours are 8:00 AM to 6:00 PM (UK time, Monday to Saturday only).');
    expect(shortHours({ ...hours, days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] })).toBe('8:00 AM–6:00 PM UK time, Mon–Sat');
    expect(operatingHours({ ...hours, days: ['Fri', 'Mon', 'Wed'] })).toBe('Operating hours are 8:00 AM to 6:00 PM (UK time, Monday, Wednesday and Friday only).');
    expect(shortHours({ ...hours, days: ['Mon', 'Wed', 'Fri'] })).toBe('8:00 AM–6:00 PM UK time, Mon, Wed, Fri');
    expect(operatingHours({ ...hours, days: ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] })).toBe('Operating hours are 8:00 AM to 6:00 PM (UK time, every day).');
    expect(shortHours({ ...hours, days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] })).toBe('8:00 AM–6:00 PM UK time, every day');
    expect(daysText(['Sun', 'Mon', 'Tue', 'Wed', 'Thu'])).toBe('Sunday to Thursday');
    expect(daysText(['Sun', 'Mon', 'Tue', 'Wed', 'Thu'], 'short')).toBe('Sun–Thu');
    expect(daysText(['Mon', 'Tue', 'Wed', 'Fri'], 'short')).toBe('Mon–Wed, Fri');
    expect(daysText(['Mon', 'Tue', 'Wed', 'Fri'])).toBe('Monday to Wednesday and Friday');
    expect(daysText(['Sat', 'Sun'])).toBe('Saturday and Sunday');
    expect(daysText(['Sun'], 'short')).toBe('Sun');
  });

  it('says where a calendar stands now', async () => {
    const { phaseLabel } = await import('@/lib/trading-format');
    expect(phaseLabel({ open: true, parent_orders_open: true })).toBe('Open');
    expect(phaseLabel({ open: false, parent_orders_open: true })).toBe('Opens soon');
    expect(phaseLabel({ open: false, parent_orders_open: false })).toBe('Closed');
  });

  it("names an exchange's holiday and its next opening in the exchange's own time zone", async () => {
    const { closedText } = await import('@/lib/trading-format');
    // Eurex on Christmas Day 2026: it opens on Monday at 1:10 AM Berlin time (00:10 UTC).
    const eurex = { time_zone: 'Europe/Berlin', holiday: { date: '2026-12-25', name: 'Christmas Day' }, next_open: '2026-12-28T00:10:00Z' };
    expect(closedText(eurex, new Date('2026-12-25T10:00:00Z'))).toBe(
      'Closed today for Christmas Day. It opens again on Monday 28 December at 1:10 AM Europe/Berlin time.',
    );
    // An exchange's status may leave out what it does not have.
    expect(closedText({ time_zone: 'Europe/Berlin' })).toBe('');
  });

  it('names a time zone other than London as configured', async () => {
    const { operatingHours, shortHours } = await import('@/lib/trading-format');
    const hours = { open_time: '09:30', close_time: '16:00', time_zone: 'America/New_York' };
    expect(operatingHours(hours)).toBe('Operating hours are 9:30 AM to 4:00 PM (America/New_York time, Monday to Friday only).');
    expect(shortHours(hours)).toBe('9:30 AM–4:00 PM America/New_York time, Mon–Fri');
  });
});
