import { within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { admin } from '@/testing/mocks/admin-handlers';
import { adminOrders, mockAdminOrders } from '@/testing/mocks/admin-order-handlers';
import { db } from '@/testing/mocks/db';
import { trading } from '@/testing/mocks/order-handlers';
import { server } from '@/testing/mocks/server';
import { renderApp, screen, typeDate } from '@/testing/test-utils';

const ADMIN = 'ada@upstairs.test';
const SALES = 'sam@upstairs.test';

const asked = () => adminOrders.requests.filter((r) => r.method === 'GET' && r.path === '/api/admin/orders').map((r) => r.query.toString());

function asAdmin() {
  db.addUser({ user_id: 'u-admin', email: ADMIN, roles: ['upstairs-admin'], company_id: 'c-upstairs', company_name: 'Upstairs' });
  return renderApp('/admin/order', { signedInAs: ADMIN });
}

function asSales() {
  db.addUser({ user_id: 'u-sales', email: SALES, roles: ['upstairs-sales'], company_id: 'c-upstairs', company_name: 'Upstairs' });
  return renderApp('/admin/order', { signedInAs: SALES });
}

/** The admin's filter choices: the companies of the mock orders and both trading instruments. */
function adminLists() {
  admin.companies = [
    { ...admin.companies[2]!, company_id: 'c-halyard', name: 'Halyard' },
    { ...admin.companies[2]!, company_id: 'c-kestrel', name: 'Kestrel' },
  ];
  admin.instruments = trading.instruments.map((i) => ({ instrument_id: i.instrument_id, name: i.name, tick_size: i.tick_size }));
}

const bodyRows = async () => within(await screen.findByRole('table', { name: 'Orders' })).getAllByRole('row').slice(1);
const cells = (row: HTMLElement) => within(row).getAllByRole('cell').map((c) => c.textContent);

async function pickOption(user: ReturnType<typeof asAdmin>['user'], label: string, option: string) {
  await user.click(screen.getByRole('combobox', { name: label }));
  await user.click(await screen.findByRole('option', { name: option }));
}

describe('orders panel', () => {
  it('lists a page of 50, newest first, with the total, and pages on the server', async () => {
    adminOrders.orders = mockAdminOrders(60);
    adminLists();
    const { user } = asAdmin();
    expect(await screen.findByRole('heading', { name: 'Orders' })).toBeInTheDocument();
    const list = await bodyRows();
    expect(list).toHaveLength(50);
    expect(asked()).toEqual(['page=0&size=50']);
    // The newest: order 59, Kestrel's sell on the Bund spread, expired (no edit).
    expect(cells(list[0]!)).toEqual([
      '00000059', 'kai@kestrel.testKestrel', 'Euro-Bund Dec26-Mar27 calendar spread block', '6,900', 'Sell', '0.45', 'Expired', 'Baltic', '24/11/2026 09:59', '24/11/2026 09:59', '',
    ]);
    expect(within(list[0]!).getByText('00000059')).toHaveAttribute('title', '01a2136e-0000-7000-8000-000000000059');
    // Order 58: Halyard's buy on the Euribor, broker filled.
    expect(cells(list[1]!).slice(1, 8)).toEqual(['tess@halyard.testHalyard', 'Euribor 3M Dec26-Mar27', '6,800', 'Buy', '-0.020', 'Broker Filled', 'Northgate']);
    expect(screen.getByText('1–50 of 60')).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Go to next page' }));
    await expect.poll(async () => (await bodyRows()).length).toBe(10);
    expect(asked().at(-1)).toBe('page=1&size=50');
    expect(screen.getByText('51–60 of 60')).toBeInTheDocument();

    await user.click(screen.getByRole('combobox', { name: /Rows per page/ }));
    const sizes = await screen.findAllByRole('option');
    expect(sizes.map((o) => o.textContent)).toEqual(['10', '25', '50', '100']);
    await user.click(screen.getByRole('option', { name: '25' }));
    await expect.poll(() => asked().at(-1)).toBe('page=0&size=25');
    expect(await bodyRows()).toHaveLength(25);
  });

  it('writes an RFQ’s unpriced order as such, never as a price of 0', async () => {
    adminOrders.orders = mockAdminOrders(1).map((o) => ({ ...o, rfq: true, price: null, state: 'AWAITING_RFQ_ACCEPTANCE' }));
    asSales();
    const [row] = await bodyRows();
    expect(cells(row!)[5]).toBe('RFQ, no price');
    expect(cells(row!)[6]).toBe('Awaiting RFQ Acceptance');
  });

  it('sends each filter to the server and starts again at the first page', async () => {
    adminOrders.orders = mockAdminOrders(60);
    adminLists();
    const { user } = asAdmin();
    await bodyRows();
    await user.click(screen.getByRole('button', { name: 'Go to next page' }));
    await expect.poll(() => asked().at(-1)).toBe('page=1&size=50');

    await pickOption(user, 'Company', 'Kestrel');
    await expect.poll(() => asked().at(-1)).toBe('page=0&size=50&company_id=c-kestrel');
    await expect.poll(async () => (await bodyRows()).length).toBe(30);

    await pickOption(user, 'Instrument', 'Euribor 3M Dec26-Mar27');
    await expect.poll(() => asked().at(-1)).toBe('page=0&size=50&company_id=c-kestrel&instrument_id=i-1');

    // Several states, sent comma-separated in the spec's order whatever the clicking order.
    await user.click(screen.getByRole('combobox', { name: 'State' }));
    const listbox = await screen.findByRole('listbox');
    expect(within(listbox).getAllByRole('option')).toHaveLength(13);
    await user.click(within(listbox).getByRole('option', { name: 'Matched' }));
    await user.click(within(listbox).getByRole('option', { name: 'Working' }));
    await user.keyboard('{Escape}');
    await expect.poll(() => asked().at(-1)).toBe('page=0&size=50&company_id=c-kestrel&instrument_id=i-1&state=WORKING%2CMATCHED');
    expect(screen.getByRole('combobox', { name: 'State' })).toHaveTextContent('Working, Matched');
    // Kestrel's Euribor orders working or matched, newest first: 45, 41, 25, 21, 5 and 1.
    await expect.poll(async () => (await bodyRows()).map((r) => cells(r)[0])).toEqual(['00000045', '00000041', '00000025', '00000021', '00000005', '00000001']);
    expect((await bodyRows()).map((r) => cells(r)[6])).toEqual(['Working', 'Matched', 'Working', 'Matched', 'Working', 'Matched']);

    await user.click(screen.getByRole('button', { name: 'Clear filters' }));
    await expect.poll(() => asked().at(-1)).toBe('page=0&size=50');
  });

  it('sends the creation dates as the start of the first day and of the day after the last', async () => {
    adminOrders.orders = mockAdminOrders(3);
    const { user } = asAdmin();
    await bodyRows();
    await typeDate(user, 'Created from', '24/11/2026');
    const from = new Date(2026, 10, 24).toISOString();
    await expect.poll(() => asked().at(-1)).toBe(`page=0&size=50&from=${encodeURIComponent(from)}`);
    await typeDate(user, 'Created to', '24/11/2026');
    const until = new Date(2026, 10, 25).toISOString();
    await expect.poll(() => asked().at(-1)).toBe(`page=0&size=50&from=${encodeURIComponent(from)}&until=${encodeURIComponent(until)}`);

    // A last day before the first: said under the field, and no date is sent.
    await typeDate(user, 'Created to', '23/11/2026');
    expect(await screen.findByText('Before the start date')).toBeInTheDocument();
    await expect.poll(() => asked().at(-1)).toBe('page=0&size=50');
  });

  it('lets the admin correct a working order’s limit price on the tick, exactly', async () => {
    adminOrders.orders = mockAdminOrders(6);
    const { user } = asAdmin();
    const list = await bodyRows();
    // Only working orders (0 and 5) can be edited.
    const editable = screen.getAllByRole('button', { name: /^Edit limit price of order/ });
    expect(editable.map((b) => b.getAttribute('aria-label'))).toEqual(['Edit limit price of order 00000005', 'Edit limit price of order 00000000']);
    expect(within(list[1]!).queryByRole('button', { name: /Edit/ })).toBeNull();

    await user.click(editable[0]!);
    const form = await screen.findByRole('form', { name: 'Edit order 00000005' });
    const field = within(form).getByRole('textbox', { name: 'Limit price' });
    // Euribor: tick 0.005, the order at -0.02 shown with the tick's decimals.
    expect(field).toHaveValue('-0.020');
    expect(within(form).getByText('A multiple of the tick size, 0.005')).toBeInTheDocument();
    const save = within(form).getByRole('button', { name: 'Save limit price' });
    expect(save).toBeDisabled();

    await user.clear(field);
    await user.type(field, '-0.033');
    expect(await within(form).findByText('Invalid value')).toBeInTheDocument();
    expect(save).toBeDisabled();
    // 0.035 is 7 ticks exactly (in floating point, 0.035 % 0.005 is not 0).
    await user.clear(field);
    await user.type(field, '-0.035');
    await expect.poll(() => within(form).queryByText('Invalid value')).toBeNull();
    expect(save).toBeEnabled();
    await user.click(save);

    await expect.poll(() => screen.queryByRole('form', { name: 'Edit order 00000005' })).toBeNull();
    expect(adminOrders.requests.find((r) => r.method === 'PATCH')).toMatchObject({
      path: '/api/admin/orders/01a2136e-0000-7000-8000-000000000005',
      body: { limit_price: -0.035 },
    });
    expect(await screen.findByTestId('toast')).toHaveTextContent('Limit price of order 00000005 set to -0.035.');
    await expect.poll(async () => cells((await bodyRows())[0]!)[5]).toBe('-0.035');
    expect(cells((await bodyRows())[0]!)[9]).toBe('24/11/2026 12:00');
  });

  it('refuses prices off the tick with the exact decimal rule, not floating point', async () => {
    adminOrders.orders = mockAdminOrders(6);
    const { user } = asAdmin();
    await bodyRows();
    // Order 0: on the Euribor, tick 0.005.
    await user.click(screen.getByRole('button', { name: 'Edit limit price of order 00000000' }));
    const form = await screen.findByRole('form', { name: 'Edit order 00000000' });
    const field = within(form).getByRole('textbox', { name: 'Limit price' });
    const save = within(form).getByRole('button', { name: 'Save limit price' });
    for (const [text, ok] of [['0.3', true], ['0.0051', false], ['1e-3', false], ['abc', false], ['-0.015', true], ['0.1234567890123456789', false]] as const) {
      await user.clear(field);
      await user.type(field, text);
      if (ok) await expect.poll(() => save.hasAttribute('disabled')).toBe(false);
      else expect(await within(form).findByText('Invalid value')).toBeInTheDocument();
    }
    // The order's own price is no change: nothing to save, no message.
    await user.clear(field);
    await user.type(field, '-0.02');
    await expect.poll(() => save.hasAttribute('disabled')).toBe(true);
    expect(within(form).queryByText('Invalid value')).toBeNull();
  });

  it('shows the server’s field error and its conflict', async () => {
    adminOrders.orders = mockAdminOrders(6);
    // The server's tick has changed meanwhile: it refuses what the browser accepted.
    server.use(
      http.patch('*/api/admin/orders/:id', () =>
        HttpResponse.json(
          { type: 'about:blank', title: 'Bad Request', status: 400, detail: 'The request is not valid.', errors: [{ field: 'limit_price', message: 'Invalid value' }] },
          { status: 400, headers: { 'Content-Type': 'application/problem+json' } },
        ),
        { once: true },
      ),
      http.patch('*/api/admin/orders/:id', () =>
        HttpResponse.json(
          { type: 'about:blank', title: 'Conflict', status: 409, detail: 'Only a working order’s limit price can be corrected.' },
          { status: 409, headers: { 'Content-Type': 'application/problem+json' } },
        ),
      ),
    );
    const { user } = asAdmin();
    await bodyRows();
    await user.click(screen.getByRole('button', { name: 'Edit limit price of order 00000005' }));
    const form = await screen.findByRole('form', { name: 'Edit order 00000005' });
    const field = within(form).getByRole('textbox', { name: 'Limit price' });
    await user.clear(field);
    await user.type(field, '-0.025');
    await user.click(within(form).getByRole('button', { name: 'Save limit price' }));
    expect(await within(form).findByText('Invalid value')).toBeInTheDocument();
    expect(field).toHaveAttribute('aria-invalid', 'true');

    await user.click(within(form).getByRole('button', { name: 'Save limit price' }));
    expect(await within(form).findByRole('alert')).toHaveTextContent('Only a working order’s limit price can be corrected.');
    expect(screen.getByRole('form', { name: 'Edit order 00000005' })).toBeInTheDocument();
  });

  it('is read-only for sales, who filter like the admin', async () => {
    adminOrders.orders = mockAdminOrders(6);
    adminLists();
    const { user } = asSales();
    expect(await bodyRows()).toHaveLength(6);
    expect(screen.queryByRole('button', { name: /^Edit limit price/ })).toBeNull();
    expect(screen.queryByRole('columnheader', { name: 'Edit' })).toBeNull();

    await pickOption(user, 'Company', 'Kestrel');
    await expect.poll(() => asked().at(-1)).toBe('page=0&size=50&company_id=c-kestrel');
    await pickOption(user, 'Instrument', 'Euribor 3M Dec26-Mar27');
    await expect.poll(() => asked().at(-1)).toBe('page=0&size=50&company_id=c-kestrel&instrument_id=i-1');
  });

  it('says when there is no order, or none matching', async () => {
    const { user } = asAdmin();
    expect(await screen.findByText('No order has been placed yet.')).toBeInTheDocument();
    await user.click(screen.getByRole('combobox', { name: 'State' }));
    await user.click(await screen.findByRole('option', { name: 'Expired' }));
    await user.keyboard('{Escape}');
    expect(await screen.findByText('No order matches these filters.')).toBeInTheDocument();
  });

  it('shows the server’s error with a retry', async () => {
    adminOrders.orders = mockAdminOrders(2);
    server.use(
      http.get(
        '*/api/admin/orders',
        () => HttpResponse.json({ type: 'about:blank', title: 'Internal Server Error', status: 500, detail: 'Something broke.' }, { status: 500, headers: { 'content-type': 'application/problem+json' } }),
        { once: true },
      ),
    );
    const { user } = asAdmin();
    expect(await screen.findByText('Oops! There was an error.')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Retry' }));
    expect(await bodyRows()).toHaveLength(2);
  });

  it('is not for traders or company admins: no access and nothing asked', async () => {
    db.addUser({ email: 'cora@acme.test', roles: ['company-admin'] });
    renderApp('/admin/order', { signedInAs: 'cora@acme.test' });
    expect(await screen.findByRole('heading', { name: 'No access' })).toBeInTheDocument();
    expect(adminOrders.requests).toEqual([]);
  });
});
