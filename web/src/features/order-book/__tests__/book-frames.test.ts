import { describe, expect, it } from 'vitest';
import type { Instrument } from '@/lib/api/dto';
import { missedFrame } from '@/lib/realtime';
import { applyInstrumentBand } from '@/lib/api/get-instrument';
import { applyBookFrame, applyShareFrame, marketDataOf, type BookFrame } from '../lib/book-frames';

const cached = {
  instrument_id: 'i-1',
  min_tick_price: -0.04,
  max_tick_price: -0.015,
  prices_stale: false,
  levels: [
    { price: -0.02, buy_quantity: 0, sell_quantity: 1500, own_buy_quantity: 0, own_sell_quantity: 1000 },
    { price: -0.025, buy_quantity: 700, sell_quantity: 0, own_buy_quantity: 700, own_sell_quantity: 0 },
  ],
};

const frame: BookFrame = {
  seq: 7,
  instrument_id: 'i-1',
  tick_size: 0.005,
  min_tick_price: -0.035,
  max_tick_price: -0.01,
  best_buy_price: -0.025,
  best_sell_price: -0.02,
  prices_stale: true,
  levels: [
    { price: -0.02, buy_quantity: 0, sell_quantity: 2500 },
    { price: -0.025, buy_quantity: 500, sell_quantity: 0 },
    { price: -0.03, buy_quantity: 900, sell_quantity: 0 },
  ],
};

describe('book frames', () => {
  it('take the anonymous levels and band, keeping our share, never above a level', () => {
    expect(applyBookFrame(cached, frame)).toEqual({
      instrument_id: 'i-1',
      min_tick_price: -0.035,
      max_tick_price: -0.01,
      prices_stale: true,
      levels: [
        { price: -0.02, buy_quantity: 0, sell_quantity: 2500, own_buy_quantity: 0, own_sell_quantity: 1000 },
        { price: -0.025, buy_quantity: 500, sell_quantity: 0, own_buy_quantity: 500, own_sell_quantity: 0 },
        { price: -0.03, buy_quantity: 900, sell_quantity: 0, own_buy_quantity: 0, own_sell_quantity: 0 },
      ],
    });
    expect(applyBookFrame(undefined, frame), 'nothing cached: the screen reads it').toBeUndefined();
  });

  it('set our share from its frame, zero where it lists nothing, and only on its instrument', () => {
    const book = applyBookFrame(cached, frame);
    const share = { seq: 1, instrument_id: 'i-1', levels: [{ price: -0.03, own_buy_quantity: 400, own_sell_quantity: 0 }] };
    expect(applyShareFrame(book, share)?.levels.map((l) => [l.own_buy_quantity, l.own_sell_quantity])).toEqual([[0, 0], [0, 0], [400, 0]]);
    expect(applyShareFrame(book, { ...share, instrument_id: 'i-2' })).toBe(book);
  });

  it('give the market data and the instrument band; a new tick reads the instrument again', () => {
    expect(marketDataOf(frame)).toEqual({ best_buy_price: -0.025, best_sell_price: -0.02, min_tick_price: -0.035, max_tick_price: -0.01, prices_stale: true });
    const instrument = { instrument_id: 'i-1', tick_size: 0.005, min_tick_price: -0.04, max_tick_price: -0.015, prices_stale: true } as Instrument;
    expect(applyInstrumentBand(instrument, frame)).toEqual({ instrument: { ...instrument, min_tick_price: -0.035, max_tick_price: -0.01 }, stale: false });
    // Prices going stale (or fresh) with the band as it was change the instrument too.
    const fresh = { ...instrument, min_tick_price: -0.035, max_tick_price: -0.01, prices_stale: false };
    expect(applyInstrumentBand(fresh, frame).instrument).toEqual({ ...fresh, prices_stale: true });
    expect(applyInstrumentBand(instrument, { ...frame, tick_size: 0.01 }).stale).toBe(true);
    const same = { ...instrument, min_tick_price: -0.035, max_tick_price: -0.01 };
    expect(applyInstrumentBand(same, frame).instrument).toBe(same);
  });

  it('count a frame as missed when its number skips or goes back, never the first after a connect', () => {
    const last = new Map<string, number>();
    const d = '/topic/instruments/i-1/book';
    expect([5, 6, 7].map((seq) => missedFrame(last, d, { seq }))).toEqual([false, false, false]);
    expect(missedFrame(last, d, { seq: 9 })).toBe(true);
    expect(missedFrame(last, d, { seq: 10 })).toBe(false);
    expect(missedFrame(last, d, { seq: 1 }), 'another node, or a restarted one').toBe(true);
    expect(missedFrame(last, '/user/topic/book-shares', { seq: 4 }), 'each destination counts apart').toBe(false);
    expect(missedFrame(last, '/user/topic/notifications', { notification_id: 'n' }), 'no number').toBe(false);
  });
});
