import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { adminInstrumentsQueryKey } from './get-instruments';
import { instrumentSettingsQueryKey } from './get-instrument-settings';

/** A 404 or 409 (in force already) is shown in the settings dialog, not the snackbar. */
export function cancelInstrumentSetting({ instrumentId, settingId }: { instrumentId: string; settingId: string }) {
  return apiFetch(`/admin/instruments/${encodeURIComponent(instrumentId)}/settings/${encodeURIComponent(settingId)}`, {
    method: 'DELETE',
    quiet: [404, 409],
  });
}

/** DELETE /admin/instruments/{id}/settings/{setting_id} (a SCHEDULED change only); the settings and the admin instrument list are read again. */
export function useCancelInstrumentSetting() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: cancelInstrumentSetting,
    onSettled: (_, __, { instrumentId }) => {
      void queryClient.invalidateQueries({ queryKey: instrumentSettingsQueryKey(instrumentId) });
      void queryClient.invalidateQueries({ queryKey: adminInstrumentsQueryKey });
    },
  });
}
