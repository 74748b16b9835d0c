import { within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { db } from '@/testing/mocks/db';
import { trading } from '@/testing/mocks/order-handlers';
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
    expect(screen.getByText('Parent order created')).toBeInTheDocument();
    expect(lastRequest('POST', '/api/parent-orders')?.body).toEqual({
      direction: 'SELL',
      instrument_id: 'i-2',
      quantity: 5000,
      broker_instructions: 'Work slowly',
    });
    // The new parent's instrument gets its order book.
    expect(await book(/Euro-Bund/)).toBeInTheDocument();
  });

  it('shows no message before the trader acts, and none for an emptied quantity', async () => {
    const { user } = signIn();
    await user.click(await screen.findByRole('button', { name: 'Add parent order' }));
    const drawer = (await screen.findByRole('heading', { name: 'Create Parent order' })).closest('form') as HTMLElement;
    await user.click(within(drawer).getByRole('button', { name: 'Buy' }));
    expect(within(drawer).queryByText('Direction is required')).not.toBeInTheDocument();
    await user.click(within(drawer).getByRole('combobox', { name: 'Instrument' }));
    await user.click(await screen.findByRole('option', { name: /Euribor/ }));
    expect(within(drawer).queryByText('Direction is required')).not.toBeInTheDocument();
    const quantity = within(drawer).getByRole('textbox', { name: 'Quantity' });
    await user.type(quantity, '400');
    expect(within(drawer).getByText('The minimum block size is 500')).toBeInTheDocument();
    await user.clear(quantity);
    expect(within(drawer).queryByText(/^The minimum block size/)).not.toBeInTheDocument();
    expect(within(drawer).getByText('Minimum block size 500')).toBeInTheDocument();
    expect(within(drawer).getByRole('button', { name: 'Create parent order' })).toBeDisabled();
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
