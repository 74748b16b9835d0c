import { within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { admin } from '@/testing/mocks/admin-handlers';
import { db } from '@/testing/mocks/db';
import { stomp } from '@/testing/mocks/order-handlers';
import { server } from '@/testing/mocks/server';
import { renderApp, screen } from '@/testing/test-utils';
import { bandPaths } from '../components/band-chart-dialog';
import { dec } from '@/lib/decimal';

const ADMIN = 'ada@upstairs.test';

function asAdmin(path: string, options: { fakeTimers?: boolean } = {}) {
  db.addUser({ user_id: 'u-admin', email: ADMIN, first_name: 'Ada', last_name: 'Admin', roles: ['upstairs-admin'], company_id: 'c-upstairs', company_name: 'Upstairs' });
  return renderApp(path, { signedInAs: ADMIN, ...options });
}

async function drawer(title: string) {
  return screen.findByRole('form', { name: title });
}

describe('instruments panel', () => {
  it('debounces the name filter 500 ms and sorts by column', async () => {
    const { user } = asAdmin('/admin/instrument', { fakeTimers: true });
    await screen.findByRole('table', { name: 'Instruments' });
    const before = admin.requests.length;
    await user.type(screen.getByRole('textbox', { name: 'Name' }), 'eur');
    expect(admin.requests.length).toBe(before);
    await vi.advanceTimersByTimeAsync(500);
    await expect.poll(() => admin.requests.at(-1)?.path).toContain('name=eur');
    expect(admin.requests.slice(before).filter((r) => r.path.includes('name=e&') || r.path.includes('name=eu&'))).toEqual([]);

    await user.click(screen.getByRole('button', { name: 'Term' }));
    await expect.poll(() => admin.requests.at(-1)?.path).toContain('sort_by=term');
    expect(admin.requests.at(-1)?.path).toContain('order_by=ASC');
    await user.click(screen.getByRole('button', { name: 'Term' }));
    await expect.poll(() => admin.requests.at(-1)?.path).toContain('order_by=DESC');
    await user.click(screen.getByRole('combobox', { name: 'Active' }));
    await user.click(await screen.findByRole('option', { name: 'Inactive' }));
    await expect.poll(() => admin.requests.at(-1)?.path).toContain('active=false');
  });

  it("follows an instrument's band from its book frames (issue 28.20)", async () => {
    asAdmin('/admin/instrument');
    const row = (await screen.findByRole('cell', { name: 'Euribor 3M Dec26-Mar27' })).closest('tr') as HTMLElement;
    expect(within(row).getByText('-0.040')).toBeInTheDocument();
    await expect.poll(() => stomp.subscriptions.map((s) => s.destination)).toContain('/topic/instruments/ai-1/book');
    stomp.publish('/topic/instruments/ai-1/book', { seq: 1, instrument_id: 'ai-1', tick_size: 0.005, min_tick_price: -0.035, max_tick_price: -0.01, levels: [] });
    expect(await within(row).findByText('-0.035')).toBeInTheDocument();
    expect(within(row).getByText('-0.010')).toBeInTheDocument();
  });

  it("charts an instrument's band over a chosen period, in ticks", async () => {
    const asked: URL[] = [];
    server.use(
      http.get('*/api/instruments/:id/band-history', ({ request }) => {
        const url = new URL(request.url);
        asked.push(url);
        const from = url.searchParams.get('from') as string;
        return HttpResponse.json([
          { at: from, min_tick_price: -0.04, max_tick_price: -0.015 },
          { at: new Date(Date.parse(from) + 60_000).toISOString(), min_tick_price: -0.035, max_tick_price: -0.01 },
        ]);
      }),
    );
    const { user } = asAdmin('/admin/instrument');
    await user.click(await screen.findByRole('button', { name: 'Band chart of Euribor 3M Dec26-Mar27' }));
    const dialog = await screen.findByRole('dialog', { name: 'Band of Euribor 3M Dec26-Mar27' });
    const chart = await within(dialog).findByRole('img', { name: /^Best bid and offer of Euribor 3M Dec26-Mar27 from .* to .*: from -0\.040 to -0\.010$/ });
    expect(chart).toBeInTheDocument();
    expect(within(dialog).getByText('Lowest bid -0.040')).toBeInTheDocument();
    expect(within(dialog).getByText('Highest offer -0.010')).toBeInTheDocument();
    // The last 24 hours, then the last hour when chosen.
    const hours = (u: URL) => (Date.parse(u.searchParams.get('to') as string) - Date.parse(u.searchParams.get('from') as string)) / 3_600_000;
    expect(hours(asked[0] as URL)).toBe(24);
    await user.click(within(dialog).getByRole('button', { name: '1 hour' }));
    await expect.poll(() => asked.length).toBe(2);
    expect(hours(asked[1] as URL)).toBe(1);
    expect(asked[1]?.pathname).toBe('/api/instruments/ai-1/band-history');
    await user.click(within(dialog).getByRole('button', { name: 'Close' }));
    expect(screen.queryByRole('dialog', { name: 'Band of Euribor 3M Dec26-Mar27' })).not.toBeInTheDocument();
  });

  it('draws the band in whole ticks: the lowest bid at the bottom, the highest offer at the top', () => {
    const from = Date.parse('2026-11-28T10:00:00Z');
    const points = [
      { at: '2026-11-28T10:00:00Z', min_tick_price: 94.7, max_tick_price: 94.75 },
      { at: '2026-11-28T10:30:00Z', min_tick_price: 94.75, max_tick_price: 94.8 },
    ];
    const paths = bandPaths(points, dec('0.05'), from, from + 3_600_000);
    // Two ticks apart: the bid's first step at the bottom (228), its second one up a tick
    // (half the height), to the period's end.
    expect(paths?.bid).toBe('M8.0,228.0 L320.0,228.0 L320.0,120.0 L632.0,120.0');
    expect(paths?.offer).toBe('M8.0,120.0 L320.0,120.0 L320.0,12.0 L632.0,12.0');
    expect(bandPaths([], dec('0.05'), from, from + 1)).toBeNull();
  });

  it('creates the first instrument from the empty list', async () => {
    admin.instruments = [];
    const { user } = asAdmin('/admin/instrument');
    expect(await screen.findByText('No instrument matches these filters.')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Create instrument' }));
    const form = await drawer('Create instrument');
    const fill = async (name: RegExp, value: string) => user.type(within(form).getByRole('textbox', { name }), value);
    await fill(/^Name/, 'Brent Crude Dec26-Jun27');
    await fill(/^Term/, 'Dec26-Jun27');
    await fill(/^Currency/, 'USD');
    await fill(/^Tick size/, '0.01');
    await fill(/^Minimum block size/, '100');
    await fill(/^Best bid/, '1.18');
    expect(within(form).getByRole('textbox', { name: /^Best offer/ })).toHaveValue('1.28');
    await fill(/^Exchange id/, 'B');
    await user.click(within(form).getByRole('button', { name: 'Create instrument' }));
    expect(await screen.findByText('Brent Crude Dec26-Jun27 created.')).toBeInTheDocument();
    expect(admin.requests.find((r) => r.method === 'POST')?.body).toMatchObject({ min_tick_price: 1.18, max_tick_price: 1.28, exchange_tick_size: null, min_quantity: 100 });
    expect(await screen.findByRole('table', { name: 'Instruments' })).toHaveTextContent('Brent Crude Dec26-Jun27');
  });

  it('edits the band: one side sets the other 10 ticks away, off-tick prices are invalid', async () => {
    const { user } = asAdmin('/admin/instrument');
    await user.click(await screen.findByRole('button', { name: 'Edit Euribor 3M Dec26-Mar27' }));
    const form = await drawer('Edit Euribor 3M Dec26-Mar27');
    const bid = within(form).getByRole('textbox', { name: 'Best bid' });
    const offer = within(form).getByRole('textbox', { name: 'Best offer' });
    expect([bid, offer].map((i) => (i as HTMLInputElement).value)).toEqual(['-0.040', '-0.015']);
    await user.clear(bid);
    await user.type(bid, '-0.030');
    expect(offer).toHaveValue('0.020');
    await user.clear(offer);
    await user.type(offer, '0.010');
    expect(bid).toHaveValue('-0.040');
    await user.type(offer, '1');
    expect(within(form).getByText('Invalid value')).toBeInTheDocument();
    expect(within(form).getByRole('button', { name: 'Save changes' })).toBeDisabled();
    await user.clear(offer);
    await user.type(offer, '0.010');
    await user.clear(within(form).getByRole('textbox', { name: 'Minimum block size' }));
    expect(within(form).getByText('Minimum block size is required')).toBeInTheDocument();
    await user.type(within(form).getByRole('textbox', { name: 'Minimum block size' }), '750');
    await user.click(within(form).getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByText('Euribor 3M Dec26-Mar27 updated.')).toBeInTheDocument();
    expect(admin.requests.find((r) => r.method === 'PATCH')?.body).toMatchObject({ min_tick_price: -0.04, max_tick_price: 0.01, min_quantity: 750, tick_size: 0.005 });
  });

  it('edits an instrument without an exchange tick size: empty is sent as null, a typed one as its exact decimal', async () => {
    admin.instruments[0]!.exchange_tick_size = null;
    const { user } = asAdmin('/admin/instrument');
    await user.click(await screen.findByRole('button', { name: 'Edit Euribor 3M Dec26-Mar27' }));
    const form = await drawer('Edit Euribor 3M Dec26-Mar27');
    const exchangeTick = within(form).getByRole('textbox', { name: 'Exchange tick size' });
    expect(exchangeTick).toHaveValue('');
    expect(within(form).queryByText(/null/)).not.toBeInTheDocument();
    await user.click(within(form).getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByText('Euribor 3M Dec26-Mar27 updated.')).toBeInTheDocument();
    const patches = () => admin.requests.filter((r) => r.method === 'PATCH');
    expect(patches()).toHaveLength(1);
    expect(patches()[0]!.body).toMatchObject({ exchange_tick_size: null, tick_size: 0.005, min_tick_price: -0.04, max_tick_price: -0.015 });

    await user.click(await screen.findByRole('button', { name: 'Edit Euribor 3M Dec26-Mar27' }));
    const again = await drawer('Edit Euribor 3M Dec26-Mar27');
    await user.type(within(again).getByRole('textbox', { name: 'Exchange tick size' }), '0.0025');
    await user.click(within(again).getByRole('button', { name: 'Save changes' }));
    await expect.poll(() => patches().length).toBe(2);
    expect(patches()[1]!.body).toMatchObject({ exchange_tick_size: 0.0025 });

    // Emptied again: cleared on the server (null), not left as it was.
    await user.click(await screen.findByRole('button', { name: 'Edit Euribor 3M Dec26-Mar27' }));
    const third = await drawer('Edit Euribor 3M Dec26-Mar27');
    expect(within(third).getByRole('textbox', { name: 'Exchange tick size' })).toHaveValue('0.0025');
    await user.clear(within(third).getByRole('textbox', { name: 'Exchange tick size' }));
    await user.click(within(third).getByRole('button', { name: 'Save changes' }));
    await expect.poll(() => patches().length).toBe(3);
    expect(patches()[2]!.body).toMatchObject({ exchange_tick_size: null });
  });
});
