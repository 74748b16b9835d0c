import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { apiFetch } from '@/lib/api-client';
import { ApiError, getLastErrorStatus } from '@/lib/api-errors';
import { formatDateTime, formatShortDate } from '@/lib/format-date';
import { isPlatformOpen } from '@/lib/platform-hours';
import { server } from '@/testing/mocks/server';

describe('date formats', () => {
  it('formats as DD/MM/YYYY HH:mm and DD/MM/YY', () => {
    const d = new Date(2026, 0, 7, 8, 5);
    expect(formatDateTime(d)).toBe('07/01/2026 08:05');
    expect(formatShortDate(d)).toBe('07/01/26');
    expect(formatDateTime(null)).toBe('');
  });
});

describe('platform hours', () => {
  it('is open 9:00 to 17:00 UK time on weekdays', () => {
    expect(isPlatformOpen(new Date('2026-07-06T08:00:00Z'))).toBe(true); // Monday 09:00 BST
    expect(isPlatformOpen(new Date('2026-07-06T07:59:00Z'))).toBe(false);
    expect(isPlatformOpen(new Date('2026-07-06T15:59:00Z'))).toBe(true);
    expect(isPlatformOpen(new Date('2026-07-06T16:00:00Z'))).toBe(false); // 17:00 BST
    expect(isPlatformOpen(new Date('2026-01-05T16:30:00Z'))).toBe(true); // Monday 16:30 GMT
    expect(isPlatformOpen(new Date('2026-07-04T12:00:00Z'))).toBe(false); // Saturday
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
