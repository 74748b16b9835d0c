import type { z } from 'zod';
import { ApiError, publishErrorDetail, setLastErrorStatus } from './api-errors';
import { endSession, getToken } from './auth-token';

type Options<S extends z.ZodType | undefined> = {
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  body?: unknown;
  schema?: S;
  signal?: AbortSignal;
  /** Use this token instead of the stored one (right after sign-in). */
  token?: string;
  /**
   * A write the user made once: it goes with one `Idempotency-Key`, and when the
   * connection fails before an answer it is sent again with the same key, so the
   * server acts on it at most once.
   */
  idempotent?: boolean;
  /**
   * Statuses the caller answers itself (a 404 that means 'there is none'): still thrown as an
   * `ApiError`, but not shown in the error snackbar nor kept as the last error status.
   */
  quiet?: number[];
};

/** Tries of an idempotent write whose connection fails before an answer. */
export const IDEMPOTENT_TRIES = 3;

/** A random UUID v4 (also outside secure contexts, where crypto.randomUUID is missing). */
export function newIdempotencyKey(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

type Result<S> = S extends z.ZodType ? z.infer<S> : void;

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Calls the server under /api with the bearer token. A 401 on an
 * authenticated call ends the session; an error with a detail is published to
 * the snackbar while signed in; the last error status is tracked globally.
 */
export async function apiFetch<S extends z.ZodType | undefined = undefined>(
  path: string,
  { method = 'GET', body, schema, signal, token: tokenOverride, idempotent = false, quiet = [] }: Options<S> = {},
): Promise<Result<S>> {
  const token = tokenOverride ?? getToken();
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  if (idempotent) headers['Idempotency-Key'] = newIdempotencyKey();

  const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal };
  const url = new URL(`/api${path}`, window.location.origin);
  let res: Response;
  for (let attempt = 1; ; attempt++) {
    try {
      res = await fetch(url, init);
      break;
    } catch (e) {
      // Only a write with a key is safe to send again; an abort is the caller's.
      if (!idempotent || attempt >= IDEMPOTENT_TRIES || signal?.aborted) throw e;
    }
  }
  const data = await readBody(res);

  if (!res.ok) {
    const error = new ApiError(res.status, data);
    if (quiet.includes(res.status)) throw error;
    setLastErrorStatus(res.status);
    if (res.status === 401 && token) {
      endSession();
    } else if (error.detail && token) {
      publishErrorDetail(error.detail);
    }
    throw error;
  }
  setLastErrorStatus(null);
  return (schema ? schema.parse(data) : undefined) as Result<S>;
}
