import { within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { db } from '@/testing/mocks/db';
import { addParent, BROKER, stomp, trading, type MockInstrument } from '@/testing/mocks/order-handlers';
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

const rowTexts = (region: HTMLElement) => within(region).getAllByTestId('ladder-row').map((r) => r.getAttribute('data-price'));
const lastRequest = (method: string, path: string) => trading.requests.filter((r) => r.method === method && r.path.startsWith(path)).at(-1);

describe('create parent order drawer', () => {
  it('validates direction and quantity, searches instruments, and creates the order', async () => {
    const { user } = signIn();
    await user.click(await screen.findByRole('button', { name: 'Add parent order' }));
    const drawer = await screen.findByRole('heading', { name: 'Create Parent order' }).then((h) => h.closest('form') as HTMLElement);
    const submit = within(drawer).getByRole('button', { name: 'Create parent order' });
    const quantity = within(drawer).getByRole('textbox', { name: 'Quantity' });
    expect(submit).toBeDisabled();
    expect(quantity).toBeDisabled();

    await user.type(within(drawer).getByRole('combobox', { name: 'Instrument' }), 'bund');
    // One search after the 500 ms pause, none per keystroke.
    await expect.poll(() => lastRequest('GET', '/api/instruments?name=bund'), { timeout: 2000 }).toBeDefined();
    expect(trading.requests.filter((r) => /name=(b|bu|bun)$/.test(r.path))).toEqual([]);
    await expect.poll(() => screen.queryAllByRole('option').length).toBe(1);
    await user.click(screen.getByRole('option', { name: /Euro-Bund/ }));
    expect(within(drawer).getByText('Direction is required')).toBeInTheDocument();

    await user.type(quantity, '999');
    expect(within(drawer).getByText('The minimum block size is 1000')).toBeInTheDocument();
    await user.clear(quantity);
    await user.type(quantity, '100001');
    expect(within(drawer).getByText('The maximum quantity is 100000')).toBeInTheDocument();
    await user.clear(quantity);
    await user.type(quantity, '5000');
    await user.click(within(drawer).getByRole('button', { name: 'Sell' }));
    await user.type(within(drawer).getByRole('textbox', { name: 'Broker instructions' }), 'Work slowly');
    expect(submit).toBeEnabled();
    await user.click(submit);

    expect(await screen.findByRole('listitem', { name: /Sell Euro-Bund/ })).toBeInTheDocument();
    expect(lastRequest('POST', '/api/parent-orders')?.body).toEqual({
      direction: 'SELL',
      instrument_id: 'i-2',
      quantity: 5000,
      broker_instructions: 'Work slowly',
    });
    // The new parent's instrument gets its order book.
    expect(await book(/Euro-Bund/)).toBeInTheDocument();
  });

  it('uses the multiplier for the maximum and shows server errors as [status]: data', async () => {
    db.user().parent_order_limit_multiplier = 2;
    server.use(http.post('*/api/parent-orders', () => HttpResponse.json({ status: 409, detail: 'The venue is closed.' }, { status: 409 })));
    const { user } = signIn();
    await user.click(await screen.findByRole('button', { name: 'Add parent order' }));
    const drawer = (await screen.findByRole('heading', { name: 'Create Parent order' })).closest('form') as HTMLElement;
    await user.click(within(drawer).getByRole('button', { name: 'Buy' }));
    await user.click(within(drawer).getByRole('combobox', { name: 'Instrument' }));
    await user.click(await screen.findByRole('option', { name: /Euribor/ }));
    const quantity = within(drawer).getByRole('textbox', { name: 'Quantity' });
    await user.type(quantity, '1001');
    expect(within(drawer).getByText('The maximum quantity is 1000')).toBeInTheDocument();
    await user.clear(quantity);
    await user.type(quantity, '1000');
    await user.click(within(drawer).getByRole('button', { name: 'Create parent order' }));
    expect(await within(drawer).findByText('[409]: The venue is closed.')).toBeInTheDocument();
  });
});

describe('order book', () => {
  it('shows the ladder from min − 2 to max + 2 ticks in k, own marks and the placeholder price', async () => {
    addParent();
    trading.levels.set('i-1', [
      { price: -0.025, buy_quantity: 2100, sell_quantity: 0, own_buy_quantity: 1000, own_sell_quantity: 0 },
      { price: -0.02, buy_quantity: 0, sell_quantity: 500, own_buy_quantity: 0, own_sell_quantity: 0 },
    ]);
    signIn();
    const region = await book('Euribor 3M Dec26-Mar27');
    await expect.poll(() => rowTexts(region).length).toBe(10);
    expect(rowTexts(region)).toEqual(['-0.005', '-0.010', '-0.015', '-0.020', '-0.025', '-0.030', '-0.035', '-0.040', '-0.045', '-0.050']);
    const rows = within(region).getAllByTestId('ladder-row');
    expect(rows[0]).toHaveAttribute('aria-disabled', 'true');
    expect(rows[0]).not.toHaveAttribute('role', 'button');
    expect(rows[4]).toHaveAttribute('role', 'button');
    expect(rows[4]).toHaveTextContent('2.1k');
    expect(within(rows[4] as HTMLElement).getByLabelText('Includes your orders')).toBeInTheDocument();
    expect(within(rows[3] as HTMLElement).queryByLabelText('Includes your orders')).not.toBeInTheDocument();
    expect(within(region).getByTestId('best-buy')).toHaveTextContent('-0.025');
    expect(within(region).getByTestId('best-sell')).toHaveTextContent('-0.020');
    expect(within(region).getByText('Dec26')).toBeInTheDocument();
    expect(within(region).getByText('Mar27')).toBeInTheDocument();
  });

  it('shows the placeholder, the cut name and the reversed legs', async () => {
    addParent({ instrument_id: 'i-2', quantity: 5000, quantities: { tradable: 5000, working: 0, matched: 0 } });
    signIn();
    const region = await book('Euro-Bund Dec26-Mar27 calendar spread block');
    expect(await within(region).findByText('Euro-Bund Dec26-Mar27 calendar spre…')).toBeInTheDocument();
    expect(within(region).getByTestId('best-buy')).toHaveTextContent('--.---');
    expect(within(region).getByText('Reversed')).toBeInTheDocument();
    const legs = within(region).getAllByText(/^(Dec26|Mar27)$/).map((e) => e.textContent);
    expect(legs).toEqual(['Mar27', 'Dec26']);
  });

  it('shows at most 4 books, newest parent first, and a card brings its book back', async () => {
    for (const n of [3, 4, 5]) {
      trading.instruments.push({ ...(trading.instruments[0] as MockInstrument), instrument_id: `i-${n}`, name: `Instrument ${n}` });
    }
    ['i-1', 'i-2', 'i-3', 'i-4', 'i-5'].forEach((instrument_id, n) => addParent({ instrument_id, created_at: `2026-11-23T10:0${n}:00Z` }));
    const { user } = signIn();
    await book('Instrument 5');
    await expect.poll(() => screen.getAllByRole('region', { name: /^Order book/ }).map((r) => r.getAttribute('aria-label'))).toEqual([
      'Order book Instrument 5', 'Order book Instrument 4', 'Order book Instrument 3', 'Order book Euro-Bund Dec26-Mar27 calendar spread block',
    ]);
    expect(screen.queryByRole('button', { name: 'Add order book' })).not.toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Show the order book of Euribor 3M Dec26-Mar27' }));
    expect((await book('Euribor 3M Dec26-Mar27')).getAttribute('aria-label')).toBe('Order book Euribor 3M Dec26-Mar27');
    expect(screen.getAllByRole('region', { name: /^Order book/ })[0]).toHaveAttribute('aria-label', 'Order book Euribor 3M Dec26-Mar27');
    expect(screen.getAllByRole('region', { name: /^Order book/ })).toHaveLength(4);
  });

  it('works a row from the keyboard', async () => {
    addParent();
    const { user } = signIn();
    const row = await within(await book('Euribor 3M Dec26-Mar27')).findByRole('button', { name: 'Price -0.030' });
    row.focus();
    await user.keyboard('{Enter}');
    const form = (await screen.findByRole('heading', { name: 'Work order' })).closest('form') as HTMLElement;
    expect(within(form).getByRole('textbox', { name: 'Limit price' })).toHaveValue('-0.030');
  });

  it('refreshes the book at once when its topic pushes a change', async () => {
    addParent();
    signIn();
    const region = await book('Euribor 3M Dec26-Mar27');
    await expect.poll(() => stomp.subscriptions.map((s) => s.destination)).toContain('/topic/instruments/i-1/book');
    expect(stomp.connectHeaders[0]?.Authorization).toMatch(/^Bearer /);
    expect(within(region).queryByText('3k')).not.toBeInTheDocument();
    trading.levels.set('i-1', [{ price: -0.03, buy_quantity: 0, sell_quantity: 3000, own_buy_quantity: 0, own_sell_quantity: 0 }]);
    stomp.publish('/topic/instruments/i-1/book', { instrument_id: 'i-1', levels: [] });
    expect(await within(region).findByText('3k', {}, { timeout: 3000 })).toBeInTheDocument();
  });

  it('overlays the closed message and offers no row outside hours', async () => {
    addParent();
    trading.status = { open: false, parent_orders_open: false, closing_soon: false };
    signIn();
    const region = await book('Euribor 3M Dec26-Mar27');
    expect(await within(region).findByText('Upstairs is closed')).toBeInTheDocument();
    await expect.poll(() => rowTexts(region).length).toBe(10);
    expect(within(region).queryAllByRole('button', { name: /^Price/ })).toHaveLength(0);
  });
});

describe('working and editing child orders', () => {
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
      broker_id: BROKER.company_id,
    });
    const card = await screen.findByRole('listitem', { name: /Buy Euribor/ });
    expect(await within(card).findByText('2,000 @ -0.020')).toBeInTheDocument();
    expect(within(card).getByText('Working', { selector: '.MuiChip-label' })).toBeInTheDocument();
    expect(within(card).getByTestId('parent-remaining')).toHaveTextContent('1,000');
  });

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

  it('cancels a child order and the parent order after confirmation', async () => {
    const parent = addParent({ quantities: { tradable: 2000, working: 1000, matched: 0 } });
    trading.orders.push({
      order_id: 'o-9', parent_order_id: parent.parent_order_id, instrument_id: 'i-1', state: 'WORKING', price: -0.03, quantity: 1000,
      direction: 'BUY', iceberg: false, residual: true, broker_id: BROKER.company_id, matchable: false, created_at: '2026-11-23T10:00:00Z',
    });
    const { user } = signIn();
    expect(await screen.findByText('Outside band')).toBeInTheDocument();
    await user.click(await screen.findByRole('button', { name: 'Cancel order 1,000 @ -0.030' }));
    const dialog = await screen.findByRole('dialog', { name: 'Cancel order?' });
    await user.click(within(dialog).getByRole('button', { name: 'Yes, cancel' }));
    expect(await screen.findByText('Order cancelled.')).toBeInTheDocument();
    expect(lastRequest('DELETE', '/api/orders/o-9')).toBeDefined();

    await user.click(screen.getByRole('button', { name: 'Cancel parent order' }));
    await user.click(within(await screen.findByRole('dialog', { name: 'Cancel parent order?' })).getByRole('button', { name: 'Yes, cancel' }));
    expect(await screen.findByRole('heading', { name: 'Getting started' })).toBeInTheDocument();
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
});
