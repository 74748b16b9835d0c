import { waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { DRY_RUN_DEBOUNCE_MS, NOTHING_MATCHED } from '@/features/order-book/components/order-drawer';
import { db } from '@/testing/mocks/db';
import { addParent, trading } from '@/testing/mocks/order-handlers';
import { renderApp, screen } from '@/testing/test-utils';

const TIPS = ['FIRST_PARENT_ORDER', 'INTERACT_WITH_ORDERBOOK', 'LEAVING_LIQUIDITY_IN_ORDERBOOK', 'TAKING_LIQUIDITY_IN_ORDERBOOK', 'FIRST_ICEBERG_ORDER'];

/** A BUY parent of 3000 and another firm's 1500 offered at -0.020. */
function setUp(tipsRead = TIPS) {
  db.user().ui_metadata = [{ key: 'TOOLTIPS', value: tipsRead.map((key) => ({ key, read: true })) }];
  addParent();
  trading.levels.set('i-1', [{ price: -0.02, buy_quantity: 0, sell_quantity: 1500, own_buy_quantity: 0, own_sell_quantity: 0 }]);
  return renderApp('/dashboard', { signedInAs: 'trader@acme.test', fakeTimers: true });
}

const dryRuns = () => trading.requests.filter((r) => r.method === 'POST' && r.path === '/api/order-match-requests' && (r.body as { dry_run: boolean }).dry_run);
const takes = () => trading.requests.filter((r) => r.method === 'POST' && r.path === '/api/order-match-requests' && !(r.body as { dry_run: boolean }).dry_run);

async function openTake(user: ReturnType<typeof setUp>['user']) {
  const region = await screen.findByRole('region', { name: 'Order book Euribor 3M Dec26-Mar27' });
  await user.click(await within(region).findByRole('button', { name: 'Price -0.020, sell 1.5k' }));
  return (await screen.findByRole('heading', { name: 'Take liquidity' })).closest('form') as HTMLElement;
}

describe('taking liquidity', () => {
  it('previews the take 700 ms after the last change and sends the match request', async () => {
    trading.breakdown = [{ price: -0.02, quantity: 1500, responding_broker_name: 'Baltic', responding_order_iceberg: true }];
    const { user } = setUp();
    const form = await openTake(user);
    const quantity = within(form).getByRole('textbox', { name: 'Quantity' });
    expect(quantity).toHaveValue('1500');
    expect(within(form).getByRole('textbox', { name: 'Limit price' })).toHaveValue('-0.020');
    expect(within(form).queryByRole('switch', { name: /Iceberg/ })).not.toBeInTheDocument();

    const preview = within(form).getByRole('region', { name: 'Match preview' });
    expect(await within(preview).findByRole('row', { name: /-0\.020 1,500 Iceberg: may fill more Baltic/ })).toBeInTheDocument();
    expect(dryRuns()).toHaveLength(1);
    expect(dryRuns()[0]?.body).toMatchObject({ dry_run: true, price: -0.02, quantity: 1500, residual: false, requesting_broker_id: 'b-1' });

    // Typing restarts the wait: nothing is asked until 700 ms after the last key.
    await user.clear(quantity);
    await user.type(quantity, '1000');
    expect(dryRuns()).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(DRY_RUN_DEBOUNCE_MS);
    await waitFor(() => expect(dryRuns()).toHaveLength(2));
    expect(dryRuns()[1]?.body).toMatchObject({ quantity: 1000 });

    await user.click(within(form).getByRole('button', { name: 'Send match request' }));
    expect(await screen.findByText('Match request sent')).toBeInTheDocument();
    expect(takes()[0]?.body).toMatchObject({ dry_run: false, quantity: 1000, price: -0.02 });
    await waitFor(() => expect(screen.queryByRole('heading', { name: 'Take liquidity' })).not.toBeInTheDocument());
  });

  it("says when nothing matches, and 'Leave passive' works the quantity at that price", async () => {
    const { user } = setUp();
    const form = await openTake(user);
    const preview = within(form).getByRole('region', { name: 'Match preview' });
    expect(await within(preview).findByText(NOTHING_MATCHED)).toBeInTheDocument();
    await user.click(within(preview).getByRole('button', { name: 'Leave passive' }));
    await waitFor(() => expect(trading.orders).toHaveLength(1));
    expect(trading.orders[0]).toMatchObject({ price: -0.02, quantity: 1500, state: 'WORKING', iceberg: false });
    expect(await screen.findByText('Your order to buy 1,500 at -0.020 is working.')).toBeInTheDocument();
  });

  it('offers the same in a toast when the liquidity went before the take was sent', async () => {
    trading.breakdown = [{ price: -0.02, quantity: 1500, responding_broker_name: 'Baltic', responding_order_iceberg: false }];
    const { user } = setUp();
    const form = await openTake(user);
    await within(form).findByRole('row', { name: /Baltic/ });
    trading.breakdown = [];
    await user.click(within(form).getByRole('button', { name: 'Send match request' }));
    const toast = await screen.findByTestId('toast');
    expect(toast).toHaveTextContent(NOTHING_MATCHED);
    await waitFor(() => expect(screen.queryByRole('heading', { name: 'Take liquidity' })).not.toBeInTheDocument());
    await user.click(within(toast).getByRole('button', { name: 'Leave passive' }));
    await waitFor(() => expect(trading.orders).toHaveLength(1));
    expect(trading.orders[0]).toMatchObject({ price: -0.02, quantity: 1500 });
  });

  it('before the open, a row works the quantity, which waits for the open', async () => {
    trading.status = { open: false, parent_orders_open: true, closing_soon: false };
    const { user } = setUp();
    const region = await screen.findByRole('region', { name: 'Order book Euribor 3M Dec26-Mar27' });
    expect(await within(region).findByRole('status')).toHaveTextContent('Opens at 9:00 AM: orders you work now wait for the open.');
    await user.click(await within(region).findByRole('button', { name: 'Price -0.020, sell 1.5k' }));
    expect(await screen.findByRole('heading', { name: 'Work order' })).toBeInTheDocument();
    expect(dryRuns()).toEqual([]);
  });

  it('points at the liquidity to take once the book tip is read', async () => {
    setUp(TIPS.filter((t) => t !== 'TAKING_LIQUIDITY_IN_ORDERBOOK'));
    expect(await screen.findByTestId('tip-TAKING_LIQUIDITY_IN_ORDERBOOK')).toBeInTheDocument();
  });
});
