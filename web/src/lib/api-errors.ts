import { useSyncExternalStore } from 'react';

/** A failed API call, carrying the problem+json body when the server sent one. */
export class ApiError extends Error {
  readonly status: number;
  readonly data: unknown;
  readonly detail?: string;
  readonly fieldErrors: { field: string; message: string }[];

  constructor(status: number, data: unknown) {
    const problem = (typeof data === 'object' && data !== null ? data : {}) as {
      detail?: unknown;
      title?: unknown;
      errors?: unknown;
    };
    const detail = typeof problem.detail === 'string' ? problem.detail : undefined;
    super(detail ?? `Request failed with status ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.data = data;
    this.detail = detail;
    this.fieldErrors = Array.isArray(problem.errors)
      ? problem.errors.filter(
          (e): e is { field: string; message: string } =>
            typeof e?.field === 'string' && typeof e?.message === 'string',
        )
      : [];
  }
}

/** The detail of an API error, or the fallback text the spec gives for the screen. */
export function errorDetail(error: unknown, fallback: string): string {
  return error instanceof ApiError && error.detail ? error.detail : fallback;
}

// The last server error status is kept globally and cleared on the next
// success (spec section 8).
let lastErrorStatus: number | null = null;
const statusListeners = new Set<() => void>();

export function setLastErrorStatus(status: number | null) {
  if (status === lastErrorStatus) return;
  lastErrorStatus = status;
  statusListeners.forEach((l) => l());
}

export function getLastErrorStatus() {
  return lastErrorStatus;
}

export function useLastErrorStatus() {
  return useSyncExternalStore(
    (l) => {
      statusListeners.add(l);
      return () => statusListeners.delete(l);
    },
    getLastErrorStatus,
    getLastErrorStatus,
  );
}

// Error details shown in the red snackbar.
type DetailListener = (detail: string) => void;
const detailListeners = new Set<DetailListener>();

export function publishErrorDetail(detail: string) {
  detailListeners.forEach((l) => l(detail));
}

export function subscribeErrorDetails(listener: DetailListener) {
  detailListeners.add(listener);
  return () => {
    detailListeners.delete(listener);
  };
}
