import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { instrumentSchema } from '@/lib/api/dto';
import { instrumentsQueryKey } from '@/lib/api/get-instruments';
import type { InstrumentRequest } from './create-instrument';
import { adminInstrumentsQueryKey } from './get-instruments';

export function updateInstrument({ id, body }: { id: string; body: InstrumentRequest }) {
  return apiFetch(`/admin/instruments/${encodeURIComponent(id)}`, { method: 'PATCH', body, schema: instrumentSchema });
}

/** PATCH /admin/instruments/{id}; the admin list and the traders' instrument lists are refetched. */
export function useUpdateInstrument() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: updateInstrument,
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: adminInstrumentsQueryKey });
      void queryClient.invalidateQueries({ queryKey: instrumentsQueryKey });
    },
  });
}
