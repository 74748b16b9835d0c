import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { apiFetch } from '@/lib/api-client';
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
});
