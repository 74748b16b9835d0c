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
};

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
  { method = 'GET', body, schema, signal, token: tokenOverride }: Options<S> = {},
): Promise<Result<S>> {
  const token = tokenOverride ?? getToken();
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;

  const res = await fetch(new URL(`/api${path}`, window.location.origin), {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  const data = await readBody(res);

  if (!res.ok) {
    const error = new ApiError(res.status, data);
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
