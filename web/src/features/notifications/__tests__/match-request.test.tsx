import { waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { db, type MockNotification } from '@/testing/mocks/db';
import { http, HttpResponse } from 'msw';
import { addMatchRequest, stomp, trading } from '@/testing/mocks/order-handlers';
import { server } from '@/testing/mocks/server';
import { renderApp, screen } from '@/testing/test-utils';

/** A pending request received (SELL 1000 at -0.020) and its unread notification. */
function received(secondsLeft = 300, overrides: Partial<MockNotification> = {}) {
  const expired_at = new Date(Date.now() + secondsLeft * 1000).toISOString();
  const m = addMatchRequest({ expired_at });
  const n: MockNotification = {
    notification_id: `n-${db.notifications.length + 1}`,
    type: 'MATCH_REQUEST_RECEIVED',
    status: 'PENDING',
    instrument_id: 'i-1',
    order_match_request_id: m.order_match_request_id,
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
    created_at: new Date().toISOString(),
    expired_at,
    ...overrides,
  };
  db.notifications.push(n);
  return { m, n };
}

/** The responder's preference accepted: the server's request, and the notice's frame. */
function answeredByPreference(m: ReturnType<typeof received>['m'], n: MockNotification) {
  m.state = 'ACCEPTED';
  m.answered_automatically = true;
  n.status = 'ACCEPTED';
  stomp.publish('/user/topic/notifications', { seq: 1, ...n });
}

const answers = () => trading.requests.filter((r) => r.method === 'PATCH' && r.path.startsWith('/api/order-match-requests/')).map((r) => r.body);

/** A request the responder's preference accepts in 2 s, open in the Review drawer (fake timers). */
async function reviewWithPreference(expiresIn?: number) {
  const { m, n } = received(expiresIn);
  m.auto_answer_at = new Date(Date.now() + 2_000).toISOString();
  m.auto_accept = true;
  const { user } = renderApp('/dashboard', { signedInAs: 'trader@acme.test', fakeTimers: true });
  const view = await screen.findByRole('dialog', { name: 'Match request' });
  await user.click(within(view).getByRole('button', { name: 'Review' }));
  const drawer = (await screen.findByRole('heading', { name: 'Match request', level: 2 })).closest('.MuiDrawer-paper') as HTMLElement;
  return { m, n, user, drawer };
}

describe('a match request received', () => {
  it('opens by itself with its terms and countdown; Review opens the drawer, Accept is celebrated', async () => {
    const { m } = received();
    const { user } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    const view = await screen.findByRole('dialog', { name: 'Match request' });
    expect(await within(view).findByText('You sell 1,000 at -0.020')).toBeInTheDocument();
    expect(within(view).getByRole('timer', { name: 'Time to action' })).toHaveTextContent(/Time to action(5:00|4:59)/);

    await user.click(within(view).getByRole('button', { name: 'Review' }));
    const drawer = (await screen.findByRole('heading', { name: 'Match request', level: 2 })).closest('.MuiDrawer-paper') as HTMLElement;
    expect(await within(drawer).findByText('You sell 1,000 at -0.020')).toBeInTheDocument();
    expect(within(drawer).getByRole('timer', { name: 'Time to action' })).toBeInTheDocument();
    await user.click(within(drawer).getByRole('button', { name: 'Accept' }));
    expect(await screen.findByRole('dialog', { name: 'Match request accepted' })).toBeInTheDocument();
    expect(answers()).toEqual([{ state: 'ACCEPTED' }]);
    expect(m.state).toBe('ACCEPTED');
    // The pending one was read once reviewed.
    await waitFor(() => expect(db.notifications[0]?.read).toBe(true));
  });

  it('asks before a rejection, with the Reliability Score, then closes', async () => {
    received();
    const { user } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    const view = await screen.findByRole('dialog', { name: 'Match request' });
    await user.click(within(view).getByRole('button', { name: 'Reject' }));
    let confirm = await screen.findByRole('dialog', { name: 'Are you sure you want to reject this offer?' });
    expect(confirm).toHaveTextContent('Rejecting cancels your working order and affects your Reliability Score (now 92%).');
    await user.click(within(confirm).getByRole('button', { name: 'Back' }));
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Are you sure you want to reject this offer?' })).not.toBeInTheDocument());
    expect(answers()).toEqual([]);

    await user.click(within(view).getByRole('button', { name: 'Reject' }));
    confirm = await screen.findByRole('dialog', { name: 'Are you sure you want to reject this offer?' });
    await user.click(within(confirm).getByRole('button', { name: 'Yes reject' }));
    await waitFor(() => expect(screen.queryByTestId('notification-view')).not.toBeInTheDocument());
    expect(answers()).toEqual([{ state: 'REJECTED' }]);
  });

  it('closes after a rejection whose own notice arrives before the answer', async () => {
    const { n } = received();
    // The server tells the notice, now REJECTED, over the socket before it answers the PATCH.
    server.use(
      http.patch('*/api/order-match-requests/:id', async ({ params }) => {
        const m = trading.matchRequests.find((x) => x.order_match_request_id === params.id)!;
        m.state = 'REJECTED';
        n.status = 'REJECTED';
        stomp.publish('/user/topic/notifications', { seq: 1, ...n });
        // Answered once the screen shows the frame: the pending view has gone.
        await screen.findByRole('dialog', { name: 'Match request rejected' });
        return HttpResponse.json(m);
      }),
    );
    const { user } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    const view = await screen.findByRole('dialog', { name: 'Match request' });
    await user.click(within(view).getByRole('button', { name: 'Reject' }));
    const confirm = await screen.findByRole('dialog', { name: 'Are you sure you want to reject this offer?' });
    await user.click(within(confirm).getByRole('button', { name: 'Yes reject' }));
    await waitFor(() => expect(screen.queryByTestId('notification-view')).not.toBeInTheDocument());
  });

  it("counts down to the responder's preference and then says the preference accepted (issue 28.5)", async () => {
    const { m, n } = received();
    m.auto_answer_at = new Date(Date.now() + 15_000).toISOString();
    m.auto_accept = true;
    renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    const view = await screen.findByRole('dialog', { name: 'Match request' });
    expect(await within(view).findByText('Your preference accepts in')).toBeInTheDocument();
    expect(within(view).getByRole('timer', { name: 'Time to action' })).toHaveTextContent(/accepts in0:1[45]/);
    // The preference answers: the server says so in the notice's frame, and the view stays to tell it.
    answeredByPreference(m, n);
    const told = await screen.findByRole('dialog', { name: 'Match request accepted' });
    expect(await within(told).findByText('Accepted automatically by your preference.')).toBeInTheDocument();
    expect(told).not.toHaveTextContent('You accepted');
  });

  it("keeps the drawer open past the preference's moment until the server's answer, then shows it", async () => {
    const { m, n, drawer } = await reviewWithPreference();
    expect(await within(drawer).findByText('Your preference accepts in')).toBeInTheDocument();
    // The browser's clock reaches the preference's moment before the server's frame comes.
    await vi.advanceTimersByTimeAsync(3000);
    expect(within(drawer).getByRole('button', { name: 'Accept' })).toBeDisabled();
    expect(screen.getByRole('heading', { name: 'Match request', level: 2 })).toBeInTheDocument();
    answeredByPreference(m, n);
    const told = await screen.findByRole('dialog', { name: 'Match request accepted' });
    expect(await within(told).findByText('Accepted automatically by your preference.')).toBeInTheDocument();
    expect(answers()).toEqual([]);
  });

  it("closes the drawer at the request's time-out when the preference never answers", async () => {
    await reviewWithPreference(5);
    await vi.advanceTimersByTimeAsync(3000);
    expect(screen.getByRole('heading', { name: 'Match request', level: 2 })).toBeInTheDocument();
    await vi.advanceTimersByTimeAsync(3000);
    await waitFor(() => expect(screen.queryByRole('heading', { name: 'Match request', level: 2 })).not.toBeInTheDocument());
    expect(answers()).toEqual([]);
  });

  it('leaves the answer to the responder when their preference could not answer', async () => {
    const { user, drawer } = await reviewWithPreference(60);
    // Past the preference's moment, its answer is waited for.
    await vi.advanceTimersByTimeAsync(3000);
    expect(within(drawer).getByRole('button', { name: 'Accept' })).toBeDisabled();
    // Past the grace, still pending (the server could not carry it out): the request's own
    // countdown, and the responder's buttons.
    await vi.advanceTimersByTimeAsync(5000);
    expect(within(drawer).getByRole('timer', { name: 'Time to action' })).toHaveTextContent(/^Time to action0:5[12]$/);
    expect(within(drawer).getByRole('button', { name: 'Reject' })).toBeEnabled();
    await user.click(within(drawer).getByRole('button', { name: 'Accept' }));
    await waitFor(() => expect(answers()).toEqual([{ state: 'ACCEPTED' }]));
  });

  it('closes by itself when the countdown ends', async () => {
    received(2);
    renderApp('/dashboard', { signedInAs: 'trader@acme.test', fakeTimers: true });
    const view = await screen.findByRole('dialog', { name: 'Match request' });
    expect(within(view).getByRole('button', { name: 'Review' })).toBeEnabled();
    await vi.advanceTimersByTimeAsync(3000);
    await waitFor(() => expect(screen.queryByTestId('notification-view')).not.toBeInTheDocument());
    expect(answers()).toEqual([]);
  });

  it('shows an ended request with its words and marks it read at once', async () => {
    received(300, { type: 'MATCH_REQUEST_CANCELLED', status: 'CANCELLED' });
    renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    const view = await screen.findByRole('dialog', { name: 'Match request withdrawn' });
    expect(view).toHaveTextContent('The counterparty withdrew the match request.');
    await waitFor(() => expect(db.notifications[0]?.read).toBe(true));
    expect(within(view).queryByRole('button', { name: 'Review' })).not.toBeInTheDocument();
  });

  // Spec section 4: the view's own titles, not the menu list's ('Match rejected', 'Order expired').
  it.each([
    { type: 'MATCH_REQUEST_REJECTED', status: 'REJECTED', role: 'REQUESTER', title: 'Match request rejected', text: 'Liquidity returned to the parent order.' },
    {
      type: 'MATCH_REQUEST_TIMED_OUT', status: 'TIMED_OUT', role: 'RESPONDER', title: 'Match request expired',
      text: 'The match request expired; liquidity returned to the parent order.',
    },
    {
      type: 'MATCH_REQUEST_SYSTEM_CANCELLED_OUT_OF_TICK_PRICE', status: 'SYSTEM_CANCELLED_PRICE_OUT_OF_TICK', role: 'REQUESTER',
      title: 'Match request cancelled', text: 'The market moved away from your match request’s price.',
    },
    {
      type: 'MATCH_REQUEST_SYSTEM_CANCELLED_OUT_OF_TICK_PRICE', status: 'SYSTEM_CANCELLED_PRICE_OUT_OF_TICK', role: 'RESPONDER',
      title: 'Match request cancelled', text: 'The market moved away from the price of the match request you received.',
    },
  ] as const)('titles the view of a $status notification to the $role $title', async ({ type, status, role, title, text }) => {
    received(300, { type, status, role });
    renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    const view = await screen.findByRole('dialog', { name: title });
    expect(within(view).getByRole('heading', { name: title })).toBeInTheDocument();
    expect(view).toHaveTextContent(text);
    expect(screen.queryByRole('dialog', { name: /^(Match rejected|Order expired)$/ })).not.toBeInTheDocument();
  });
});
