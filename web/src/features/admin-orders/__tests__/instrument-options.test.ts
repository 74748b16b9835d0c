import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { server } from '@/testing/mocks/server';
import { getInstrumentOptions } from '../api/get-instrument-options';

describe('getInstrumentOptions', () => {
  it('reads every page of 200 until the total, so each instrument can be filtered on', async () => {
    const all = Array.from({ length: 450 }, (_, i) => ({ instrument_id: `i-${i}`, name: `Instrument ${String(i).padStart(3, '0')}` }));
    const asked: string[] = [];
    server.use(
      http.get('*/api/admin/instruments', ({ request }) => {
        const url = new URL(request.url);
        asked.push(url.search);
        const page = Number(url.searchParams.get('page'));
        const size = Number(url.searchParams.get('size'));
        return HttpResponse.json({ items: all.slice(page * size, (page + 1) * size), total_items: all.length });
      }),
    );
    const options = await getInstrumentOptions();
    expect(options.items.map((i) => i.instrument_id)).toEqual(all.map((i) => i.instrument_id));
    expect(asked).toEqual([0, 1, 2].map((p) => `?page=${p}&size=200&sort_by=name&order_by=ASC`));
  });

  it('stops at an empty page when the total shrinks meanwhile', async () => {
    let calls = 0;
    server.use(
      http.get('*/api/admin/instruments', () => {
        calls += 1;
        return HttpResponse.json(calls === 1 ? { items: [{ instrument_id: 'i-0', name: 'Only' }], total_items: 3 } : { items: [], total_items: 1 });
      }),
    );
    expect((await getInstrumentOptions()).items).toEqual([{ instrument_id: 'i-0', name: 'Only' }]);
    expect(calls).toBe(2);
  });
});
