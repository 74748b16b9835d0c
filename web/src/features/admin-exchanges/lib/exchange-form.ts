import { z } from 'zod';
import { EXCHANGE_DAYS, exchangeDaySchema, type ExchangeDay } from '@/lib/api/get-platform-status';
import { minuteOfSession } from '@/lib/trading-format';
import { addIssues } from '@/lib/validation';
import type { Exchange } from '../api/get-exchanges';
import type { ExchangeInput } from '../api/save-exchange';

// The exchange dialog's form (ADR 0052), with the server's own rules and messages
// (crates/engine/src/exchanges.rs).

/** The longest name of an exchange or a holiday, in characters. */
export const MAX_NAME = 100;
/** The most holidays an exchange lists. */
export const MAX_HOLIDAYS = 500;

export type HolidayRow = { date: string; name: string };

export type ExchangeForm = {
  mic: string;
  name: string;
  time_zone: string;
  /** `HH:MM`, local to the time zone. */
  open_time: string;
  close_time: string;
  parent_orders_from: string;
  days: ExchangeDay[];
  /** `YYYY-MM-DD` ('' until a whole date is typed) and an optional name. */
  holidays: HolidayRow[];
};

export const EXCHANGE_MESSAGES = {
  mic: 'A MIC is 4 capital letters or digits',
  name: 'Name is required',
  nameTooLong: `A name is one line of at most ${MAX_NAME} characters`,
  timeZoneRequired: 'Time zone is required',
  time: 'Use a time like 09:00',
  closeIsOpen: 'The close must differ from the open',
  parentOrdersAfterOpen: 'Parent orders cannot open after the open',
  days: 'Pick at least one trading day',
  holidayDate: 'Enter the date',
  holidayName: `A holiday's name is one line of at most ${MAX_NAME} characters`,
  tooManyHolidays: `At most ${MAX_HOLIDAYS} holidays`,
} as const;

const MIC = /^[A-Z0-9]{4}$/;
const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** At most MAX_NAME characters (as the server counts them), on one line. */
const oneLine = (text: string) => [...text].length <= MAX_NAME && !/[\n\r]/.test(text);

/** The server's message for a time zone it does not know. */
export const unknownTimeZone = (zone: string) => `Unknown time zone: ${zone}`;

/** Whether the browser knows an IANA time zone (the server's list has the final word). */
export function knownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The time zones the browser offers as suggestions, when it can list them. */
export function timeZoneSuggestions(): string[] {
  return typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
}

/** `HH:MM` as an input of type time gives it (it may add seconds); '' when not a time. */
function hhmm(text: string): string {
  const t = text.trim().slice(0, 5);
  return HH_MM.test(t) ? t : '';
}

/** The form's messages, field by field (`holidays` for the list as a whole, `holidays.N.date` for a row). */
export function exchangeErrors(f: ExchangeForm): Partial<Record<string, string>> {
  const e: Partial<Record<string, string>> = {};
  if (!MIC.test(f.mic.trim())) e.mic = EXCHANGE_MESSAGES.mic;
  const name = f.name.trim();
  if (!name) e.name = EXCHANGE_MESSAGES.name;
  else if (!oneLine(name)) e.name = EXCHANGE_MESSAGES.nameTooLong;
  const zone = f.time_zone.trim();
  if (!zone) e.time_zone = EXCHANGE_MESSAGES.timeZoneRequired;
  else if (!knownTimeZone(zone)) e.time_zone = unknownTimeZone(zone);
  const open = hhmm(f.open_time);
  const close = hhmm(f.close_time);
  const parents = hhmm(f.parent_orders_from);
  if (!open) e.open_time = EXCHANGE_MESSAGES.time;
  if (!close) e.close_time = EXCHANGE_MESSAGES.time;
  else if (open && close === open) e.close_time = EXCHANGE_MESSAGES.closeIsOpen;
  if (!parents) e.parent_orders_from = EXCHANGE_MESSAGES.time;
  else if (open && close && minuteOfSession(parents, open, close) > minuteOfSession(open, open, close)) {
    e.parent_orders_from = EXCHANGE_MESSAGES.parentOrdersAfterOpen;
  }
  if (f.days.length === 0) e.days = EXCHANGE_MESSAGES.days;
  if (f.holidays.length > MAX_HOLIDAYS) e.holidays = EXCHANGE_MESSAGES.tooManyHolidays;
  const seen = new Set<string>();
  f.holidays.forEach((h, n) => {
    if (!DATE.test(h.date)) {
      e[`holidays.${n}.date`] = EXCHANGE_MESSAGES.holidayDate;
    } else if (seen.has(h.date)) {
      e.holidays ??= `${h.date} is listed twice`;
    }
    seen.add(h.date);
    const holidayName = h.name.trim();
    if (holidayName && !oneLine(holidayName)) e[`holidays.${n}.name`] = EXCHANGE_MESSAGES.holidayName;
  });
  return e;
}

export const exchangeFormSchema = z
  .object({
    mic: z.string(),
    name: z.string(),
    time_zone: z.string(),
    open_time: z.string(),
    close_time: z.string(),
    parent_orders_from: z.string(),
    days: z.array(exchangeDaySchema),
    holidays: z.array(z.object({ date: z.string(), name: z.string() })),
  })
  .superRefine((f, ctx) => addIssues(ctx, exchangeErrors(f))) satisfies z.ZodType<ExchangeForm>;

/** The dialog's values for an exchange (a new one, Monday to Friday, when null). */
export function toExchangeForm(x: Exchange | null): ExchangeForm {
  return {
    mic: x?.mic ?? '',
    name: x?.name ?? '',
    time_zone: x?.time_zone ?? '',
    open_time: x?.open_time ?? '',
    close_time: x?.close_time ?? '',
    parent_orders_from: x?.parent_orders_from ?? '',
    days: x ? [...x.days] : ['Mon', 'Tue', 'Wed', 'Thu', 'Fri'],
    holidays: (x?.holidays ?? []).map((h) => ({ date: h.date, name: h.name ?? '' })),
  };
}

/** The PUT body of a valid form: the days in the week's order, the holidays by date, an empty name as null. */
export function exchangeRequest(f: ExchangeForm): ExchangeInput {
  return {
    name: f.name.trim(),
    time_zone: f.time_zone.trim(),
    open_time: hhmm(f.open_time),
    close_time: hhmm(f.close_time),
    parent_orders_from: hhmm(f.parent_orders_from),
    days: EXCHANGE_DAYS.filter((d) => f.days.includes(d)),
    holidays: [...f.holidays].sort((a, b) => a.date.localeCompare(b.date)).map((h) => ({ date: h.date, name: h.name.trim() || null })),
  };
}
