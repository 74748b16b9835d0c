import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { adminInstrumentsQueryKey } from './get-instruments';
import { instrumentSettingSchema, instrumentSettingsQueryKey } from './get-instrument-settings';

/** The body of POST /admin/instruments/{id}/settings: decimals as exact JSON numbers, the time as an ISO instant. */
export type InstrumentSettingRequest = {
  effective_from: string;
  tick_size: number;
  exchange_tick_size: number | null;
  min_quantity: number;
};

/** A 400 (field errors) or a 409 (one already scheduled then) is shown in the settings dialog, not the snackbar. */
export function scheduleInstrumentSetting({ instrumentId, body }: { instrumentId: string; body: InstrumentSettingRequest }) {
  return apiFetch(`/admin/instruments/${encodeURIComponent(instrumentId)}/settings`, {
    method: 'POST',
    idempotent: true,
    body,
    schema: instrumentSettingSchema,
    quiet: [400, 409],
  });
}

/** POST /admin/instruments/{id}/settings (a SCHEDULED change); the settings and the admin instrument list are read again. */
export function useScheduleInstrumentSetting() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: scheduleInstrumentSetting,
    onSuccess: (_, { instrumentId }) => {
      void queryClient.invalidateQueries({ queryKey: instrumentSettingsQueryKey(instrumentId) });
      void queryClient.invalidateQueries({ queryKey: adminInstrumentsQueryKey });
    },
  });
}
