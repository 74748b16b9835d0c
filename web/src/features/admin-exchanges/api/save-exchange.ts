import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { platformStatusQueryKey } from '@/lib/api/get-platform-status';
import type { components } from '@/lib/api/schema';
import { exchangeSchema, exchangesQueryKey } from './get-exchanges';

export type ExchangeInput = components['schemas']['ExchangeInput'];

/** A 400 (field errors) is shown in the dialog, under its fields, not in the snackbar. */
export function saveExchange({ mic, body }: { mic: string; body: ExchangeInput }) {
  return apiFetch(`/admin/exchanges/${encodeURIComponent(mic)}`, { method: 'PUT', body, schema: exchangeSchema, quiet: [400] });
}

/**
 * PUT /admin/exchanges/{mic}: creates the exchange's calendar (201) or replaces it (200). The
 * list and the platform status (the top bar, the order books' closed overlays) are read again.
 */
export function useSaveExchange() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: saveExchange,
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: exchangesQueryKey });
      void queryClient.invalidateQueries({ queryKey: platformStatusQueryKey });
    },
  });
}
