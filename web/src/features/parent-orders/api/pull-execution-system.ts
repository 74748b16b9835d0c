import { useMutation } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';

const pullSchema = z.object({ request_id: z.string(), requested_at: z.string() });

/**
 * POST /parent-orders/execution-system-pulls: asks the firm's execution system, over its
 * live FIX session, for its working orders (ADR 0050). They arrive as parent-order frames;
 * a 409 says the execution system is not connected, and is shown where the button is.
 */
export function pullExecutionSystem() {
  return apiFetch('/parent-orders/execution-system-pulls', { method: 'POST', schema: pullSchema, quiet: [409] });
}

export function usePullExecutionSystem() {
  return useMutation({ mutationFn: pullExecutionSystem });
}
