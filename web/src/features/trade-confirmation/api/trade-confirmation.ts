import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { directionSchema } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';

export type Step = components['schemas']['ConfirmationStep'];
export type TradeConfirmation = components['schemas']['OrderConfirmationDto'];

const tradeConfirmationSchema = z.object({
  order_id: z.string(),
  step: z.enum(['ACCEPT', 'FILL']),
  state: z.string(),
  answer: z.boolean().nullable(),
  broker_name: z.string(),
  client_name: z.string(),
  trader_name: z.string(),
  instrument_name: z.string(),
  direction: directionSchema,
  quantity: z.number(),
  price: z.number(),
  counterparty_broker_name: z.string(),
  matched_at: z.string(),
}) satisfies z.ZodType<TradeConfirmation>;

export type Link = { orderId: string; token: string; step: Step };

const key = ({ orderId, token, step }: Link) => ['trade-confirmation', orderId, token, step] as const;

/** The trade a broker's e-mail link stands for; reading it changes nothing. */
export function useTradeConfirmation(link: Link) {
  return useQuery({
    queryKey: key(link),
    queryFn: ({ signal }) =>
      apiFetch(
        `/orders/${encodeURIComponent(link.orderId)}/confirmation?token=${encodeURIComponent(link.token)}&step=${link.step}`,
        { schema: tradeConfirmationSchema, signal },
      ),
    retry: false,
    staleTime: Infinity,
  });
}

/** The broker's answer: PATCH /orders/{id}?token= with {accepted} or {filled}. */
export function useConfirmTrade(link: Link) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (yes: boolean) => {
      const body: components['schemas']['ConfirmOrderRequest'] = link.step === 'ACCEPT' ? { accepted: yes } : { filled: yes };
      return apiFetch(`/orders/${encodeURIComponent(link.orderId)}?token=${encodeURIComponent(link.token)}`, {
        method: 'PATCH',
        body,
        schema: tradeConfirmationSchema,
      });
    },
    onSuccess: (c) => queryClient.setQueryData(key(link), c),
  });
}
