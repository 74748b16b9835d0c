import { within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { CLOSING_WARNING_KEY } from '@/features/dashboard/components/closing-warning';
import { meQueryKey, type User } from '@/lib/api/get-me';
import { db } from '@/testing/mocks/db';
import { exchangeStatus, trading } from '@/testing/mocks/order-handlers';
import { server } from '@/testing/mocks/server';
import { renderApp, screen } from '@/testing/test-utils';

describe('dashboard without orders', () => {
  it("shows Getting started, 'No active orders yet' and the Add parent order button", async () => {
    renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('heading', { name: 'Getting started' })).toBeInTheDocument();
    expect(screen.getByText(/click Add Parent Order/)).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'No active orders yet' })).toBeInTheDocument();
    expect(await screen.findByRole('button', { name: 'Add parent order' })).toBeEnabled();
    expect(screen.queryByText(/is closed/)).not.toBeInTheDocument();
  });

  it('says the platform is closed outside operating hours (from the server calendar)', async () => {
    trading.status = { open: false, parent_orders_open: false, closing_soon: false };
    renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('heading', { name: 'Upstairs is closed' })).toBeInTheDocument();
    expect(screen.getByText('Operating hours are 9:00 AM to 5:00 PM (UK time, Monday to Friday only).')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Add parent order' })).toBeDisabled();
  });
});

