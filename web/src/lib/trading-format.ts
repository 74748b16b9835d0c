import { addTicks, ceilDiv, cmp, dec, decimalsOf, eq, mul, onTick, sub, toFixed, toPlain, type Decimal } from '@/lib/decimal';
import type { Instrument } from './api/dto';
import type { components } from './api/schema';

type Book = components['schemas']['BookDto'];

/** Spec section 9: the placeholder for a missing price. */
export const NO_PRICE = '--.---';
/** Spec section 3: instrument names are cut after 35 characters. */
export const NAME_MAX = 35;

/** Child order states listed under a parent (spec section 4), with the partial broker states. */
export const LISTED_STATES = [
  'WORKING',
  'AWAITING_MATCH',
  'AWAITING_RFQ_ACCEPTANCE',
  'MATCHED',
  'PARTIAL_BROKER_ACCEPTED',
  'BROKER_ACCEPTED',
  'PARTIAL_BROKER_FILLED',
  'BROKER_FILLED',
  'ERROR',
  // A trade a broker declined stays in view, so both traders see what became of it (issue 28.7).
  'BROKER_REJECTED',
] as const;

const STATE_LABELS: Record<string, string> = {
  WORKING: 'Working',
  AWAITING_MATCH: 'Awaiting Match',
  MATCHED: 'Matched',
  PARTIAL_BROKER_ACCEPTED: 'Partially Accepted',
  BROKER_ACCEPTED: 'Broker Accepted',
  PARTIAL_BROKER_FILLED: 'Partially Filled',
  BROKER_FILLED: 'Broker Filled',
  BROKER_REJECTED: 'Broker Rejected',
  AWAITING_RFQ_ACCEPTANCE: 'Awaiting RFQ Acceptance',
  ERROR: 'Error',
  ACTIVE: 'Active',
  FILLED: 'Filled',
};

/** The card label of an order or parent order state. */
export function stateLabel(state: string): string {
  return STATE_LABELS[state] ?? state.charAt(0) + state.slice(1).toLowerCase().replace(/_/g, ' ');
}

export function truncateName(name: string): string {
  return name.length > NAME_MAX ? `${name.slice(0, NAME_MAX)}…` : name;
}

/** The two leg labels of a term: its first 5 characters and the rest ('Dec26-Mar27' → Dec26, Mar27); reversed spreads show them far leg first (ADR 0009). */
export function legLabels(instrument: Pick<Instrument, 'term' | 'reversed_spread'>): string[] {
  const first = instrument.term.slice(0, 5).trim();
  const rest = instrument.term.slice(5).replace(/^[\s\-/]+/, '').trim();
  const legs = [first, rest].filter(Boolean);
  return instrument.reversed_spread ? legs.reverse() : legs;
}

/** Quantities in thousands: 2100 → '2.1k', 500 → '0.5k', 0 → ''. */
export function formatK(quantity: number): string {
  if (!quantity) return '';
  return `${toPlain(mul(dec(quantity), dec('0.001')))}k`;
}

/**
 * A price with the tick's decimals, or the placeholder when missing. A price finer than
 * the tick (the tick changed since) keeps its own decimals: never rounded into another.
 */
export function formatPrice(price: number | string | null | undefined, tickSize: number | string): string {
  if (price === null || price === undefined) return NO_PRICE;
  const d = dec(price);
  return toFixed(d, Math.max(decimalsOf(dec(tickSize)), d.scale));
}

export type LadderRow = {
  price: Decimal;
  text: string;
  buy: number;
  sell: number;
  ownBuy: number;
  ownSell: number;
  /** Inside [min_tick_price, max_tick_price] and on the tick: a block may trade here. */
  tradable: boolean;
  /**
   * The prices left out between the row above and this one (rows of orders left far from
   * the band after it moved): how many whole ticks, or null when the rows are adjacent.
   */
  gapAbove: number | null;
};

/** The band an instrument trades in now: its book's and its instrument's, as the last frame set it. */
export type Band = { min_tick_price: number | string; max_tick_price: number | string };

/** Whether a price is inside [min_tick_price, max_tick_price], where a block may trade. */
export function inBand(price: Decimal | number | string, band: Band): boolean {
  const p = typeof price === 'object' ? price : dec(price);
  return cmp(p, dec(band.min_tick_price)) >= 0 && cmp(p, dec(band.max_tick_price)) <= 0;
}

