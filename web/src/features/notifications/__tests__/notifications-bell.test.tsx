import { waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { MENU_WIDTH } from '@/features/notifications/components/notifications-bell';
import { db, type MockNotification } from '@/testing/mocks/db';
import { addMatchRequest, stomp } from '@/testing/mocks/order-handlers';
import { renderApp, screen } from '@/testing/test-utils';

function notification(overrides: Partial<MockNotification> = {}): MockNotification {
  return {
    notification_id: `n-${db.notifications.length + 1}`,
    type: 'MATCH_REQUEST_RECEIVED',
    status: 'PENDING',
    instrument_id: 'i-1',
    order_match_request_id: 'm-1',
    rfq_id: null,
    order_id: null,
    old_price: null,
    new_price: null,
    role: 'RESPONDER',
    requestor: { party: overrides.role === 'REQUESTER' ? 'YOU' : 'COUNTERPARTY' },
    direction: 'SELL',
    quantity: 1500,
    price: -0.02,
    read: false,
    archived: false,
    created_at: '2026-11-23T10:00:00Z',
    expired_at: '2026-11-23T10:05:00Z',
    ...overrides,
  };
}

describe('notifications bell', () => {
  it('says all is caught up when nothing is pending, and closes', async () => {
    const { user } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    await user.click(await screen.findByRole('button', { name: 'Notifications' }));
    const menu = await screen.findByRole('dialog', { name: 'Notifications' });
    expect(await within(menu).findByText("You're all caught up! No new notifications")).toBeInTheDocument();
    expect(MENU_WIDTH).toBeGreaterThanOrEqual(408);
    expect(MENU_WIDTH).toBeLessThanOrEqual(432);
    await user.click(within(menu).getByRole('button', { name: 'Close' }));
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Notifications' })).not.toBeInTheDocument());
  });

  it('lights with a pending request, lists active and history, and marks them read when opened', async () => {
    db.notifications.push(
      notification(),
      notification({ notification_id: 'n-old', order_match_request_id: 'm-2', type: 'MATCH_REQUEST_TIMED_OUT', status: 'TIMED_OUT', role: 'REQUESTER', read: true }),
      notification({ notification_id: 'n-rej', order_match_request_id: 'm-3', type: 'MATCH_REQUEST_REJECTED', status: 'REJECTED', role: 'REQUESTER', read: true }),
    );
    const { user } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    const bell = await screen.findByRole('button', { name: 'Notifications: 1 pending' });
    await user.click(bell);
    const menu = await screen.findByRole('dialog', { name: 'Notifications' });
    const active = within(menu).getByRole('region', { name: 'Active' });
    expect(within(active).getByText('Match request')).toBeInTheDocument();
    expect(await within(active).findByText('Euribor 3M Dec26-Mar27')).toBeInTheDocument();
    const history = within(menu).getByRole('region', { name: 'History' });
    // The list keeps its own titles (spec section 4); the view opened on its own says 'Match request expired'.
    expect(within(history).getByText('Order expired')).toBeInTheDocument();
    expect(within(history).getByText('Match rejected')).toBeInTheDocument();
    // Only the unread one is marked read.
    await waitFor(() => expect(db.notifications.map((n) => n.read)).toEqual([true, true, true]));
  });

  it("keeps a broker's decline and an operator's price correction in the history, the prices on the tick", async () => {
    db.notifications.push(
      notification({ notification_id: 'n-br', order_match_request_id: 'm-4', type: 'MATCH_REQUEST_BROKER_REJECTED', status: 'BREAKDOWN', role: 'REQUESTER', read: true }),
      notification({
        notification_id: 'n-pc', order_match_request_id: null, order_id: 'o-1', old_price: -0.02, new_price: -0.015,
        type: 'ORDER_PRICE_CORRECTED', status: 'ACCEPTED', read: true,
      }),
    );
    const { user } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    await user.click(await screen.findByRole('button', { name: 'Notifications' }));
    const history = within(await screen.findByRole('dialog', { name: 'Notifications' })).getByRole('region', { name: 'History' });
    expect(within(history).getByText('Trade declined by a broker')).toBeInTheDocument();
    expect(within(history).getByText(/its quantity is back on your parent order/)).toBeInTheDocument();
    expect(within(history).getByText('Limit price corrected')).toBeInTheDocument();
    expect(await within(history).findByText('The venue corrected the limit price of your working order from -0.020 to -0.015.')).toBeInTheDocument();
  });

  it('tells of an order cancelled on disconnect, opened by itself and kept in the history with its terms (issue 29)', async () => {
    db.notifications.push(
      notification({
        notification_id: 'n-cod', order_match_request_id: null, order_id: 'o-2', type: 'ORDER_CANCELLED_ON_DISCONNECT',
        status: 'CANCELLED', role: 'RESPONDER', direction: 'SELL', quantity: 2000, price: -0.025, read: false,
      }),
    );
    const { user } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    const view = await screen.findByRole('dialog', { name: 'Order cancelled on disconnect' });
    expect(await within(view).findByText(/^Sell 2,000 @ -0.025\. You were disconnected, so the venue cancelled your working order on .+, as you chose: its quantity is back on your parent order\.$/)).toBeInTheDocument();
    await user.click(within(view).getByRole('button', { name: 'Close' }));
    await user.click(await screen.findByRole('button', { name: 'Notifications' }));
    const history = within(await screen.findByRole('dialog', { name: 'Notifications' })).getByRole('region', { name: 'History' });
    expect(within(history).getByText('Order cancelled on disconnect')).toBeInTheDocument();
    expect(await within(history).findByText('Sell 2,000 @ -0.025')).toBeInTheDocument();
  });

  it('lists the trades made beside what ended without one, each with its side, quantity and price on the tick (issue 28.10)', async () => {
    db.notifications.push(
      notification({ notification_id: 'n-acc', order_match_request_id: 'm-5', type: 'MATCH_REQUEST_ACCEPTED', status: 'ACCEPTED', role: 'REQUESTER', direction: 'BUY', quantity: 2000, price: -0.025, read: true, created_at: '2026-11-23T10:03:00Z' }),
      notification({ notification_id: 'n-fill', order_match_request_id: 'm-6', status: 'BROKER_FILLED', quantity: 12500, read: true, created_at: '2026-11-23T10:02:00Z' }),
      notification({ notification_id: 'n-rej', order_match_request_id: 'm-7', type: 'MATCH_REQUEST_REJECTED', status: 'REJECTED', role: 'REQUESTER', direction: 'BUY', read: true, created_at: '2026-11-23T10:01:00Z' }),
    );
    const { user } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    await user.click(await screen.findByRole('button', { name: 'Notifications' }));
    const history = within(await screen.findByRole('dialog', { name: 'Notifications' })).getByRole('region', { name: 'History' });
    await expect.poll(() => within(history).queryAllByTestId('notification-terms').map((t) => t.textContent)).toEqual([
      'Buy 2,000 @ -0.025', 'Sell 12,500 @ -0.020', 'Buy 1,500 @ -0.020',
    ]);
    const entries = within(history).getAllByTestId('notification');
    expect(entries[0]).toHaveTextContent('Match request accepted');
    expect(entries[0]).toHaveTextContent('Your match request was accepted.');
    expect(entries[1]).toHaveTextContent('Trade filled');
    expect(entries[1]).toHaveTextContent('Matched and filled: both brokers reported the trade.');
    expect(entries[2]).toHaveTextContent('Match rejected');
    // Opened on its own, the view says the terms too.
    await user.click(entries[2]!.querySelector('[role="button"]') ?? entries[2]!);
    expect(await screen.findByText(/^Buy 1,500 @ -0\.020\. Liquidity returned to the parent order\.$/)).toBeInTheDocument();
  });

  it("lists the taker's own pending requests, with their terms and countdown, and reviews one to withdraw it", async () => {
    addMatchRequest({ role: 'REQUESTER', direction: 'BUY', quantity: 1500, price: -0.025 });
    addMatchRequest({ role: 'RESPONDER', direction: 'SELL', quantity: 500, price: -0.02 });
    const { user } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    await user.click(await screen.findByRole('button', { name: 'Notifications' }));
    const mine = await within(await screen.findByRole('dialog', { name: 'Notifications' })).findByRole('region', { name: 'Your requests' });
    const items = within(mine).getAllByTestId('own-request');
    expect(items).toHaveLength(1);
    expect(items[0]).toHaveTextContent('Buy 1,500 @ -0.025');
    expect(within(items[0]!).getByRole('timer')).toHaveTextContent(/^Waiting for the counterparty · [45]:\d\d left$/);
    await user.click(within(items[0]!).getByRole('button', { name: 'Your match request Buy 1,500 @ -0.025: review or withdraw' }));
    await user.click(await screen.findByRole('button', { name: 'Withdraw' }));
    expect(await screen.findByText('Match request withdrawn.')).toBeInTheDocument();
    await user.click(await screen.findByRole('button', { name: 'Notifications' }));
    const menu = await screen.findByRole('dialog', { name: 'Notifications' });
    await waitFor(() => expect(within(menu).queryByRole('region', { name: 'Your requests' })).toBeNull());
  });

  it('never opens a quote received on an RFQ that has ended: it goes to the history, read', async () => {
    db.notifications.push(
      notification({ notification_id: 'n-q1', type: 'RFQ_QUOTE_RECEIVED', status: 'TIMED_OUT', role: 'REQUESTER', order_match_request_id: null, rfq_id: 'r-1' }),
      notification({ notification_id: 'n-q2', type: 'RFQ_QUOTE_RECEIVED', status: 'CANCELLED', role: 'REQUESTER', order_match_request_id: null, rfq_id: 'r-2' }),
    );
    renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    await waitFor(() => expect(db.notifications.map((n) => n.read)).toEqual([true, true]));
    expect(screen.queryByRole('dialog', { name: 'Quote received' })).not.toBeInTheDocument();
    expect(await screen.findByRole('button', { name: 'Notifications' })).toBeInTheDocument();
  });

  it('lists one history entry per match request', async () => {
    // A responder told of a time-out: their notice of the request, now timed out, and the
    // notice of the time-out itself (newest first, as the server lists them).
    db.notifications.push(
      notification({ notification_id: 'n-told', type: 'MATCH_REQUEST_TIMED_OUT', status: 'TIMED_OUT', read: true, created_at: '2026-11-23T10:05:00Z' }),
      notification({ notification_id: 'n-got', status: 'TIMED_OUT', read: true }),
    );
    const { user } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    await user.click(await screen.findByRole('button', { name: 'Notifications' }));
    const menu = await screen.findByRole('dialog', { name: 'Notifications' });
    const history = within(menu).getByRole('region', { name: 'History' });
    expect(await within(history).findByText('Order expired')).toBeInTheDocument();
    expect(within(history).getAllByText('Order expired')).toHaveLength(1);
  });

  it.each([
    ['ACCEPTED', 'Quote accepted', 'The requester accepted your quote.'],
    ['REJECTED', 'RFQ closed', 'The RFQ was completed with another quote, or declined.'],
    ['TIMED_OUT', 'RFQ expired', 'The RFQ reached its deadline.'],
    ['CANCELLED', 'RFQ withdrawn', 'The requester withdrew the RFQ.'],
  ] as const)('titles the view of an RFQ received that ended %s: %s', async (status, title, text) => {
    db.notifications.push(notification({ type: 'RFQ_RECEIVED', status, order_match_request_id: null, rfq_id: 'q-1' }));
    renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('dialog', { name: title })).toHaveTextContent(text);
  });

  it('writes a pushed notification into the list without reading it again', async () => {
    const { queryClient } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('button', { name: 'Notifications' })).toBeInTheDocument();
    await waitFor(() => expect(stomp.subscriptions.some((s) => s.destination === '/user/topic/notifications')).toBe(true));
    await waitFor(() => expect(queryClient.isFetching({ queryKey: ['notifications'] })).toBe(0));
    const reads = db.notificationReads;
    expect(reads).toBeGreaterThan(0);
    // Not in the mock server's list: only the frames can tell these.
    stomp.publish('/user/topic/notifications', { seq: 1, ...notification({ read: true }) });
    expect(await screen.findByRole('button', { name: 'Notifications: 1 pending' })).toBeInTheDocument();
    // Its change (rejected) replaces it in place; then a second request comes in.
    stomp.publish('/user/topic/notifications', { seq: 2, ...notification({ notification_id: 'n-1', status: 'REJECTED', read: true }) });
    expect(await screen.findByRole('button', { name: 'Notifications' })).toBeInTheDocument();
    const next = notification({ notification_id: 'n-2', order_match_request_id: 'm-2', created_at: '2026-11-23T10:01:00Z', read: true });
    stomp.publish('/user/topic/notifications', { seq: 3, ...next });
    expect(await screen.findByRole('button', { name: 'Notifications: 1 pending' })).toBeInTheDocument();
    const held = queryClient.getQueryData<{ items: { notification_id: string }[] }>(['notifications']);
    expect(held?.items.map((n) => n.notification_id)).toEqual(['n-2', 'n-1']);
    expect(db.notificationReads).toBe(reads);
  });

  it('reads the list again when a notification frame was missed', async () => {
    const { queryClient } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    await waitFor(() => expect(stomp.subscriptions.some((s) => s.destination === '/user/topic/notifications')).toBe(true));
    await waitFor(() => expect(queryClient.isFetching({ queryKey: ['notifications'] })).toBe(0));
    stomp.publish('/user/topic/notifications', { seq: 1, ...notification({ notification_id: 'n-9', read: true }) });
    expect(await screen.findByRole('button', { name: 'Notifications: 1 pending' })).toBeInTheDocument();
    const reads = db.notificationReads;
    // Frame 2 never came: the list the server holds is the truth (here, empty).
    stomp.publish('/user/topic/notifications', { seq: 3, ...notification({ notification_id: 'n-10', read: true }) });
    await waitFor(() => expect(db.notificationReads).toBe(reads + 1));
    expect(await screen.findByRole('button', { name: 'Notifications' })).toBeInTheDocument();
  });
});
