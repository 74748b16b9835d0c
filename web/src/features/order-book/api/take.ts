import { useMutation, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { matchRequestSchema } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';
import { useRefreshOrders } from '@/lib/api/trading-keys';

export type TakeBody = components['schemas']['MatchRequestRequest'];
export type Breakdown = components['schemas']['BreakdownDto'];

const breakdownSchema = z.array(
  z.object({
    price: z.number(),
    quantity: z.number(),
    responding_broker_name: z.string(),
    responding_order_iceberg: z.boolean(),
  }) satisfies z.ZodType<Breakdown>,
);

/** The dry run of a take: the resting orders it would hit (POST with dry_run; nothing is written). */
export function useDryRun(body: TakeBody | null) {
  return useQuery({
    queryKey: ['take-dry-run', body],
    queryFn: ({ signal }) =>
      apiFetch('/order-match-requests', { method: 'POST', body: { ...body, dry_run: true }, schema: breakdownSchema, signal }),
    enabled: body !== null,
    retry: false,
    staleTime: 0,
  });
}

/** POST /order-match-requests: one match request per resting order hit. */
export function useTake() {
  const refresh = useRefreshOrders();
  return useMutation({
    mutationFn: (body: TakeBody) =>
      apiFetch('/order-match-requests', {
        method: 'POST',
        idempotent: true,
        body: { ...body, dry_run: false },
        schema: z.array(matchRequestSchema),
      }),
    onSuccess: (sent) => refresh(sent[0]?.instrument_id),
  });
}
