import { within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import type { components } from '@/lib/api/schema';
import { db } from '@/testing/mocks/db';
import { server } from '@/testing/mocks/server';
import { renderApp, screen, typeDate } from '@/testing/test-utils';

type Log = components['schemas']['ActionLogDto'];

const ADMIN = 'ada@upstairs.test';

/** 60 rows, one a minute from 09:00 UTC, alternating between two users, the last by the venue itself. */
function rows(): Log[] {
  return Array.from({ length: 60 }, (_, i) => ({
    action_log_id: `log-${String(i).padStart(2, '0')}`,
    entity: i % 3 === 0 ? 'order' : 'parent_order',
    entity_id: `e-${i}`,
    operation: i % 2 === 0 ? 'create' : 'cancel',
    user:
      i === 59
        ? null
        : i % 2 === 0
          ? { user_id: 'u-tess', email: 'tess@halyard.test', company_name: 'Halyard' }
          : { user_id: 'u-kai', email: 'kai@kestrel.test', company_name: 'Kestrel' },
    created_at: new Date(Date.UTC(2026, 10, 24, 9, i)).toISOString(),
    details: { n: i, after: { quantity: 1000 + i, iceberg: false } },
  }));
}

/** The server's action log over `data`: the spec's params, answered like the real one. */
function serve(data: Log[] = rows(), answer?: () => Response) {
  const asked: URLSearchParams[] = [];
  server.use(
    http.get('*/api/admin/action-logs', ({ request }) => {
      const q = new URL(request.url).searchParams;
      asked.push(q);
      if (answer) return answer();
      const email = (q.get('email') ?? '').toLowerCase();
      const sortBy = (q.get('sort_by') ?? 'created_at') as 'created_at' | 'entity' | 'operation' | 'email';
      const desc = q.get('order_by') === 'DESC';
      const key = (l: Log) => (sortBy === 'email' ? (l.user?.email ?? '') : l[sortBy]);
      const matching = data
        .filter((l) => !email || (l.user?.email.includes(email) ?? false))
        .sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : b.created_at.localeCompare(a.created_at)) * (key(a) === key(b) ? 1 : desc ? -1 : 1));
      const page = Number(q.get('page')), size = Number(q.get('size'));
      return HttpResponse.json({ items: matching.slice(page * size, (page + 1) * size), total_items: matching.length });
    }),
  );
  return asked;
}

function asAdmin(options: { fakeTimers?: boolean } = {}) {
  db.addUser({ user_id: 'u-admin', email: ADMIN, roles: ['upstairs-admin'], company_id: 'c-upstairs', company_name: 'Upstairs' });
  return renderApp('/admin/action-logs', { signedInAs: ADMIN, ...options });
}

const bodyRows = async () => within(await screen.findByRole('table', { name: 'Action logs' })).getAllByRole('row').slice(1);