describe('dashboard with exchange calendars', () => {
  it("takes parent orders while an exchange does, though the venue's own hours are over", async () => {
    trading.status = { open: false, parent_orders_open: false, closing_soon: false, exchanges: [exchangeStatus()] };
    renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('button', { name: 'Add parent order' })).toBeEnabled();
    expect(screen.queryByRole('heading', { name: 'Upstairs is closed' })).not.toBeInTheDocument();
  });

  it('says the platform is closed when every calendar is', async () => {
    trading.status = { open: false, parent_orders_open: false, closing_soon: false, exchanges: [exchangeStatus({ open: false, parent_orders_open: false })] };
    renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('heading', { name: 'Upstairs is closed' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Add parent order' })).toBeDisabled();
  });
});

describe('load from your execution system', () => {
  it('asks the execution system and says its orders are on their way', async () => {
    trading.executionSystemConnected = true;
    const { user } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    await user.click(await screen.findByRole('button', { name: 'Load from your execution system' }));
    expect(await screen.findByRole('status')).toHaveTextContent('Asked your execution system for its working orders: they appear here as they arrive.');
    expect(trading.requests).toContainEqual(expect.objectContaining({ method: 'POST', path: '/api/parent-orders/execution-system-pulls' }));
  });

  it("says so when the firm's execution system is not connected", async () => {
    const { user } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    await user.click(await screen.findByRole('button', { name: 'Load from your execution system' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Your firm has no execution system connected to the venue by FIX.');
    expect(screen.queryByRole('status')).not.toBeInTheDocument();
  });

  it('waits for the parent-order opening, as Add parent order does', async () => {
    trading.status = { open: false, parent_orders_open: false, closing_soon: false };
    renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('button', { name: 'Load from your execution system' })).toBeDisabled();
  });
});

describe('trading hours', () => {
  it('shows the configured hours in the top bar and the closed panel, never assumed ones', async () => {
    trading.status = { open: false, parent_orders_open: false, closing_soon: false, open_time: '08:30', close_time: '16:30' };
    renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('heading', { name: 'Upstairs is closed' })).toBeInTheDocument();
    expect(screen.getByText('Operating hours are 8:30 AM to 4:30 PM (UK time, Monday to Friday only).')).toBeInTheDocument();
    expect(await screen.findByTestId('trading-hours')).toHaveTextContent('Closed · 8:30 AM–4:30 PM UK time, Mon–Fri');
    expect(screen.queryByTestId('always-open-notice')).not.toBeInTheDocument();
    expect(document.body).not.toHaveTextContent(/9:00|5:00 PM|17:00/);
  });

  it('says plainly that the demo venue is open around the clock', async () => {
    trading.status = { open: true, parent_orders_open: true, closing_soon: false, always_open: true };
    renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByTestId('always-open-notice')).toHaveTextContent('Demo: the venue is open around the clock');
    expect(screen.getByTestId('trading-hours')).toHaveTextContent('Demo: open around the clock');
    expect(document.body).not.toHaveTextContent(/9:00|5:00 PM|Operating hours/);
  });

  it("shows one chip per exchange with its state, and its hours and why it is closed on hover (ADR 0052)", async () => {
    trading.status = {
      open: true,
      parent_orders_open: true,
      closing_soon: false,
      exchanges: [
        exchangeStatus({ open: false, parent_orders_open: false, holiday: { date: '2026-12-25', name: 'Christmas Day' }, next_open: '2026-12-28T08:00:00Z' }),
        exchangeStatus({
          mic: 'XEUR', name: 'Eurex', time_zone: 'Europe/Berlin', open_time: '01:10', close_time: '22:00', parent_orders_from: '01:00',
          days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'], open: false, parent_orders_open: true,
        }),
        exchangeStatus({ mic: 'XCME', name: 'CME', time_zone: 'America/Chicago' }),
      ],
    };
    renderApp('/user/account', { signedInAs: 'trader@acme.test' });
    const bar = await screen.findByTestId('trading-hours');
    expect(await within(bar).findByTestId('trading-hours-IFEU')).toHaveTextContent('IFEU · Closed');
    expect(within(bar).getByTestId('trading-hours-XEUR')).toHaveTextContent('XEUR · Opens soon');
    expect(within(bar).getByTestId('trading-hours-XCME')).toHaveTextContent('XCME · Open');
    expect(within(bar).getByTestId('trading-hours-IFEU')).toHaveAttribute(
      'title',
      expect.stringMatching(
        /^ICE Futures Europe \(IFEU\): Operating hours are 8:00 AM to 6:00 PM \(UK time, Monday to Friday only\)\. Closed today for Christmas Day\. It opens again .* at 8:00 AM UK time\.$/,
      ),
    );
    expect(within(bar).getByTestId('trading-hours-XEUR')).toHaveAttribute('title', 'Eurex (XEUR): Operating hours are 1:10 AM to 10:00 PM (Europe/Berlin time, Monday to Saturday only).');
    expect(within(bar).getByTestId('trading-hours-XCME')).toHaveAttribute('title', 'CME (XCME): Operating hours are 8:00 AM to 6:00 PM (America/Chicago time, Monday to Friday only).');
    // The venue's own chip stays first: the instruments of no such exchange follow it.
    expect(within(bar).getByTestId('trading-hours-venue')).toHaveTextContent('Open · 9:00 AM–5:00 PM UK time, Mon–Fri');
  });

  it("keeps the demo's chip with exchanges: it is open around the clock", async () => {
    trading.status = { open: true, parent_orders_open: true, closing_soon: false, always_open: true, exchanges: [exchangeStatus({ open: false, parent_orders_open: false })] };
    renderApp('/user/account', { signedInAs: 'trader@acme.test' });
    const bar = await screen.findByTestId('trading-hours');
    expect(bar).toHaveTextContent('Demo: open around the clock');
    expect(within(bar).queryByTestId('trading-hours-IFEU')).not.toBeInTheDocument();
  });

  it('keeps the hours in the top bar on every signed-in page', async () => {
    renderApp('/user/account', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByTestId('trading-hours')).toHaveTextContent('Open · 9:00 AM–5:00 PM UK time, Mon–Fri');
  });
});

describe('closing warning', () => {
  it('shows once a day when at most 15 minutes remain', async () => {
    trading.status = { open: true, parent_orders_open: true, closing_soon: true };
    const first = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    const dialog = await screen.findByRole('dialog', { name: 'Upstairs closes soon' });
    expect(within(dialog).getByText(/closes at 5:00 PM UK time\. Operating hours are 9:00 AM to 5:00 PM \(UK time, Monday to Friday only\)\./)).toBeInTheDocument();
    await first.user.click(within(dialog).getByRole('button', { name: 'OK' }));
    expect(localStorage.getItem(CLOSING_WARNING_KEY)).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    first.unmount();

    renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('heading', { name: 'Getting started' })).toBeInTheDocument();
    expect(screen.queryByRole('dialog', { name: 'Upstairs closes soon' })).not.toBeInTheDocument();
  });

  it("warns of an exchange's close too, once a day, after the venue's", async () => {
    trading.status = {
      open: true, parent_orders_open: true, closing_soon: true,
      exchanges: [exchangeStatus({ closing_soon: true }), exchangeStatus({ mic: 'XEUR', name: 'Eurex', time_zone: 'Europe/Berlin' })],
    };
    const { user } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    await user.click(within(await screen.findByRole('dialog', { name: 'Upstairs closes soon' })).getByRole('button', { name: 'OK' }));
    const dialog = await screen.findByRole('dialog', { name: 'ICE Futures Europe closes soon' });
    expect(dialog).toHaveTextContent(
      'ICE Futures Europe closes at 6:00 PM UK time. Operating hours are 8:00 AM to 6:00 PM (UK time, Monday to Friday only). Working orders on its instruments expire at the close',
    );
    await user.click(within(dialog).getByRole('button', { name: 'OK' }));
    expect(localStorage.getItem(`${CLOSING_WARNING_KEY}.IFEU`)).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    await expect.poll(() => screen.queryByRole('dialog', { name: /closes soon/ })).toBeNull();
  });
});

