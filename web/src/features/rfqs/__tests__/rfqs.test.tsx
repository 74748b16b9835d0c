import { within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { db } from '@/testing/mocks/db';
import { addIncomingRfq, addParent, rfqResponse, stomp, trading, type MockIncomingRfq, type MockRfqResponse } from '@/testing/mocks/order-handlers';
import { renderApp, screen } from '@/testing/test-utils';

const ALL_TIPS_READ = [
  {
    key: 'TOOLTIPS',
    value: ['FIRST_PARENT_ORDER', 'INTERACT_WITH_ORDERBOOK', 'LEAVING_LIQUIDITY_IN_ORDERBOOK', 'FIRST_ICEBERG_ORDER', 'TAKING_LIQUIDITY_IN_ORDERBOOK'].map((key) => ({ key, read: true })),
  },
];

function signIn() {
  db.user().ui_metadata = ALL_TIPS_READ;
  return renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
}

const lastRequest = (method: string, path: string) => trading.requests.filter((r) => r.method === method && r.path.startsWith(path)).at(-1);

describe('requests for quote', () => {
  it('validates and sends an RFQ, shows quotes as they arrive, and accepts one', async () => {
    const parent = addParent({ direction: 'BUY', quantity: 3000 });
    const { user } = signIn();
    // The first render of the whole dashboard: slow on a loaded 2-core CI machine (it once took 5.3 s).
    await user.click(await screen.findByRole('button', { name: 'Request quotes' }, { timeout: 10_000 }));
    const drawer = await screen.findByRole('heading', { name: 'Create RFQ' }).then((h) => h.closest('form') as HTMLElement);
    const send = within(drawer).getByRole('button', { name: 'Send RFQ' });
    const quantity = within(drawer).getByRole('textbox', { name: 'Quantity' });
    const minutes = within(drawer).getByRole('textbox', { name: 'Deadline (minutes)' });
    expect(minutes).toHaveValue('2');
    expect(send).toBeDisabled();

    await user.type(quantity, '400');
    expect(within(drawer).getByText('Min block size: 500')).toBeInTheDocument();
    await user.clear(quantity);
    await user.type(quantity, '3500');
    expect(within(drawer).getByText('Exceeds available quantity')).toBeInTheDocument();
    await user.clear(quantity);
    await user.type(quantity, '2000');
    await user.clear(minutes);
    await user.type(minutes, '16');
    expect(within(drawer).getByText('A whole number of minutes from 1 to 15')).toBeInTheDocument();
    await user.clear(minutes);
    await user.type(minutes, '5');
    expect(send).toBeDisabled();
    await user.click(within(drawer).getByRole('combobox', { name: 'Liquidity providers' }));
    await user.click(await screen.findByRole('option', { name: 'Meridian' }));
    await user.click(within(drawer).getByRole('button', { name: 'Two way' }));
    await user.click(within(drawer).getByRole('switch', { name: 'Hide identity' }));
    expect(send).toBeEnabled();
    await user.click(send);

    expect(await screen.findByText('Your RFQ has been sent')).toBeInTheDocument();
    expect(screen.getByText('Waiting for quotes from liquidity providers')).toBeInTheDocument();
    expect(lastRequest('POST', '/api/rfqs')?.body).toEqual({
      parent_order_id: parent.parent_order_id,
      quantity: 2000,
      two_way: true,
      anonymous: true,
      liquidity_provider_ids: ['lp-1'],
      expires_in_seconds: 300,
    });

    // The panel lists it, pending; a quote arrives over /user/topic/rfqs.
    const panel = await screen.findByRole('region', { name: 'Active RFQs' });
    expect(await within(panel).findByText('Pending')).toBeInTheDocument();
    const accept = within(panel).getByRole('button', { name: 'Accept the quote of Meridian' });
    expect(accept).toBeDisabled();
    const rfq = trading.rfqs[0]!;
    rfq.responses = [rfqResponse(rfq.rfq_id, 'Meridian', { state: 'RESPONDED', buy_price: -0.03, buy_quantity: 2000, sell_price: -0.025, sell_quantity: 1500 })];
    // The frame carries the RFQ as the list shows it: written in, with no read of the list.
    const listReads = () => trading.requests.filter((r) => r.method === 'GET' && r.path === '/api/rfqs?state=OPEN').length;
    const reads = listReads();
    expect(reads).toBeGreaterThan(0);
    stomp.publish('/user/topic/rfqs', { type: 'RFQ_UPDATED', seq: 1, ...rfq });
    expect(await within(panel).findByText('Received')).toBeInTheDocument();
    expect(listReads()).toBe(reads);
    await expect.poll(() => within(panel).getByRole('button', { name: 'Accept the quote of Meridian' })).toBeEnabled();

    // Minimised: the bar counts active RFQs and quotes received.
    await user.click(within(panel).getByRole('button', { name: 'Minimise the active RFQs' }));
    const bar = await screen.findByTestId('rfq-bar');
    expect(bar).toHaveTextContent('Active RFQs: 1');
    expect(bar).toHaveTextContent('Quotes received: 1');
    await user.click(within(bar).getByRole('button', { name: 'Maximise the active RFQs' }));

    // A requote lands on the server just before the click, unseen by the panel: the accept
    // names the quote shown, the server refuses it, the panel reads the new quote.
    const again = await screen.findByRole('region', { name: 'Active RFQs' });
    Object.assign(rfq.responses[0]!, { sell_price: -0.02, sell_quantity: 1000 });
    expect(within(again).getByRole('table', { name: 'Quotes' })).toHaveTextContent('-0.025 × 1,500');
    await user.click(within(again).getByRole('button', { name: 'Accept the quote of Meridian' }));
    expect(lastRequest('PATCH', `/api/rfqs/${rfq.rfq_id}/responses/`)?.body).toEqual({ state: 'ACCEPTED', price: -0.025, quantity: 1500 });
    // One error surface, red: the snackbar with the '[status] data' text, no toast beside it.
    await expect.poll(() => screen.queryByTestId('api-error-snackbar')?.textContent).toBe('[409] The quote has changed: check the new price and accept again.');
    expect(screen.getByTestId('api-error-snackbar').className).toMatch(/MuiAlert-(filledError|colorError)/);
    expect(screen.queryByTestId('toast')?.textContent ?? '').not.toContain('[409]');
    await expect.poll(() => within(again).getByRole('table', { name: 'Quotes' }).textContent).toContain('-0.020 × 1,000');
    // Accepted as now shown. Buying: the requester takes the provider's offer.
    await user.click(within(again).getByRole('button', { name: 'Accept the quote of Meridian' }));
    expect(await screen.findByText('RFQ trade completed!')).toBeInTheDocument();
    expect(screen.getByText('You just completed your RFQ on the Euribor 3M Dec26-Mar27. Matched at -0.020 for 1,000')).toBeInTheDocument();
    expect(lastRequest('PATCH', `/api/rfqs/${rfq.rfq_id}/responses/`)?.body).toEqual({ state: 'ACCEPTED', price: -0.02, quantity: 1000 });
    // Completed: no longer open, the panel goes.
    await expect.poll(() => screen.queryByRole('region', { name: 'Active RFQs' })).toBeNull();
  });

  it('lets a liquidity provider quote on the tick or decline', async () => {
    const rfq = addIncomingRfq({ direction: 'BUY', quantity: 2000 });
    addIncomingRfq({ direction: null, two_way: true, requester_company_name: 'Kestrel', quantity: 1000 });
    const { user } = signIn();
    const section = await screen.findByRole('region', { name: 'RFQs for you' });
    const cards = within(section).getAllByRole('group');
    expect(cards).toHaveLength(2);
    const [first, second] = cards as [HTMLElement, HTMLElement];
    expect(first).toHaveTextContent('Requester buys');
    expect(first).toHaveTextContent('Anonymous');
    expect(second).toHaveTextContent('Two way');
    expect(second).toHaveTextContent('Kestrel');
    // Asked to sell only: an offer price, on the 0.005 tick inside the band.
    expect(within(first).queryByRole('textbox', { name: 'Bid price' })).toBeNull();
    const offer = await within(first).findByRole('textbox', { name: 'Offer price' });
    await user.type(offer, '-0.027');
    expect(within(first).getByText('Invalid tick value')).toBeInTheDocument();
    await user.clear(offer);
    await user.type(offer, '-0.05');
    expect(within(first).getByText('Must be between electronic price')).toBeInTheDocument();
    await user.clear(offer);
    await user.type(offer, '-0.03');
    await user.click(within(first).getByRole('button', { name: 'Increase the offer price by one tick' }));
    expect(offer).toHaveValue('-0.025');
    const offered = within(first).getByRole('textbox', { name: 'Offer quantity' });
    await user.clear(offered);
    await user.type(offered, '2500');
    expect(within(first).getByText('Exceeds the RFQ quantity')).toBeInTheDocument();
    await user.clear(offered);
    await user.type(offered, '1500');
    await user.click(within(first).getByRole('button', { name: 'Send quote' }));
    expect(await screen.findByText('Your quote has been sent')).toBeInTheDocument();
    expect(lastRequest('POST', `/api/rfqs/${rfq.rfq_id}/responses`)?.body).toEqual({ sell_price: -0.025, sell_quantity: 1500 });
    expect(await within(first).findByText('Received')).toBeInTheDocument();
    expect(within(first).getByRole('button', { name: 'Update quote' })).toBeInTheDocument();

    await user.click(within(second).getByRole('button', { name: 'Decline' }));
    expect(await screen.findByText('RFQ declined')).toBeInTheDocument();
    expect(lastRequest('POST', `/api/rfqs/${trading.incoming[1]!.rfq_id}/responses`)?.body).toEqual({ state: 'REJECTED_BY_RESPONDER' });
  });
});

describe("a liquidity provider's RFQs of the day", () => {
  /** An RFQ of today whose response has ended in `state`, with the quote given if any. */
  function ended(state: MockRfqResponse['state'], quote: Partial<MockRfqResponse> = {}, overrides: Partial<MockIncomingRfq> = {}) {
    const past = new Date(Date.now() - 60_000).toISOString();
    const r = addIncomingRfq({ state: 'EXPIRED', expired_at: past, expires_in_seconds: 0, ...overrides });
    Object.assign(r.response, { state, ...quote });
    return r;
  }

  it('keeps the open ones with their form and countdown, and lists the ended ones of today below with their state and quote', async () => {
    const open = addIncomingRfq({ direction: 'BUY', quantity: 2000 });
    ended('ACCEPTED', { sell_price: -0.025, sell_quantity: 1500 }, { state: 'COMPLETED', requester_company_name: 'Kestrel' });
    ended('REJECTED_BY_REQUESTER', { sell_price: -0.03, sell_quantity: 2000 }, { state: 'COMPLETED' });
    ended('REJECTED_BY_RESPONDER', {}, { direction: 'SELL', state: 'CANCELLED' });
    ended('EXPIRED', { buy_price: -0.035, buy_quantity: 1000, sell_price: -0.02, sell_quantity: 1000 }, { direction: null, two_way: true });
    ended('CANCELLED', {}, { state: 'CANCELLED' });
    signIn();
    const section = await screen.findByRole('region', { name: 'RFQs for you' });

    // The open one, as before: a form and a countdown.
    const cards = within(section).getAllByRole('group');
    expect(cards).toHaveLength(1);
    expect(await within(cards[0]!).findByRole('textbox', { name: 'Offer price' })).toBeInTheDocument();
    expect(within(cards[0]!).getByLabelText('Time left')).toHaveTextContent(/^(2:00|1:59)$/);
    expect(within(cards[0]!).getByText('Pending')).toBeInTheDocument();

    // The ended ones: the spec's state labels and the quote given, newest first as sent, no form or countdown.
    const earlier = within(section).getByRole('region', { name: 'Earlier today' });
    expect(within(earlier).getByRole('heading', { name: 'Earlier today' })).toBeInTheDocument();
    const rows = within(earlier).getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getAllByRole('cell')[5]!.textContent)).toEqual(['Completed', 'Rejected', 'Rejected', 'Expired', 'Cancelled']);
    expect(rows.map((r) => within(r).getAllByRole('cell')[4]!.textContent)).toEqual([
      'Offer -0.025 × 1,500', 'Offer -0.030 × 2,000', '—', 'Bid -0.035 × 1,000 / Offer -0.020 × 1,000', '—',
    ]);
    expect(rows[0]).toHaveTextContent('Kestrel');
    expect(rows[2]).toHaveTextContent('Requester sells');
    expect(rows[3]).toHaveTextContent('Two way');
    expect(within(earlier).queryByRole('textbox')).toBeNull();
    expect(within(earlier).queryByRole('button')).toBeNull();
    expect(within(earlier).queryByLabelText('Time left')).toBeNull();
    expect(open.response.state).toBe('AWAITING_RESPONSE');
  });

  it('hides an open RFQ whose countdown reaches zero; the ended ones stay', async () => {
    addIncomingRfq({ expired_at: new Date(Date.now() + 2_000).toISOString(), expires_in_seconds: 2 });
    ended('EXPIRED', { sell_price: -0.025, sell_quantity: 1500 });
    db.user().ui_metadata = ALL_TIPS_READ;
    renderApp('/dashboard', { signedInAs: 'trader@acme.test', fakeTimers: true });
    const section = await screen.findByRole('region', { name: 'RFQs for you' });
    expect(await within(section).findByRole('group')).toBeInTheDocument();
    await vi.advanceTimersByTimeAsync(3_000);
    await expect.poll(() => within(section).queryByRole('group')).toBeNull();
    // The card hides itself at zero; the list drops it on the render after (its effect).
    await expect.poll(() => within(section).queryByText('No RFQ is waiting for your quote.')).not.toBeNull();
    expect(within(section).getByRole('region', { name: 'Earlier today' })).toHaveTextContent('Expired');
  });

  it('shows nothing to a firm with no RFQ today, and nothing once its only open RFQ runs out', async () => {
    addIncomingRfq({ expired_at: new Date(Date.now() + 2_000).toISOString(), expires_in_seconds: 2 });
    renderApp('/dashboard', { signedInAs: 'trader@acme.test', fakeTimers: true });
    expect(await screen.findByRole('region', { name: 'RFQs for you' })).toBeInTheDocument();
    await vi.advanceTimersByTimeAsync(3_000);
    await expect.poll(() => screen.queryByRole('region', { name: 'RFQs for you' })).toBeNull();
  });
});
