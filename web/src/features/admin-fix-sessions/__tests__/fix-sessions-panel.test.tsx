import { act, within } from '@testing-library/react';
import dayjs from 'dayjs';
import { http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { admin } from '@/testing/mocks/admin-handlers';
import { db } from '@/testing/mocks/db';
import { server } from '@/testing/mocks/server';
import { renderApp, screen } from '@/testing/test-utils';

const ADMIN = 'ada@upstairs.test';

function asAdmin(options: { fakeTimers?: boolean } = {}) {
  db.addUser({ user_id: 'u-admin', email: ADMIN, first_name: 'Ada', last_name: 'Admin', roles: ['upstairs-admin'], company_id: 'c-upstairs', company_name: 'Upstairs' });
  return renderApp('/admin/fix-sessions', { signedInAs: ADMIN, ...options });
}

const session = (name: string, over: Record<string, unknown> = {}) => ({
  company_id: `c-${name.toLowerCase()}`,
  company_name: name,
  fix_comp_id: name.toUpperCase(),
  state: 'NEVER',
  next_sender_seq: 1,
  next_target_seq: 1,
  last_message_at: null,
  ...over,
});

const LAST = '2026-11-24T10:15:42Z';

/** Answers GET /admin/fix-sessions with what `items()` gives at the time of the call, counting the calls. */
const ACCEPTOR = { address: '10.0.0.7:9878', tls: true, comp_id: 'UPSTAIRS' };

function answer(items: () => unknown[], acceptor: typeof ACCEPTOR | null = ACCEPTOR, marketData: unknown = null) {
  const calls = { count: 0 };
  server.use(
    http.get('*/api/admin/fix-sessions', () => {
      calls.count += 1;
      return HttpResponse.json({ items: items(), acceptor, market_data: marketData });
    }),
  );
  return calls;
}

async function bodyRows() {
  const table = await screen.findByRole('table', { name: 'FIX sessions' });
  return within(table).getAllByRole('row').slice(1);
}

describe('the market-data session', () => {
  it('shows the provider, its state, node, symbols, last price and stale instruments', async () => {
    const md = {
      provider: '10.0.0.9:9880',
      sender_comp_id: 'UPSTAIRS-MD',
      target_comp_id: 'PROVIDER',
      state: 'LOGGED_ON',
      node_id: 'node-a',
      since: '2026-11-24T08:00:00Z',
      last_price_at: LAST,
      symbols: 6,
      stale_instruments: 2,
    };
    answer(() => [session('Baltic')], ACCEPTOR, md);
    asAdmin();
    const table = await screen.findByRole('table', { name: 'Market-data session' });
    expect(within(table).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Provider', 'CompIDs', 'State', 'Node', 'Symbols', 'Last price', 'Stale instruments']);
    const cells = within(table).getAllByRole('row').slice(1).map((r) => within(r).getAllByRole('cell').map((c) => c.textContent));
    expect(cells).toEqual([['10.0.0.9:9880', 'UPSTAIRS-MD → PROVIDER', 'Logged on', 'node-a', '6', dayjs(LAST).format('DD/MM/YYYY HH:mm'), '2']]);
  });

  it('says when the venue has no market-data session', async () => {
    answer(() => [session('Baltic')]);
    asAdmin();
    expect(await screen.findByTestId('market-data-session')).toHaveTextContent("No market-data session: bands move only by the operator's band call.");
    expect(screen.queryByRole('table', { name: 'Market-data session' })).not.toBeInTheDocument();
  });
});

describe('FIX sessions', () => {
  it('lists each session with its state, sequence numbers both ways and last message', async () => {
    answer(() => [
      session('Baltic', { state: 'LOGGED_OFF', next_sender_seq: 12, next_target_seq: 9, last_message_at: '2026-11-23T17:30:00Z' }),
      session('Halyard'),
      session('Northgate', { state: 'LOGGED_ON', next_sender_seq: 3, next_target_seq: 5, last_message_at: LAST }),
    ]);
    asAdmin();
    expect(await screen.findByRole('heading', { name: 'FIX sessions', level: 1 })).toBeInTheDocument();
    const table = await screen.findByRole('table', { name: 'FIX sessions' });
    expect(within(table).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Company', 'CompID', 'State', 'Seq in', 'Seq out', 'Last message']);
    const cells = (await bodyRows()).map((r) => within(r).getAllByRole('cell').map((c) => c.textContent));
    // In the server's order; Seq in is what the venue expects next, Seq out what it sends next.
    expect(cells).toEqual([
      ['Baltic', 'BALTIC', 'Logged off', '9', '12', dayjs('2026-11-23T17:30:00Z').format('DD/MM/YYYY HH:mm')],
      ['Halyard', 'HALYARD', 'Never', '1', '1', '—'],
      ['Northgate', 'NORTHGATE', 'Logged on', '5', '3', dayjs(LAST).format('DD/MM/YYYY HH:mm')],
    ]);
    const [baltic, halyard, northgate] = await bodyRows();
    expect(within(northgate!).getByText('Logged on').closest('.MuiChip-root')).toHaveClass('MuiChip-colorSuccess');
    expect(within(baltic!).getByText('Logged off').closest('.MuiChip-root')).toHaveClass('MuiChip-colorWarning');
    expect(within(halyard!).getByText('Never').closest('.MuiChip-root')).toHaveClass('MuiChip-colorDefault');
    expect(within(northgate!).getByText(dayjs(LAST).format('DD/MM/YYYY HH:mm'))).toHaveAttribute('title', LAST);
  });

  it('asks again every 5 s while open, and at once on Refresh', async () => {
    let state = 'NEVER';
    const calls = answer(() => [session('Northgate', { state })]);
    const { user, unmount } = asAdmin({ fakeTimers: true });
    await screen.findByText('Never');
    expect(calls.count).toBe(1);

    state = 'LOGGED_ON';
    await act(() => vi.advanceTimersByTimeAsync(4_000));
    expect(calls.count).toBe(1);
    await act(() => vi.advanceTimersByTimeAsync(1_000));
    expect(await screen.findByText('Logged on')).toBeInTheDocument();
    expect(calls.count).toBe(2);

    // From the keyboard; the button stays enabled (and focused) while the screen asks again.
    state = 'LOGGED_OFF';
    const refresh = screen.getByRole('button', { name: 'Refresh' });
    act(() => refresh.focus());
    await user.keyboard('{Enter}');
    expect(await screen.findByText('Logged off')).toBeInTheDocument();
    expect(calls.count).toBe(3);
    expect(screen.getByText(/^Updated at \d\d:\d\d:\d\d$/)).toBeInTheDocument();
    await act(() => vi.advanceTimersByTimeAsync(5_000));
    expect(calls.count).toBe(4);
    expect(refresh).toHaveFocus();

    // Closed, the screen asks nothing more.
    unmount();
    await act(() => vi.advanceTimersByTimeAsync(15_000));
    expect(calls.count).toBe(4);
  });

  it('says where this node accepts sessions, or that FIX is off on it', async () => {
    answer(() => [session('Halyard')]);
    const first = asAdmin();
    expect(await screen.findByTestId('fix-acceptor')).toHaveTextContent('This node accepts FIX 4.4 sessions on 10.0.0.7:9878 (TLS), TargetCompID UPSTAIRS.');
    first.unmount();
    answer(() => [session('Halyard')], null);
    asAdmin();
    expect(await screen.findByText(/^FIX is off on this node: no session can log on here\./)).toBeInTheDocument();
  });

  it('says when no company has a FIX CompID yet', async () => {
    answer(() => []);
    asAdmin();
    expect(await screen.findByText('No company has a FIX CompID yet.')).toBeInTheDocument();
    expect(screen.queryByRole('table', { name: 'FIX sessions' })).not.toBeInTheDocument();
  });

  it('lists the companies given a CompID in the companies panel (the mock server), never logged on', async () => {
    Object.assign(admin.companies.find((c) => c.name === 'Northgate')!, { fix_comp_id: 'NORTHGATE' });
    asAdmin();
    const [row, ...rest] = await bodyRows();
    expect(rest).toEqual([]);
    expect(row).toHaveTextContent(/^NorthgateNORTHGATENever11—$/);
    expect(admin.requests.map((r) => r.path)).toEqual(['/api/admin/fix-sessions']);
  });

  it('shows the error with a Retry that asks again', async () => {
    let fail = true;
    server.use(
      http.get('*/api/admin/fix-sessions', () =>
        fail ? HttpResponse.json({ status: 500, detail: 'Internal error.' }, { status: 500 }) : HttpResponse.json({ items: [session('Halyard')], acceptor: ACCEPTOR, market_data: null }),
      ),
    );
    const { user } = asAdmin();
    const card = (await screen.findByRole('heading', { name: 'Oops! There was an error.' })).closest<HTMLElement>('[role="alert"]')!;
    expect(card).toHaveTextContent('500: {"status":500,"detail":"Internal error."}');
    fail = false;
    await user.click(within(card).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByText('HALYARD')).toBeInTheDocument();
  });

  it('is for venue admins only', async () => {
    db.addUser({ email: 'sam@upstairs.test', roles: ['upstairs-sales'] });
    renderApp('/admin/fix-sessions', { signedInAs: 'sam@upstairs.test' });
    expect(await screen.findByRole('heading', { name: 'No access' })).toBeInTheDocument();
    expect(admin.requests).toEqual([]);
  });
});