/** A promise held until `open` is called. */
function gate() {
  let open = () => {};
  const shut = new Promise<void>((resolve) => (open = resolve));
  return { shut, open: () => open() };
}

/** The next GET of the user answers `stale`, once `answer` is called. */
function staleReadOfMe(stale: User | undefined) {
  const held = gate();
  server.use(http.get('*/api/users/me', async () => (await held.shut, HttpResponse.json(stale)), { once: true }));
  return { answer: held.open };
}

describe('onboarding tooltips', () => {
  it("stores 'Got it' in ui_metadata under TOOLTIPS", async () => {
    const { user } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    const tip = await screen.findByTestId('tip-FIRST_PARENT_ORDER');
    await user.click(within(tip).getByRole('button', { name: 'Got it' }));
    await expect.poll(() => db.user().ui_metadata).toEqual([{ key: 'TOOLTIPS', value: [{ key: 'FIRST_PARENT_ORDER', read: true }] }]);
    await expect.poll(() => screen.queryByTestId('tip-FIRST_PARENT_ORDER')).toBeNull();
  });

  it('a read of the user answered after the PATCH does not bring a tip back', async () => {
    const { user, queryClient } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    const tip = await screen.findByTestId('tip-FIRST_PARENT_ORDER');
    // A background read (as a drawer mounting with a stale user starts) leaves before the
    // click and is answered, with the user as it was, only after the PATCH.
    const read = staleReadOfMe(queryClient.getQueryData<User>(meQueryKey));
    const reading = queryClient.refetchQueries({ queryKey: meQueryKey });
    await user.click(within(tip).getByRole('button', { name: 'Got it' }));
    await expect.poll(() => screen.queryByTestId('tip-FIRST_PARENT_ORDER')).toBeNull();
    read.answer();
    await reading;
    expect(screen.queryByTestId('tip-FIRST_PARENT_ORDER')).not.toBeInTheDocument();
    expect(queryClient.getQueryData<User>(meQueryKey)?.ui_metadata).toEqual([
      { key: 'TOOLTIPS', value: [{ key: 'FIRST_PARENT_ORDER', read: true }] },
    ]);
  });

  it('a read of the user set off while the PATCH is on its way and answered after it does not bring a tip back', async () => {
    const { user, queryClient } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    const tip = await screen.findByTestId('tip-FIRST_PARENT_ORDER');
    // The PATCH is held until a background read (a window focused again with a stale user)
    // has set off; the read is answered, with the user as it was, only after the PATCH.
    const read = staleReadOfMe(queryClient.getQueryData<User>(meQueryKey));
    const sent = gate();
    const patch = gate();
    // Returns nothing: the request goes on to the mock API's own PATCH once let go.
    server.use(http.patch('*/api/users/:userId', async () => (sent.open(), await patch.shut), { once: true }));
    await user.click(within(tip).getByRole('button', { name: 'Got it' }));
    await sent.shut;
    const reading = queryClient.refetchQueries({ queryKey: meQueryKey });
    patch.open();
    await expect.poll(() => screen.queryByTestId('tip-FIRST_PARENT_ORDER')).toBeNull();
    read.answer();
    await reading;
    expect(screen.queryByTestId('tip-FIRST_PARENT_ORDER')).not.toBeInTheDocument();
    expect(queryClient.getQueryData<User>(meQueryKey)?.ui_metadata).toEqual([
      { key: 'TOOLTIPS', value: [{ key: 'FIRST_PARENT_ORDER', read: true }] },
    ]);
  });

  it('shows nothing for steps already read', async () => {
    db.user().ui_metadata = [{ key: 'TOOLTIPS', value: [{ key: 'FIRST_PARENT_ORDER', read: true }] }];
    renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('button', { name: 'Add parent order' })).toBeInTheDocument();
    expect(screen.queryByTestId('tip-FIRST_PARENT_ORDER')).not.toBeInTheDocument();
  });
});
