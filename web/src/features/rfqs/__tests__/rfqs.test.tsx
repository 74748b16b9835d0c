import { within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { db } from '@/testing/mocks/db';
import { addIncomingRfq, addParent, rfqResponse, stomp, trading } from '@/testing/mocks/order-handlers';
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
    await user.click(await screen.findByRole('button', { name: 'Request quotes' }));
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
    stomp.publish('/user/topic/rfqs', { type: 'RFQ_UPDATED', rfq_id: rfq.rfq_id, state: 'OPEN', role: 'REQUESTER' });
    expect(await within(panel).findByText('Received')).toBeInTheDocument();
    await expect.poll(() => within(panel).getByRole('button', { name: 'Accept the quote of Meridian' })).toBeEnabled();

    // Minimised: the bar counts active RFQs and quotes received.
    await user.click(within(panel).getByRole('button', { name: 'Minimise the active RFQs' }));
    const bar = await screen.findByTestId('rfq-bar');
    expect(bar).toHaveTextContent('Active RFQs: 1');
    expect(bar).toHaveTextContent('Quotes received: 1');
    await user.click(within(bar).getByRole('button', { name: 'Maximise the active RFQs' }));

    const again = await screen.findByRole('region', { name: 'Active RFQs' });
    await user.click(within(again).getByRole('button', { name: 'Accept the quote of Meridian' }));
    expect(await screen.findByText('RFQ trade completed!')).toBeInTheDocument();
    // Buying: the requester takes the provider's offer.
    expect(screen.getByText('You just completed your RFQ on the Euribor 3M Dec26-Mar27. Matched at -0.025 for 1,500')).toBeInTheDocument();
    expect(lastRequest('PATCH', `/api/rfqs/${rfq.rfq_id}/responses/`)?.body).toEqual({ state: 'ACCEPTED' });
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
