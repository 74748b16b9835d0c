import { queryOptions, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { POLL_MS } from '@/config/constants';
import type { components } from '@/lib/api/schema';
import { useTopic } from '@/lib/realtime';
import { instrumentSchema, type Instrument } from './dto';
import { instrumentsQueryKey } from './get-instruments';

export function getInstrument(id: string, signal?: AbortSignal) {
  return apiFetch(`/instruments/${encodeURIComponent(id)}`, { schema: instrumentSchema, signal });
}

export const instrumentQueryOptions = (id: string) =>
  queryOptions({ queryKey: [...instrumentsQueryKey, 'one', id], queryFn: ({ signal }) => getInstrument(id, signal), staleTime: POLL_MS });

/** GET /instruments/{id}: its name, tick and current band. */
export function useInstrument(id: string) {
  return useQuery(instrumentQueryOptions(id));
}

/** What a book frame says of its instrument. */
export type BandFrame = Pick<components['schemas']['BookMessage'], 'tick_size' | 'min_tick_price' | 'max_tick_price' | 'prices_stale'>;

/**
 * The instrument cached after a book frame: its band moved with the frame. `stale` when
 * its tick changed too, which the instrument is read again for (its other fields may have).
 */
export function applyInstrumentBand(old: Instrument | undefined, frame: BandFrame): { instrument: Instrument | undefined; stale: boolean } {
  if (!old) return { instrument: undefined, stale: false };
  const stale = old.tick_size !== frame.tick_size;
  const same = old.min_tick_price === frame.min_tick_price && old.max_tick_price === frame.max_tick_price;
  if (same && old.prices_stale === frame.prices_stale) return { instrument: old, stale };
  return {
    instrument: { ...old, min_tick_price: frame.min_tick_price, max_tick_price: frame.max_tick_price, prices_stale: frame.prices_stale },
    stale,
  };
}

/**
 * GET /instruments/{id}, its band kept live by the instrument's book frames (ADR 0029):
 * every screen that shows the band (the ladder, a parent card's 'Outside band', a drawer)
 * follows the same pushed band, with no read. A missed frame or a reconnect reads it again.
 */
export function useLiveInstrument(id: string) {
  const queryClient = useQueryClient();
  const key = instrumentQueryOptions(id).queryKey;
  useTopic(
    `/topic/instruments/${id}/book`,
    (frame) => {
      const { instrument, stale } = applyInstrumentBand(queryClient.getQueryData(key), frame);
      if (instrument) queryClient.setQueryData(key, instrument);
      if (stale) void queryClient.invalidateQueries({ queryKey: key });
    },
    (since) => {
      // A read under way since the subscription is current: it is not started again.
      const older = { predicate: (q: { state: { dataUpdatedAt: number } }) => q.state.dataUpdatedAt < since };
      void queryClient.invalidateQueries({ queryKey: key, ...older }, { cancelRefetch: false });
    },
  );
  return useInstrument(id);
}
