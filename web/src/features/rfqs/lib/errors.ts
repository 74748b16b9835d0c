import { ApiError } from '@/lib/api-errors';

/** Spec section 8: match and RFQ failures read '[status] data'. */
export function rfqError(error: unknown, fallback = 'The RFQ could not be sent.'): string | null {
  if (!error) return null;
  if (!(error instanceof ApiError)) return `[0] ${fallback}`;
  return `[${error.status}] ${error.detail ?? (typeof error.data === 'string' ? error.data : JSON.stringify(error.data ?? ''))}`;
}