describe('action logs', () => {
  it('lists a page of 50, newest first, with the total, and pages on the server', async () => {
    const asked = serve();
    const { user } = asAdmin();
    expect(await screen.findByRole('heading', { name: 'Action logs' })).toBeInTheDocument();
    const list = await bodyRows();
    expect(list).toHaveLength(50);
    expect(asked[0]!.toString()).toBe('page=0&size=50&sort_by=created_at&order_by=DESC&automatic_band_moves=false');
    // The newest row: the venue's own, shown as System.
    expect(within(list[0]!).getAllByRole('cell').map((c) => c.textContent)).toEqual(['24/11/2026 09:59:00', 'System', 'parent_order', 'cancel', 'Details']);
    expect(within(list[1]!).getByText('tess@halyard.test')).toBeInTheDocument();
    expect(within(list[1]!).getByText('Halyard')).toBeInTheDocument();
    expect(screen.getByText('1–50 of 60')).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Go to next page' }));
    await expect.poll(async () => (await bodyRows()).length).toBe(10);
    expect(asked.at(-1)!.get('page')).toBe('1');
    expect(screen.getByText('51–60 of 60')).toBeInTheDocument();
    expect(within((await bodyRows())[0]!).getByText('24/11/2026 09:09:00')).toBeInTheDocument();

    await user.click(screen.getByRole('combobox', { name: /Rows per page/ }));
    await user.click(await screen.findByRole('option', { name: '25' }));
    await expect.poll(() => asked.at(-1)?.toString()).toBe('page=0&size=25&sort_by=created_at&order_by=DESC&automatic_band_moves=false');
    expect(await bodyRows()).toHaveLength(25);
  });

  it('filters by e-mail after 500 ms and goes back to the first page', async () => {
    const asked = serve();
    const { user } = asAdmin({ fakeTimers: true });
    await bodyRows();
    await user.click(screen.getByRole('button', { name: 'Go to next page' }));
    await expect.poll(() => asked.at(-1)?.get('page')).toBe('1');
    const before = asked.length;
    await user.type(screen.getByRole('textbox', { name: 'E-mail' }), 'KAI@');
    expect(asked.length).toBe(before);
    await vi.advanceTimersByTimeAsync(500);
    await expect.poll(() => asked.at(-1)?.get('email')).toBe('KAI@');
    expect(asked.slice(before).map((q) => q.get('email'))).toEqual(['KAI@']);
    expect(asked.at(-1)!.get('page')).toBe('0');
    await expect.poll(async () => (await bodyRows()).length).toBe(29);
    expect((await bodyRows()).every((r) => within(r).queryByText('kai@kestrel.test'))).toBe(true);
    expect(screen.getByText('1–29 of 29')).toBeInTheDocument();

    await user.clear(screen.getByRole('textbox', { name: 'E-mail' }));
    await user.type(screen.getByRole('textbox', { name: 'E-mail' }), 'nobody');
    await vi.advanceTimersByTimeAsync(500);
    expect(await screen.findByText('No action log entry matches these filters.')).toBeInTheDocument();
    // The filter stays, so the admin can change it.
    expect(screen.getByRole('textbox', { name: 'E-mail' })).toHaveValue('nobody');
  });

  it('filters by entity, operation and band moves, and shows the time to the second (issue 28.18)', async () => {
    const asked = serve();
    const { user } = asAdmin();
    const rows = await bodyRows();
    expect(within(rows[0]!).getByText(/^\d\d\/\d\d\/\d{4} \d\d:\d\d:\d\d$/)).toBeInTheDocument();
    await user.click(screen.getByRole('combobox', { name: 'Entity' }));
    await user.click(await screen.findByRole('option', { name: 'instrument' }));
    await expect.poll(() => asked.at(-1)?.get('entity')).toBe('instrument');
    await user.type(screen.getByRole('textbox', { name: 'Operation' }), 'band');
    await expect.poll(() => asked.at(-1)?.get('operation'), { timeout: 2000 }).toBe('band');
    expect(asked.at(-1)!.get('automatic_band_moves')).toBe('false');
    await user.click(screen.getByRole('switch', { name: 'Automatic band moves' }));
    await expect.poll(() => asked.at(-1)?.has('automatic_band_moves')).toBe(false);
    expect(asked.at(-1)!.get('page')).toBe('0');
  });

  it('filters by a time range typed as DD/MM/YYYY HH:mm:ss, to the second, and says an end before the start', async () => {
    const asked = serve();
    const { user } = asAdmin();
    await bodyRows();
    await typeDate(user, 'From', '24/11/2026 09:15:30');
    const from = new Date(2026, 10, 24, 9, 15, 30).toISOString();
    await expect.poll(() => asked.at(-1)?.get('from')).toBe(from);
    expect(screen.getByRole('group', { name: 'From' })).toHaveTextContent('24/11/2026 09:15:30');
    await typeDate(user, 'Until', '24/11/2026 09:15:29');
    expect(await screen.findByText('Must be after the start')).toBeInTheDocument();
    expect(asked.at(-1)!.has('until')).toBe(false);
    await typeDate(user, 'Until', '24/11/2026 09:20:00');
    await expect.poll(() => asked.at(-1)?.get('until')).toBe(new Date(2026, 10, 24, 9, 20).toISOString());
    expect(screen.queryByText('Must be after the start')).toBeNull();
  });

  it('sorts by a column: time newest first, the others A to Z, again to reverse', async () => {
    const asked = serve();
    const { user } = asAdmin();
    await bodyRows();
    await user.click(screen.getByRole('button', { name: 'User' }));
    await expect.poll(() => asked.at(-1)?.toString()).toBe('page=0&size=50&sort_by=email&order_by=ASC&automatic_band_moves=false');
    await expect.poll(async () => within((await bodyRows())[0]!).getAllByRole('cell')[1]!.textContent).toBe('System');
    expect(screen.getByRole('columnheader', { name: /User/ })).toHaveAttribute('aria-sort', 'ascending');
    await user.click(screen.getByRole('button', { name: 'User' }));
    await expect.poll(() => asked.at(-1)?.get('order_by')).toBe('DESC');
    await expect.poll(async () => within((await bodyRows())[0]!).getByText('tess@halyard.test')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Operation' }));
    await expect.poll(() => asked.at(-1)?.toString()).toBe('page=0&size=50&sort_by=operation&order_by=ASC&automatic_band_moves=false');
    await user.click(screen.getByRole('button', { name: 'Entity' }));
    await expect.poll(() => asked.at(-1)?.toString()).toBe('page=0&size=50&sort_by=entity&order_by=ASC&automatic_band_moves=false');
    // Back to the time, newest first: that page is still cached (spec: 900 s).
    await user.click(screen.getByRole('button', { name: 'Time' }));
    await expect.poll(async () => within((await bodyRows())[0]!).getAllByRole('cell')[0]!.textContent).toBe('24/11/2026 09:59:00');
    expect(screen.getByRole('columnheader', { name: /Time/ })).toHaveAttribute('aria-sort', 'descending');
    await user.click(screen.getByRole('button', { name: 'Time' }));
    await expect.poll(() => asked.at(-1)?.get('order_by')).toBe('ASC');
    await expect.poll(async () => within((await bodyRows())[0]!).getAllByRole('cell')[0]!.textContent).toBe('24/11/2026 09:00:00');
  });

  it('shows an entry’s details payload, by keyboard too', async () => {
    serve();
    const { user } = asAdmin();
    const row = (await bodyRows())[1]!;
    await user.click(within(row).getByRole('button', { name: /^Details/ }));
    const dialog = await screen.findByRole('dialog', { name: 'parent_order · create' });
    expect(within(dialog).getByText('tess@halyard.test (Halyard)')).toBeInTheDocument();
    expect(within(dialog).getByText('parent_order e-58')).toBeInTheDocument();
    expect(within(dialog).getByTestId('action-log-details').textContent).toBe(
      JSON.stringify({ n: 58, after: { quantity: 1058, iceberg: false } }, null, 2),
    );
    await user.keyboard('{Escape}');
    await expect.poll(() => screen.queryByRole('dialog')).toBeNull();

    // Tab to the first row's button, Enter opens it, the Close button closes it.
    const first = within((await bodyRows())[0]!).getByRole('button', { name: /^Details/ });
    first.focus();
    await user.keyboard('{Enter}');
    const system = await screen.findByRole('dialog', { name: 'parent_order · cancel' });
    expect(within(system).getByText('System (no user)')).toBeInTheDocument();
    expect(within(system).getByRole('button', { name: 'Close' })).toHaveFocus();
    await user.keyboard('{Enter}');
    await expect.poll(() => screen.queryByRole('dialog')).toBeNull();
    await expect.poll(() => document.activeElement).toBe(first);
  });

  it('says when nothing has been logged yet', async () => {
    serve([]);
    asAdmin();
    expect(await screen.findByText('No action has been logged yet.')).toBeInTheDocument();
  });

  it('shows the server’s error with a retry', async () => {
    let fail = true;
    const asked = serve(rows(), () =>
      fail
        ? HttpResponse.json({ type: 'about:blank', title: 'Internal Server Error', status: 500, detail: 'Something broke.' }, { status: 500, headers: { 'content-type': 'application/problem+json' } })
        : HttpResponse.json({ items: rows().slice(0, 2), total_items: 2 }),
    );
    const { user } = asAdmin();
    expect(await screen.findByText('Oops! There was an error.')).toBeInTheDocument();
    fail = false;
    await user.click(screen.getByRole('button', { name: 'Retry' }));
    expect(await bodyRows()).toHaveLength(2);
    expect(asked.length).toBeGreaterThanOrEqual(2);
  });

  it('is for venue admins only: a trader gets no access and nothing is asked', async () => {
    const asked = serve();
    renderApp('/admin/action-logs', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('heading', { name: 'No access' })).toBeInTheDocument();
    expect(asked).toEqual([]);
  });

  it('is not in a sales user’s drawer and tells them they have no access', async () => {
    const asked = serve();
    db.addUser({ email: 'sam@upstairs.test', roles: ['upstairs-sales'] });
    const { user } = renderApp('/admin/action-logs', { signedInAs: 'sam@upstairs.test' });
    expect(await screen.findByRole('heading', { name: 'No access' })).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Open menu' }));
    const nav = await screen.findByRole('navigation', { name: 'Main menu' });
    expect(within(nav).queryByRole('link', { name: 'Action logs' })).toBeNull();
    expect(asked).toEqual([]);
  });
});
