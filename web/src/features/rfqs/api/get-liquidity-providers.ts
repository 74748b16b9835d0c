import { useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';

const providersSchema = z.array(
  z.object({ company_id: z.string(), name: z.string() }) satisfies z.ZodType<components['schemas']['CompanyRefDto']>,
);

/** GET /liquidity-providers: the firms an RFQ can be sent to. */
export function useLiquidityProviders(enabled: boolean) {
  return useQuery({
    queryKey: ['liquidity-providers'],
    queryFn: ({ signal }) => apiFetch('/liquidity-providers', { schema: providersSchema, signal }),
    enabled,
    staleTime: 60_000,
  });
}
