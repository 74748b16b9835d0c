import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { instrumentSchema } from '@/lib/api/dto';
import { instrumentsQueryKey } from '@/lib/api/get-instruments';
import type { components } from '@/lib/api/schema';
import { adminInstrumentsQueryKey } from './get-instruments';

export type InstrumentRequest = components['schemas']['InstrumentRequest'];

export function createInstrument(body: InstrumentRequest) {
  return apiFetch('/admin/instruments', { method: 'POST', idempotent: true, body, schema: instrumentSchema });
}

/** POST /admin/instruments; the admin list and the traders' instrument lists are refetched. */
export function useCreateInstrument() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createInstrument,
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: adminInstrumentsQueryKey });
      void queryClient.invalidateQueries({ queryKey: instrumentsQueryKey });
    },
  });
}
