import { z } from 'zod';
import { addIssues } from '@/lib/validation';
import type { InstrumentSetting } from '../api/get-instrument-settings';
import type { InstrumentSettingRequest } from '../api/schedule-instrument-setting';
import { decimalValue, plain, tickError } from './instrument-form';

// The 'Schedule a change' form of the settings dialog, with the server's own messages.

export type SettingForm = {
  /** A `datetime-local` value: the user's local time, `YYYY-MM-DDTHH:mm` (or with seconds). */
  effective_from: string;
  tick_size: string;
  /** Optional: empty is none (sent as null). */
  exchange_tick_size: string;
  min_quantity: string;
};

export const SETTING_MESSAGES = {
  effectiveFrom: 'Choose a time after now',
  minQuantity: 'The minimum block must be a whole number above 0',
} as const;

const LOCAL_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/;

/** A `datetime-local` value (local time) as its instant; null when blank or unreadable. */
export function localInstant(local: string): Date | null {
  if (!LOCAL_DATE_TIME.test(local.trim())) return null;
  // Without an offset, a date-time is read in the browser's time zone.
  const d = new Date(local.trim());
  return Number.isNaN(d.getTime()) ? null : d;
}

/** A whole number above 0 the server can take. */
function minQuantityError(text: string): string | undefined {
  const t = text.trim();
  return /^\d+$/.test(t) && Number(t) >= 1 && Number.isSafeInteger(Number(t)) ? undefined : SETTING_MESSAGES.minQuantity;
}

/** The form's messages, field by field; `now` is when it is checked (the time must come after it). */
export function settingErrors(f: SettingForm, now: number = Date.now()): Partial<Record<keyof SettingForm, string>> {
  const at = localInstant(f.effective_from);
  return {
    effective_from: at && at.getTime() > now ? undefined : SETTING_MESSAGES.effectiveFrom,
    tick_size: tickError(f.tick_size),
    exchange_tick_size: f.exchange_tick_size.trim() ? tickError(f.exchange_tick_size) : undefined,
    min_quantity: minQuantityError(f.min_quantity),
  };
}

export const settingFormSchema = z
  .object({ effective_from: z.string(), tick_size: z.string(), exchange_tick_size: z.string(), min_quantity: z.string() })
  .superRefine((f, ctx) => addIssues(ctx, settingErrors(f))) satisfies z.ZodType<SettingForm>;

/** The form prefilled from the settings in force (their plain exact decimals), the time left to choose. */
export function toSettingForm(inForce: Pick<InstrumentSetting, 'tick_size' | 'exchange_tick_size' | 'min_quantity'> | null): SettingForm {
  return {
    effective_from: '',
    tick_size: inForce ? plain(inForce.tick_size) : '',
    exchange_tick_size: inForce?.exchange_tick_size != null ? plain(inForce.exchange_tick_size) : '',
    min_quantity: inForce ? String(inForce.min_quantity) : '',
  };
}

/** The POST body of a valid form: the local time as an ISO UTC instant, the decimals as exact JSON numbers. */
export function settingRequest(v: SettingForm): InstrumentSettingRequest {
  const at = localInstant(v.effective_from);
  // The form's rules refuse an unreadable time, so this never happens.
  if (!at) throw new Error(`not a date-time: ${v.effective_from}`);
  const exchangeTick = v.exchange_tick_size.trim();
  return {
    effective_from: at.toISOString(),
    tick_size: decimalValue(v.tick_size.trim()),
    exchange_tick_size: exchangeTick ? decimalValue(exchangeTick) : null,
    min_quantity: Number(v.min_quantity.trim()),
  };
}
