import { queryOptions, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { DEFAULT_PRODUCT_NAME } from '@/config/constants';
import type { components } from './schema';

export type PublicConfig = components['schemas']['PublicConfig'];

export const publicConfigSchema = z.object({
  product_name: z.string(),
  support_email: z.string(),
  support_phone: z.string(),
  always_open: z.boolean(),
  disconnect_grace_seconds: z.number().int(),
});

export function getConfig(signal?: AbortSignal): Promise<PublicConfig> {
  return apiFetch('/config', { schema: publicConfigSchema, signal });
}

export const configQueryOptions = () =>
  queryOptions({ queryKey: ['config'], queryFn: ({ signal }) => getConfig(signal), staleTime: Infinity, retry: 1 });

const FALLBACK: PublicConfig = { product_name: DEFAULT_PRODUCT_NAME, support_email: '', support_phone: '', always_open: false, disconnect_grace_seconds: 10 };

/** Public configuration; while loading, the product name falls back to the default. */
export function useAppConfig(): PublicConfig {
  const { data } = useQuery(configQueryOptions());
  return data ?? FALLBACK;
}
