import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { IDEMPOTENT_TRIES, apiFetch } from '@/lib/api-client';
import { ApiError, getLastErrorStatus } from '@/lib/api-errors';
import { formatDateTime, formatShortDate } from '@/lib/format-date';
import { server } from '@/testing/mocks/server';

describe('date formats', () => {
  it('formats as DD/MM/YYYY HH:mm and DD/MM/YY', () => {
    const d = new Date(2026, 0, 7, 8, 5);
    expect(formatDateTime(d)).toBe('07/01/2026 08:05');
    expect(formatShortDate(d)).toBe('07/01/26');
    expect(formatDateTime(null)).toBe('');
  });
});

describe('api client', () => {
  it('keeps the last error status until the next success', async () => {
    server.use(
      http.get('*/api/fail', () => HttpResponse.json({ status: 409, title: 'Conflict', detail: 'Nope' }, { status: 409 })),
      http.get('*/api/ok', () => HttpResponse.json({})),
    );
    const error = await apiFetch('/fail').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).detail).toBe('Nope');
    expect(getLastErrorStatus()).toBe(409);
    await apiFetch('/ok');
    expect(getLastErrorStatus()).toBeNull();
  });

  it('sends one Idempotency-Key per write and the same one again when the connection fails', async () => {
    const seen: (string | null)[] = [];
    server.use(
      http.post('*/api/orders', ({ request }) => {
        seen.push(request.headers.get('Idempotency-Key'));
        return seen.length < IDEMPOTENT_TRIES ? HttpResponse.error() : HttpResponse.json({ ok: true }, { status: 201 });
      }),
    );
    await apiFetch('/orders', { method: 'POST', body: {}, idempotent: true });
    expect(seen).toHaveLength(IDEMPOTENT_TRIES);
    expect(seen[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(seen).size).toBe(1);

    // The next action is another key; a write without the option is never sent twice.
    await apiFetch('/orders', { method: 'POST', body: {}, idempotent: true }).catch(() => undefined);
    expect(seen[IDEMPOTENT_TRIES]).not.toBe(seen[0]);
    seen.length = 0;
    const error = await apiFetch('/orders', { method: 'POST', body: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(seen).toEqual([null]);
  });
});
