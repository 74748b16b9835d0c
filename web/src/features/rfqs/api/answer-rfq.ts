import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';
import { rfqKeys, rfqResponseSchema } from './get-rfqs';

export type AnswerRfqBody = components['schemas']['AnswerRfqRequest'];

/** POST /rfqs/{id}/responses: a quote (again, until accepted), or {state: REJECTED_BY_RESPONDER} to decline. */
export function useAnswerRfq() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ rfqId, body }: { rfqId: string; body: AnswerRfqBody }) =>
      apiFetch(`/rfqs/${encodeURIComponent(rfqId)}/responses`, { method: 'POST', idempotent: true, body, schema: rfqResponseSchema }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: rfqKeys.incoming }),
  });
}
