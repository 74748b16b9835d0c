import type { components } from '@/lib/api/schema';
import type { MarketData } from '../api/get-market-data';

type Schemas = components['schemas'];
type Book = Schemas['BookDto'];
type Level = Schemas['LevelDto'];
/** The best prices are null while a side is empty (the server's `Option<Decimal>`). */
export type BookFrame = Omit<Schemas['BookMessage'], 'best_buy_price' | 'best_sell_price'> & {
  best_buy_price: number | null;
  best_sell_price: number | null;
};
export type ShareFrame = Schemas['BookShareMessage'];

/**
 * The book cached for this screen after an anonymous frame (ADR 0029): the frame's levels,
 * each with our own share as we last knew it (from the REST read or a share frame), never
 * more than the level now holds. The share frame that follows a change of our share sets
 * it exactly. Nothing cached: nothing to update (the screen's own read is under way).
 */
export function applyBookFrame(old: Book | undefined, frame: BookFrame): Book | undefined {
  if (!old) return undefined;
  const own = new Map(old.levels.map((l) => [l.price, l]));
  return {
    instrument_id: frame.instrument_id,
    min_tick_price: frame.min_tick_price,
    max_tick_price: frame.max_tick_price,
    prices_stale: frame.prices_stale,
    levels: frame.levels.map((l): Level => {
      const mine = own.get(l.price);
      return {
        ...l,
        own_buy_quantity: Math.min(mine?.own_buy_quantity ?? 0, l.buy_quantity),
        own_sell_quantity: Math.min(mine?.own_sell_quantity ?? 0, l.sell_quantity),
      };
    }),
  };
}

/** The book cached after our company's share of it changed: every level's own part as the frame says. */
export function applyShareFrame(old: Book | undefined, frame: ShareFrame): Book | undefined {
  if (!old || old.instrument_id !== frame.instrument_id) return old;
  const share = new Map(frame.levels.map((l) => [l.price, l]));
  return {
    ...old,
    levels: old.levels.map((l) => {
      const mine = share.get(l.price);
      return {
        ...l,
        own_buy_quantity: Math.min(mine?.own_buy_quantity ?? 0, l.buy_quantity),
        own_sell_quantity: Math.min(mine?.own_sell_quantity ?? 0, l.sell_quantity),
      };
    }),
  };
}

/** What GET /instruments/{id}/market-data answers, from the book frame. */
export function marketDataOf(frame: BookFrame): MarketData {
  return {
    best_buy_price: frame.best_buy_price,
    best_sell_price: frame.best_sell_price,
    min_tick_price: frame.min_tick_price,
    max_tick_price: frame.max_tick_price,
    prices_stale: frame.prices_stale,
  };
}