/**
 * The ladder of spec section 9, highest price first: from max + 2 ticks down to
 * min − 2 ticks, with the book's quantities on their rows. Every other level (orders left
 * outside after a band move, or on a tick the instrument no longer has) gets its row too,
 * in price order, with the ticks skipped before it (`gapAbove`).
 */
export function buildLadder(book: Pick<Book, 'levels' | 'min_tick_price' | 'max_tick_price'>, tickSize: number | string): LadderRow[] {
  const tick = dec(tickSize);
  const min = dec(book.min_tick_price);
  const max = dec(book.max_tick_price);
  const places = decimalsOf(tick);
  const prices: Decimal[] = [];
  for (let p = addTicks(max, tick, 2); cmp(p, addTicks(min, tick, -2)) >= 0; p = addTicks(p, tick, -1)) prices.push(p);
  const levels = book.levels.map((l) => ({ ...l, d: dec(l.price) }));
  for (const l of levels) {
    if (!prices.some((p) => eq(p, l.d))) prices.push(l.d);
  }
  prices.sort((a, b) => cmp(b, a));
  return prices.map((price, n) => {
    const level = levels.find((l) => eq(l.d, price));
    const ticked = onTick(price, tick);
    const above = prices[n - 1];
    // Whole ticks strictly between the two prices (the row above may be off the tick too).
    const skipped = above ? Number(ceilDiv(sub(above, price), tick)) - 1 : 0;
    return {
      price,
      text: ticked ? toFixed(price, places) : toFixed(price, Math.max(places, price.scale)),
      buy: level?.buy_quantity ?? 0,
      sell: level?.sell_quantity ?? 0,
      ownBuy: level?.own_buy_quantity ?? 0,
      ownSell: level?.own_sell_quantity ?? 0,
      tradable: ticked && inBand(price, book),
      gapAbove: skipped > 0 ? skipped : null,
    };
  });
}

/** '09:00' → '9:00 AM', '17:30' → '5:30 PM': the spec's way of writing the hours. */
export function formatHour(hhmm: string): string {
  const [h = 0, m = 0] = hhmm.split(':').map(Number);
  return `${h % 12 === 0 ? 12 : h % 12}:${String(m).padStart(2, '0')} ${h < 12 ? 'AM' : 'PM'}`;
}

type PlatformStatus = components['schemas']['PlatformStatusDto'];
type ExchangeDay = components['schemas']['ExchangeDay'];
type Holiday = components['schemas']['HolidayDto'];

/** The venue's hours as GET /platform/status gives them; an exchange's carry its trading days (Monday to Friday when absent). */
export type VenueHours = Pick<PlatformStatus, 'open_time' | 'close_time' | 'time_zone'> & { days?: readonly ExchangeDay[] };

/** How the hours' time zone is named: 'Europe/London' (the spec's) is 'UK time', any other is named as configured. */
export function zoneLabel(timeZone: string): string {
  return timeZone === 'Europe/London' ? 'UK time' : `${timeZone} time`;
}

const WEEK: readonly ExchangeDay[] = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const DAY_NAMES: Record<ExchangeDay, string> = {
  Mon: 'Monday',
  Tue: 'Tuesday',
  Wed: 'Wednesday',
  Thu: 'Thursday',
  Fri: 'Friday',
  Sat: 'Saturday',
  Sun: 'Sunday',
};
const WEEKDAYS: readonly ExchangeDay[] = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri'];

/**
 * The trading days as runs of the week, a run that wraps over Sunday (Sun–Thu) first:
 * Mon Tue Wed Fri → [[Mon, Tue, Wed], [Fri]].
 */
function dayRuns(days: readonly ExchangeDay[]): ExchangeDay[][] {
  const on = WEEK.map((d) => days.includes(d));
  const runs: ExchangeDay[][] = [];
  for (let i = 0; i < 7; i++) {
    // A run starts on a trading day after a day off (the week read round).
    if (!on[i] || on[(i + 6) % 7]) continue;
    const run: ExchangeDay[] = [];
    for (let j = i; on[j % 7] && run.length < 7; j++) run.push(WEEK[j % 7] as ExchangeDay);
    runs.push(run);
  }
  const wraps = (r: ExchangeDay[]) => WEEK.indexOf(r[0] as ExchangeDay) > WEEK.indexOf(r[r.length - 1] as ExchangeDay);
  return [...runs.filter(wraps), ...runs.filter((r) => !wraps(r))];
}

/**
 * The trading days in words: long 'Monday to Friday' (or 'Monday, Wednesday and Friday'),
 * short 'Mon–Fri' (or 'Mon, Wed, Fri'); 'every day' for all seven. Three days or more in a
 * row read as a range.
 */
