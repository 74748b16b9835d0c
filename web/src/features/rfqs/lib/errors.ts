import { ApiError, publishErrorDetail } from '@/lib/api-errors';

/** Spec section 8: match and RFQ failures read '[status] data'. */
export function rfqError(error: unknown, fallback = 'The RFQ could not be sent.'): string | null {
  if (!error) return null;
  if (!(error instanceof ApiError)) return `[0] ${fallback}`;
  return `[${error.status}] ${error.detail ?? (typeof error.data === 'string' ? error.data : JSON.stringify(error.data ?? ''))}`;
}

/**
 * Shows a failed RFQ action where every API error shows: the red snackbar, which goes
 * away by itself. It replaces the snackbar's bare detail with the '[status] data' text,
 * so one error shows once.
 */
export function showFailure(error: unknown, fallback: string) {
  publishErrorDetail(rfqError(error, fallback) ?? `[0] ${fallback}`);
}
