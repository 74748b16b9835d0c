import { useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';

export type BandPoint = components['schemas']['BandPointDto'];

const bandHistorySchema = z.array(
  z.object({ at: z.string(), min_tick_price: z.number(), max_tick_price: z.number() }),
) satisfies z.ZodType<BandPoint[]>;

/** The periods the chart offers, in hours. */
export const BAND_PERIODS = [
  { hours: 1, label: '1 hour' },
  { hours: 24, label: '24 hours' },
  { hours: 24 * 7, label: '7 days' },
] as const;

/**
 * GET /instruments/{id}/band-history over the `hours` to `to`: the band at the period's
 * start, then its moves (at most 500 points, each the envelope of a slice of the period).
 */
export function getBandHistory(instrumentId: string, from: Date, to: Date, signal?: AbortSignal) {
  const q = new URLSearchParams({ from: from.toISOString(), to: to.toISOString() });
  return apiFetch(`/instruments/${encodeURIComponent(instrumentId)}/band-history?${q.toString()}`, { schema: bandHistorySchema, signal });
}

/** The band over the last `hours`, to the moment the period was chosen (read again on demand). */
export function useBandHistory(instrumentId: string, hours: number, to: Date) {
  return useQuery({
    queryKey: ['admin', 'band-history', instrumentId, hours, to.toISOString()],
    queryFn: ({ signal }) => getBandHistory(instrumentId, new Date(to.getTime() - hours * 3_600_000), to, signal),
  });
}