export function daysText(days: readonly ExchangeDay[] = WEEKDAYS, style: 'long' | 'short' = 'long'): string {
  if (WEEK.every((d) => days.includes(d))) return 'every day';
  const name = (d: ExchangeDay) => (style === 'long' ? DAY_NAMES[d] : d);
  const parts = dayRuns(days).flatMap((run) =>
    run.length >= 3 ? [`${name(run[0] as ExchangeDay)}${style === 'long' ? ' to ' : '–'}${name(run[run.length - 1] as ExchangeDay)}`] : run.map(name),
  );
  if (style === 'short' || parts.length < 2) return parts.join(', ');
  return `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

/** The operating-hours sentence of the spec, from the configured calendar (never assumed hours). */
export function operatingHours(hours: VenueHours): string {
  const days = daysText(hours.days);
  return `Operating hours are ${formatHour(hours.open_time)} to ${formatHour(hours.close_time)} (${zoneLabel(hours.time_zone)}, ${days === 'every day' ? days : `${days} only`}).`;
}

/** 'YYYY-MM-DD' of an instant in a time zone. */
export function localDate(at: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
}

/**
 * Why the venue (or an exchange) is closed and when it opens again, in its own time zone
 * (issue 28.15): 'Closed today for Christmas Day. It opens again on Monday 28 December at
 * 9:00 AM UK time.' Empty when the status says neither (open, or no opening ahead).
 */
export function closedText(status: { time_zone: string; holiday?: Holiday | null; next_open?: string | null }, now: Date = new Date()): string {
  const parts: string[] = [];
  if (status.holiday) parts.push(`Closed today for ${status.holiday.name ?? 'a holiday'}.`);
  if (status.next_open) {
    const at = new Date(status.next_open);
    const zone = status.time_zone;
    const day = localDate(at, zone);
    const today = localDate(now, zone);
    const tomorrow = localDate(new Date(now.getTime() + 24 * 3600 * 1000), zone);
    const when =
      day === today
        ? 'today'
        : day === tomorrow
          ? 'tomorrow'
          : `on ${new Intl.DateTimeFormat('en-GB', { timeZone: zone, weekday: 'long', day: 'numeric', month: 'long' }).format(at)}`;
    const hhmm = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at);
    parts.push(`It opens again ${when} at ${formatHour(hhmm)} ${zoneLabel(zone)}.`);
  }
  return parts.join(' ');
}

/**
 * The top bar's short form of the hours: '9:00 AM–5:00 PM UK time, Mon–Fri'; a session that crosses
 * midnight closes the next day: '5:00 PM–4:00 PM next day America/Chicago time, Mon–Fri'.
 */
export function shortHours(hours: VenueHours): string {
  return `${sessionHours(hours.open_time, hours.close_time)} ${zoneLabel(hours.time_zone)}, ${daysText(hours.days, 'short')}`;
}

/** A session's hours: '9:00 AM–5:00 PM', or '5:00 PM–4:00 PM next day' when it crosses midnight. */
export function sessionHours(open: string, close: string): string {
  return `${formatHour(open)}–${formatHour(close)}${close < open ? ' next day' : ''}`;
}

/**
 * Where `t` (`HH:MM`) falls in a session, in minutes from the midnight of the day it closes on:
 * negative for the evening before, when the session crosses midnight (a close before the open).
 */
export function minuteOfSession(t: string, open: string, close: string): number {
  const minutes = Number(t.slice(0, 2)) * 60 + Number(t.slice(3, 5));
  return close < open && t > close ? minutes - 24 * 60 : minutes;
}

/** Where a calendar stands now: open, before the open (parent orders taken, orders wait for it) or closed. */
export function phaseLabel(status: { open: boolean; parent_orders_open: boolean }): 'Open' | 'Opens soon' | 'Closed' {
  if (status.open) return 'Open';
  return status.parent_orders_open ? 'Opens soon' : 'Closed';
}

/**
 * How a trade is split across accounts, in one line: 'HAL-MACRO 1,000; HAL-RATES 500'
 * (`grouped: false` writes the quantities plain, as a CSV does: 'HAL-MACRO 1000; HAL-RATES 500').
 */
export function allocationSummary(lines: readonly { code: string; quantity: number }[], { grouped = true } = {}): string {
  const format = grouped ? (q: number) => new Intl.NumberFormat('en-GB').format(q) : String;
  return lines.map((l) => `${l.code} ${format(l.quantity)}`).join('; ');
}
