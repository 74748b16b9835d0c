import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';

/** SCHEDULED: takes effect at its time by itself; IN_FORCE: the instrument's settings now (one row); SUPERSEDED: a past version. */
export const settingStateSchema = z.enum(['SCHEDULED', 'IN_FORCE', 'SUPERSEDED']);
export type SettingState = z.infer<typeof settingStateSchema>;

/**
 * One dated version of an instrument's tick sizes and minimum block. Typed from zod until
 * the server's OpenAPI document (and schema.ts) carries InstrumentSettingDto.
 */
export const instrumentSettingSchema = z.object({
  setting_id: z.string(),
  instrument_id: z.string(),
  /** RFC 3339 instant. */
  effective_from: z.string(),
  /** Exact decimals sent as JSON numbers (read with lib/decimal, never computed on as floats). */
  tick_size: z.number(),
  exchange_tick_size: z.number().nullable(),
  min_quantity: z.number().int(),
  state: settingStateSchema,
  created_by_email: z.string().nullable(),
  created_at: z.string(),
});
export type InstrumentSetting = z.infer<typeof instrumentSettingSchema>;

/** Every settings query; one instrument's under `instrumentSettingsQueryKey(id)`. */
export const allInstrumentSettingsQueryKey = ['admin', 'instrument-settings'] as const;
export const instrumentSettingsQueryKey = (instrumentId: string) => [...allInstrumentSettingsQueryKey, instrumentId] as const;

export function getInstrumentSettings(instrumentId: string, signal?: AbortSignal) {
  return apiFetch(`/admin/instruments/${encodeURIComponent(instrumentId)}/settings`, { schema: z.array(instrumentSettingSchema), signal });
}

export const instrumentSettingsQueryOptions = (instrumentId: string) =>
  queryOptions({ queryKey: instrumentSettingsQueryKey(instrumentId), queryFn: ({ signal }) => getInstrumentSettings(instrumentId, signal) });

/** GET /admin/instruments/{id}/settings: the versions, newest `effective_from` first (the scheduled ones first). */
export function useInstrumentSettings(instrumentId: string) {
  return useQuery(instrumentSettingsQueryOptions(instrumentId));
}
