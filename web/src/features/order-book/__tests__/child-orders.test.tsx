import { waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { db } from '@/testing/mocks/db';
import { addParent, BROKER, exchangeStatus, stomp, trading } from '@/testing/mocks/order-handlers';
import { server } from '@/testing/mocks/server';
import { renderApp, screen } from '@/testing/test-utils';

const ALL_TIPS_READ = [
  {
    key: 'TOOLTIPS',
    value: ['FIRST_PARENT_ORDER', 'INTERACT_WITH_ORDERBOOK', 'LEAVING_LIQUIDITY_IN_ORDERBOOK', 'FIRST_ICEBERG_ORDER'].map((key) => ({ key, read: true })),
  },
];


function signIn() {
  db.user().ui_metadata = ALL_TIPS_READ;
  return renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
}

async function book(name: RegExp | string) {
  return screen.findByRole('region', { name: typeof name === 'string' ? `Order book ${name}` : name });
}

const lastRequest = (method: string, path: string) => trading.requests.filter((r) => r.method === method && r.path.startsWith(path)).at(-1);

describe('working and editing child orders', () => {
  // Many keystrokes through user-event: 11–13 s on an idle 2-core machine.
  it('works the remaining quantity from a ladder row with the spec rules', async () => {
    addParent();
    const { user } = signIn();
    const region = await book('Euribor 3M Dec26-Mar27');
    await user.click(await within(region).findByRole('button', { name: 'Price -0.025' }));
    const form = (await screen.findByRole('heading', { name: 'Work order' })).closest('form') as HTMLElement;
    const price = within(form).getByRole('textbox', { name: 'Limit price' });
    const quantity = within(form).getByRole('textbox', { name: 'Quantity' });
    const submit = within(form).getByRole('button', { name: 'Place order' });
    expect(price).toHaveValue('-0.025');
    expect(quantity).toHaveValue('3000');

    await user.click(within(form).getByRole('button', { name: 'Increase price by one tick' }));
    expect(price).toHaveValue('-0.020');
    await user.clear(price);
    await user.type(price, '-0.027');
    expect(within(form).getByText('Invalid tick value')).toBeInTheDocument();
    expect(submit).toBeDisabled();
    await user.clear(price);
    await user.type(price, '-0.010');
    expect(within(form).getByText('Must be between electronic price')).toBeInTheDocument();
    await user.clear(price);
    expect(submit).toBeDisabled();
    await user.type(price, '-0.020');

    await user.clear(quantity);
    await user.type(quantity, '499');
    expect(within(form).getByText('Min block size: 500')).toBeInTheDocument();
    await user.clear(quantity);
    await user.type(quantity, '3001');
    expect(within(form).getByText('Exceeds available quantity')).toBeInTheDocument();
    await user.clear(quantity);
    await user.type(quantity, '2000');
    await user.click(within(form).getByRole('switch', { name: /Iceberg/ }));
    await user.click(within(form).getByRole('radio', { name: 'No' }));
    // A minimum execution size above the quantity is refused with the server's text.
    const mes = within(form).getByRole('textbox', { name: 'Minimum execution size' });
    await user.type(mes, '2500');
    expect(await within(form).findByText('Must not exceed the quantity')).toBeInTheDocument();
    expect(submit).toBeDisabled();
    await user.clear(mes);
    await user.type(mes, '1000');
    expect(submit).toBeEnabled();
    await user.click(submit);

    expect(await screen.findByText('Your order to buy 2,000 at -0.020 is working.')).toBeInTheDocument();
    expect(lastRequest('POST', '/api/orders')?.body).toEqual({
      parent_order_id: 'p-1',
      instrument_id: 'i-1',
      direction: 'BUY',
      quantity: 2000,
      limit_price: -0.02,
      residual: false,
      iceberg: true,
      min_execution: 1000,
      broker_id: BROKER.company_id,
    });
    const card = await screen.findByRole('listitem', { name: /Buy Euribor/ });
    expect(await within(card).findByText('2,000 @ -0.020')).toBeInTheDocument();
    expect(within(card).getByText('Min 1,000')).toBeInTheDocument();
    expect(within(card).getByText('Working', { selector: '.MuiChip-label' })).toBeInTheDocument();
    expect(within(card).getByTestId('parent-remaining')).toHaveTextContent('1,000');
  }, 30_000);

  it.each([
    [{ quantity: '1500' }, 'Order quantity updated to 1,500.'],
    [{ price: '-0.035' }, 'Limit price updated to -0.035.'],
    [{ residual: true }, 'Residuals setting updated.'],
    [{ iceberg: true }, 'Visibility preferences updated.'],
    [{ quantity: '1500', price: '-0.035' }, 'Changes applied to current order.'],
  ])('edits a working order: %j → %s', async (change, message) => {
    const parent = addParent({ quantities: { tradable: 2000, working: 1000, matched: 0 } });
    trading.orders.push({
      order_id: 'o-9', parent_order_id: parent.parent_order_id, instrument_id: 'i-1', state: 'WORKING', price: -0.03, quantity: 1000,
      direction: 'BUY', iceberg: false, residual: false, broker_id: BROKER.company_id, matchable: true, created_at: '2026-11-23T10:00:00Z',
    });
    const { user } = signIn();
    await user.click(await screen.findByRole('button', { name: 'Edit order 1,000 @ -0.030' }));
    const form = (await screen.findByRole('heading', { name: 'Edit order' })).closest('form') as HTMLElement;
    if ('quantity' in change) {
      const q = within(form).getByRole('textbox', { name: 'Quantity' });
      await user.clear(q);
      await user.type(q, '3001');
      expect(within(form).getByText('Exceeds available quantity')).toBeInTheDocument();
      await user.clear(q);
      await user.type(q, change.quantity);
    }
    if ('price' in change) {
      const p = within(form).getByRole('textbox', { name: 'Limit price' });
      await user.clear(p);
      await user.type(p, change.price);
    }
    if ('residual' in change) await user.click(within(form).getByRole('radio', { name: 'Yes' }));
    if ('iceberg' in change) await user.click(within(form).getByRole('switch', { name: /Iceberg/ }));
    await user.click(within(form).getByRole('button', { name: 'Apply changes' }));
    expect(await screen.findByText(message)).toBeInTheDocument();
    expect(lastRequest('PATCH', '/api/orders/o-9')).toBeDefined();
  });

  it("says the order is cancelled when the order's own frame took its row off the card before the answer", async () => {
    const parent = addParent({ quantities: { tradable: 2000, working: 1000, matched: 0 } });
    const o: (typeof trading.orders)[number] = {
      order_id: 'o-9', parent_order_id: parent.parent_order_id, instrument_id: 'i-1', state: 'WORKING', price: -0.03, quantity: 1000,
      direction: 'BUY', iceberg: false, residual: true, broker_id: BROKER.company_id, matchable: true, created_at: '2026-11-23T10:00:00Z',
    };
    trading.orders.push(o);
    // The server pushes the cancelled order over the socket before it answers the DELETE.
    server.use(
      http.delete('*/api/orders/:id', async () => {
        o.state = 'CANCELLED';
        stomp.publish('/user/topic/orders', { type: 'ORDER_UPDATED', seq: 1, ...o });
        // (hidden: the confirmation dialog hides the page from the accessibility tree)
        await waitFor(() => expect(screen.queryByRole('button', { name: 'Cancel order 1,000 @ -0.030', hidden: true })).toBeNull());
        return HttpResponse.json(o);
      }),
    );
    const { user } = signIn();
    await user.click(await screen.findByRole('button', { name: 'Cancel order 1,000 @ -0.030' }));
    await user.click(within(await screen.findByRole('dialog', { name: 'Cancel order?' })).getByRole('button', { name: 'Yes, cancel' }));
    expect(await screen.findByText('Order cancelled.')).toBeInTheDocument();
  });

  it('cancels a child order and the parent order after confirmation', async () => {
    const parent = addParent({ quantities: { tradable: 2000, working: 1000, matched: 0 } });
    trading.orders.push({
      order_id: 'o-9', parent_order_id: parent.parent_order_id, instrument_id: 'i-1', state: 'WORKING', price: -0.045, quantity: 1000,
      direction: 'BUY', iceberg: false, residual: true, broker_id: BROKER.company_id, matchable: false, created_at: '2026-11-23T10:00:00Z',
    });
    const { user } = signIn();
    // Under the instrument's band (-0.040 to -0.015): the chip says so, from the band itself.
    expect(await screen.findByText('Outside band')).toBeInTheDocument();
    await user.click(await screen.findByRole('button', { name: 'Cancel order 1,000 @ -0.045' }));
    const dialog = await screen.findByRole('dialog', { name: 'Cancel order?' });
    await user.click(within(dialog).getByRole('button', { name: 'Yes, cancel' }));
    expect(await screen.findByText('Order cancelled.')).toBeInTheDocument();
    expect(lastRequest('DELETE', '/api/orders/o-9')).toBeDefined();

    // The lists are read again once the write's frames and answer are in (a few ms later).
    await user.click(await screen.findByRole('button', { name: 'Cancel parent order' }));
    await user.click(within(await screen.findByRole('dialog', { name: 'Cancel parent order?' })).getByRole('button', { name: 'Yes, cancel' }));
    expect(await screen.findByRole('heading', { name: 'Getting started' })).toBeInTheDocument();
  });

  it('marks an order worked before the open as waiting for it, not as outside the band', async () => {
    const parent = addParent({ quantities: { tradable: 2000, working: 1000, matched: 0 } });
    trading.orders.push({
      order_id: 'o-9', parent_order_id: parent.parent_order_id, instrument_id: 'i-1', state: 'WORKING', price: -0.03, quantity: 1000,
      direction: 'BUY', iceberg: false, residual: true, broker_id: BROKER.company_id, matchable: false, waiting_for_open: true,
      created_at: '2026-11-23T08:00:00Z',
    });
    signIn();
    expect(await screen.findByText('Waits for the open')).toBeInTheDocument();
    expect(screen.queryByText('Outside band')).not.toBeInTheDocument();
  });

  it('lets an order the band left change its quantity at its price, and checks a new price against the band', async () => {
    const parent = addParent({ quantities: { tradable: 0, working: 1000, matched: 0 } });
    trading.orders.push({
      order_id: 'o-9', parent_order_id: parent.parent_order_id, instrument_id: 'i-1', state: 'WORKING', price: -0.045, quantity: 1000,
      direction: 'BUY', iceberg: false, residual: false, broker_id: BROKER.company_id, matchable: false, created_at: '2026-11-23T10:00:00Z',
    });
    const { user } = signIn();
    await user.click(await screen.findByRole('button', { name: 'Edit order 1,000 @ -0.045' }));
    const form = (await screen.findByRole('heading', { name: 'Edit order' })).closest('form') as HTMLElement;
    // Under the band (-0.040 to -0.015), kept: no message; its quantity may go down.
    const q = within(form).getByRole('textbox', { name: 'Quantity' });
    await user.clear(q);
    await user.type(q, '500');
    expect(within(form).getByRole('button', { name: 'Apply changes' })).toBeEnabled();
    expect(within(form).queryByText('Must be between electronic price')).not.toBeInTheDocument();
    // A new price is checked against the band.
    await user.click(within(form).getByRole('button', { name: 'Decrease price by one tick' }));
    expect(within(form).getByRole('textbox', { name: 'Limit price' })).toHaveValue('-0.050');
    expect(await within(form).findByText('Must be between electronic price')).toBeInTheDocument();
    expect(within(form).getByRole('button', { name: 'Apply changes' })).toBeDisabled();
    await user.click(within(form).getByRole('button', { name: 'Increase price by one tick' }));
    await user.click(within(form).getByRole('button', { name: 'Increase price by one tick' }));
    expect(within(form).getByRole('textbox', { name: 'Limit price' })).toHaveValue('-0.040');
    expect(within(form).queryByText('Must be between electronic price')).not.toBeInTheDocument();
    await user.clear(q);
    expect(within(form).queryByText(/^Min block size/)).not.toBeInTheDocument();
    expect(within(form).getByRole('button', { name: 'Apply changes' })).toBeDisabled();
    await user.type(q, '1000');
    expect(within(form).getByRole('button', { name: 'Apply changes' })).toBeEnabled();
    await user.click(within(form).getByRole('button', { name: 'Apply changes' }));
    expect(lastRequest('PATCH', '/api/orders/o-9')).toBeDefined();
  });

  it('offers no edit while closed and no cancel once matched', async () => {
    trading.status = { open: false, parent_orders_open: true, closing_soon: false };
    const parent = addParent({ quantities: { tradable: 2000, working: 0, matched: 1000 } });
    trading.orders.push({
      order_id: 'o-9', parent_order_id: parent.parent_order_id, instrument_id: 'i-1', state: 'WORKING', price: -0.03, quantity: 500,
      direction: 'BUY', iceberg: false, residual: true, broker_id: BROKER.company_id, matchable: true, created_at: '2026-11-23T10:00:00Z',
    });
    signIn();
    expect(await screen.findByText('500 @ -0.030')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /^Edit order/ })).not.toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Cancel parent order' })).toBeDisabled();
  });

  it("edits orders and sends RFQs while the instrument's exchange is open, whatever the venue's own hours (ADR 0052)", async () => {
    const working = (parentId: string, instrumentId: string, id: string) =>
      trading.orders.push({
        order_id: id, parent_order_id: parentId, instrument_id: instrumentId, state: 'WORKING', price: instrumentId === 'i-1' ? -0.03 : 0.45, quantity: 1000,
        direction: 'BUY', iceberg: false, residual: false, broker_id: BROKER.company_id, matchable: true, created_at: '2026-11-23T10:00:00Z',
      });
    const euribor = addParent({ quantities: { tradable: 2000, working: 1000, matched: 0 } });
    working(euribor.parent_order_id, 'i-1', 'o-1');
    const bund = addParent({ instrument_id: 'i-2', quantity: 5000, quantities: { tradable: 4000, working: 1000, matched: 0 } });
    working(bund.parent_order_id, 'i-2', 'o-2');
    // The Euribor's ICE Futures Europe is open; the Bund's MIC has no calendar and the venue's hours are closed.
    trading.instruments[1]!.exchange_iso_code = 'XLON';
    trading.status = { open: false, parent_orders_open: false, closing_soon: false, exchanges: [exchangeStatus()] };
    signIn();
    expect(await screen.findByRole('button', { name: 'Edit order 1,000 @ -0.030' })).toBeInTheDocument();
    const euriborCard = await screen.findByRole('listitem', { name: 'Buy Euribor 3M Dec26-Mar27' });
    const bundCard = await screen.findByRole('listitem', { name: 'Buy Euro-Bund Dec26-Mar27 calendar spread block' });
    expect(await within(bundCard).findByText('1,000 @ 0.45')).toBeInTheDocument();
    expect(within(euriborCard).getByRole('button', { name: 'Request quotes' })).toBeEnabled();
    expect(within(bundCard).getByRole('button', { name: 'Request quotes' })).toBeDisabled();
    expect(screen.queryByRole('button', { name: 'Edit order 1,000 @ 0.45' })).not.toBeInTheDocument();
  });
});
