import { describe, expect, it } from 'vitest';
import { minuteOfSession } from '@/lib/trading-format';
import { exchangeErrors, exchangeRequest, toExchangeForm, type ExchangeForm } from '../lib/exchange-form';

const valid: ExchangeForm = {
  mic: 'IFEU',
  name: ' ICE Futures Europe ',
  time_zone: 'Europe/London',
  open_time: '08:00',
  close_time: '18:00:00',
  parent_orders_from: '07:00',
  days: ['Fri', 'Mon', 'Wed'],
  holidays: [
    { date: '2026-12-28', name: ' ' },
    { date: '2026-12-25', name: 'Christmas Day' },
  ],
};

describe('exchange form', () => {
  it('builds the PUT body: days in the week order, holidays by date, a blank name as null, times as HH:MM', () => {
    expect(exchangeErrors(valid)).toEqual({});
    expect(exchangeRequest(valid)).toEqual({
      name: 'ICE Futures Europe',
      time_zone: 'Europe/London',
      open_time: '08:00',
      close_time: '18:00',
      parent_orders_from: '07:00',
      days: ['Mon', 'Wed', 'Fri'],
      holidays: [
        { date: '2026-12-25', name: 'Christmas Day' },
        { date: '2026-12-28', name: null },
      ],
    });
  });

  it("gives the server's messages, field by field", () => {
    expect(
      exchangeErrors({
        mic: 'ifeu',
        name: ' ',
        time_zone: 'Mars/Base',
        open_time: '18:00',
        close_time: '18:00',
        parent_orders_from: '19:00',
        days: [],
        holidays: [
          { date: '2026-12-25', name: '' },
          { date: '2026-12-25', name: 'x'.repeat(101) },
          { date: '', name: '' },
        ],
      }),
    ).toEqual({
      mic: 'A MIC is 4 capital letters or digits',
      name: 'Name is required',
      time_zone: 'Unknown time zone: Mars/Base',
      close_time: 'The close must differ from the open',
      parent_orders_from: 'Parent orders cannot open after the open',
      days: 'Pick at least one trading day',
      holidays: '2026-12-25 is listed twice',
      'holidays.1.name': "A holiday's name is one line of at most 100 characters",
      'holidays.2.date': 'Enter the date',
    });
    expect(exchangeErrors({ ...valid, open_time: '9am', name: 'x'.repeat(101) })).toEqual({
      open_time: 'Use a time like 09:00',
      name: 'A name is one line of at most 100 characters',
    });
    // Parent orders may open with the market, not after it.
    expect(exchangeErrors({ ...valid, parent_orders_from: '08:00' })).toEqual({});
  });

  it('takes a session that crosses midnight, with parent orders between the close and the open', () => {
    const globex = { ...valid, time_zone: 'America/Chicago', open_time: '17:00', close_time: '16:00' };
    for (const from of ['16:01', '16:30', '17:00']) expect(exchangeErrors({ ...globex, parent_orders_from: from })).toEqual({});
    for (const from of ['17:01', '23:00', '05:30', '16:00']) {
      expect(exchangeErrors({ ...globex, parent_orders_from: from })).toEqual({
        parent_orders_from: 'Parent orders cannot open after the open',
      });
    }
    expect(minuteOfSession('17:00', '17:00', '16:00')).toBe(-7 * 60);
    expect(minuteOfSession('16:00', '17:00', '16:00')).toBe(16 * 60);
    expect(minuteOfSession('17:00', '08:00', '18:00')).toBe(17 * 60);
  });

  it('starts a new exchange on weekdays, and an edit from its calendar', () => {
    expect(toExchangeForm(null)).toMatchObject({ mic: '', days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri'], holidays: [] });
  });
});
