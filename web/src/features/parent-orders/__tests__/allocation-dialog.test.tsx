import { waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { db } from '@/testing/mocks/db';
import { addParent, BROKER, GIVE_UP_BROKER, trading, type MockOrder } from '@/testing/mocks/order-handlers';
import { server } from '@/testing/mocks/server';
import { renderApp, screen } from '@/testing/test-utils';

const ALL_TIPS_READ = [
  {
    key: 'TOOLTIPS',
    value: ['FIRST_PARENT_ORDER', 'INTERACT_WITH_ORDERBOOK', 'LEAVING_LIQUIDITY_IN_ORDERBOOK', 'TAKING_LIQUIDITY_IN_ORDERBOOK', 'FIRST_ICEBERG_ORDER'].map((key) => ({ key, read: true })),
  },
];

function signIn() {
  db.user().ui_metadata = ALL_TIPS_READ;
  return renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
}

/** The signed-in trader's trade of 1,500 at -0.020 through Northgate, on a parent whose firm also has Baltic. */
function matched(overrides: Partial<MockOrder> = {}): MockOrder {
  const parent = addParent({ eligible_brokers: [BROKER, GIVE_UP_BROKER], quantities: { tradable: 1500, working: 0, matched: 1500 } });
  const o: MockOrder = {
    order_id: 'o-9', parent_order_id: parent.parent_order_id, instrument_id: 'i-1', state: 'MATCHED', price: -0.02, quantity: 1500,
    direction: 'BUY', iceberg: false, residual: false, broker_id: BROKER.company_id, matchable: false, created_at: '2026-11-23T10:00:00Z',
    ...overrides,
  };
  trading.orders.push(o);
  return o;
}

type User = ReturnType<typeof renderApp>['user'];

async function openDialog(user: User, label = 'Allocate 1,500 @ -0.020') {
  await user.click(await screen.findByRole('button', { name: label }));
  const dialog = await screen.findByRole('dialog', { name: 'Allocate trade' });
  await within(dialog).findByRole('form', { name: 'Allocate trade' });
  return dialog;
}

const line = (dialog: HTMLElement, n: number) => within(dialog).getByRole('group', { name: `Account line ${n}` });

async function choose(user: User, field: HTMLElement, option: string) {
  await user.click(field);
  await user.click(within(await screen.findByRole('listbox')).getByRole('option', { name: option }));
}

const puts = () => trading.requests.filter((r) => r.method === 'PUT' && r.path === '/api/orders/o-9/allocation');

describe('allocating a trade', () => {
  it('offers no allocation for a colleague’s trade, a working order or a fill the broker confirmed', async () => {
    const { created_by: _, ...mine } = matched({ created_by: 'u-colleague' });
    trading.orders.push({ ...mine, order_id: 'o-10', state: 'WORKING', quantity: 1000 }, { ...mine, order_id: 'o-11', state: 'BROKER_FILLED', quantity: 500 });
    signIn();
    expect(await screen.findByText('1,000 @ -0.020')).toBeInTheDocument();
    expect(screen.getByText('500 @ -0.020')).toBeInTheDocument();
    expect(screen.getByText('1,500 @ -0.020')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /^Allocat/ })).not.toBeInTheDocument();
  });

  it('checks the lines as the server does while they are typed', async () => {
    matched();
    const { user } = signIn();
    const dialog = await openDialog(user);
    // Not allocated yet: the trader's allocations, read once, have none for it.
    expect(trading.requests.filter((r) => r.method === 'GET' && r.path.endsWith('allocations'))).toHaveLength(1);
    expect(screen.queryByTestId('api-error-snackbar')).not.toBeInTheDocument();
    expect(within(dialog).getByText(/^Bought 1,500 Euribor 3M Dec26-Mar27 at -0\.020, executed by Northgate\./)).toBeInTheDocument();

    const save = within(dialog).getByRole('button', { name: 'Save' });
    const first = line(dialog, 1);
    expect(within(first).getByRole('textbox', { name: 'Quantity' })).toHaveValue('1500');
    expect(within(dialog).getByRole('status')).toHaveTextContent('Allocated 1,500 of 1,500');
    // No account chosen yet: nothing to say, but nothing to save either.
    expect(save).toBeDisabled();
    expect(within(dialog).getByRole('button', { name: 'Remove account line 1' })).toBeDisabled();

    // The firm's open accounts only.
    await user.click(within(first).getByRole('combobox', { name: 'Account' }));
    const options = within(await screen.findByRole('listbox')).getAllByRole('option').map((o) => o.textContent);
    expect(options).toEqual(['ACME-MACRO — Acme Global Macro', 'ACME-RATES — Acme Rates']);
    await user.click(screen.getByRole('option', { name: 'ACME-MACRO — Acme Global Macro' }));
    expect(save).toBeEnabled();

    const q1 = within(first).getByRole('textbox', { name: 'Quantity' });
    await user.clear(q1);
    await user.type(q1, '1000');
    expect(within(dialog).getByRole('status')).toHaveTextContent('Allocated 1,000 of 1,500');
    expect(within(dialog).getByText("The quantities add up to 1000, not the trade's 1500")).toBeInTheDocument();
    expect(save).toBeDisabled();

    // A second line starts with what is left.
    await user.click(within(dialog).getByRole('button', { name: 'Add account' }));
    const second = line(dialog, 2);
    expect(within(second).getByRole('textbox', { name: 'Quantity' })).toHaveValue('500');
    await choose(user, within(second).getByRole('combobox', { name: 'Account' }), 'ACME-MACRO — Acme Global Macro');
    expect(within(second).getByText('Each account once')).toBeInTheDocument();
    await choose(user, within(second).getByRole('combobox', { name: 'Account' }), 'ACME-RATES — Acme Rates');
    expect(within(second).queryByText('Each account once')).not.toBeInTheDocument();
    const q2 = within(second).getByRole('textbox', { name: 'Quantity' });
    await user.clear(q2);
    await user.type(q2, '0');
    expect(within(second).getByText('At least 1')).toBeInTheDocument();
    await user.clear(q2);
    await user.type(q2, '500');
    expect(within(dialog).getByRole('status')).toHaveTextContent('Allocated 1,500 of 1,500');
    expect(within(dialog).queryByText(/The quantities add up/)).not.toBeInTheDocument();
    // Both accounts are used: no third line.
    expect(within(dialog).getByRole('button', { name: 'Add account' })).toBeDisabled();
    expect(save).toBeEnabled();
  });

  it('splits a matched trade across two accounts with a give-up broker', async () => {
    matched();
    const { user } = signIn();
    const dialog = await openDialog(user);
    await choose(user, within(line(dialog, 1)).getByRole('combobox', { name: 'Account' }), 'ACME-MACRO — Acme Global Macro');
    const q1 = within(line(dialog, 1)).getByRole('textbox', { name: 'Quantity' });
    await user.clear(q1);
    await user.type(q1, '1000');
    await user.click(within(dialog).getByRole('button', { name: 'Add account' }));
    await choose(user, within(line(dialog, 2)).getByRole('combobox', { name: 'Account' }), 'ACME-RATES — Acme Rates');

    // Given up to the firm's other broker: the executing one is no choice.
    const save = within(dialog).getByRole('button', { name: 'Save' });
    const giveUp = within(dialog).getByRole('combobox', { name: 'Give-up broker' });
    expect(giveUp).toHaveTextContent('None');
    await user.click(giveUp);
    expect(within(await screen.findByRole('listbox')).getAllByRole('option').map((o) => o.textContent)).toEqual(['None', 'Baltic']);
    await user.click(screen.getByRole('option', { name: 'Baltic' }));

    expect(save).toBeEnabled();
    await user.click(save);
    expect(await screen.findByText('Allocation saved.')).toBeInTheDocument();
    expect(screen.getByText('Version 1: sent to broker.')).toBeInTheDocument();
    expect(puts().map((r) => r.body)).toEqual([
      { lines: [{ account_id: 'acc-acme-macro', quantity: 1000 }, { account_id: 'acc-acme-rates', quantity: 500 }], give_up_broker_id: GIVE_UP_BROKER.company_id },
    ]);
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Allocate trade' })).not.toBeInTheDocument());

    // The card says what it is now.
    const card = screen.getByRole('listitem', { name: /Buy Euribor/ });
    expect(within(card).getByTestId('allocation-summary')).toHaveTextContent('v1 · ACME-MACRO 1,000; ACME-RATES 500 · Give-up: Baltic · Sent to broker');
    expect(within(card).getByRole('button', { name: 'Allocation 1,500 @ -0.020' })).toBeInTheDocument();
  });

  it('opens on the allocation saved, and Cancel leaves it as it was', async () => {
    matched();
    trading.allocations.set('o-9', {
      order_id: 'o-9', version: 1, give_up_broker: GIVE_UP_BROKER, broker_ack: 'PENDING', broker_ack_text: null, updated_at: '2026-11-23T10:05:00Z',
      lines: [
        { account_id: 'acc-acme-macro', code: 'ACME-MACRO', name: 'Acme Global Macro', quantity: 1000 },
        { account_id: 'acc-acme-rates', code: 'ACME-RATES', name: 'Acme Rates', quantity: 500 },
      ],
    });
    const { user } = signIn();
    const again = await openDialog(user, 'Allocation 1,500 @ -0.020');
    expect(within(again).getByTestId('allocation-status')).toHaveTextContent('Version 1: Sent to broker');
    expect(within(line(again, 2)).getByRole('combobox', { name: 'Account' })).toHaveTextContent('ACME-RATES — Acme Rates');
    expect(within(again).getByRole('combobox', { name: 'Give-up broker' })).toHaveTextContent('Baltic');

    // A line removed: the rest no longer adds up.
    await user.click(within(again).getByRole('button', { name: 'Remove account line 2' }));
    expect(within(again).getByText("The quantities add up to 1000, not the trade's 1500")).toBeInTheDocument();
    expect(within(again).getByRole('button', { name: 'Save' })).toBeDisabled();
    // A changed form is not dropped by a stray Esc; Cancel leaves it.
    await user.keyboard('{Escape}');
    expect(screen.getByRole('dialog', { name: 'Allocate trade' })).toBeInTheDocument();
    await user.click(within(again).getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Allocate trade' })).not.toBeInTheDocument());
    expect(puts()).toHaveLength(0);
  });

  it("shows the server's field errors at their fields, and a trade too late to allocate as an alert", async () => {
    matched({ state: 'BROKER_ACCEPTED' });
    server.use(
      http.put(
        '*/api/orders/:id/allocation',
        () =>
          HttpResponse.json(
            {
              status: 400,
              detail: 'The allocation is not valid.',
              errors: [
                { field: 'lines[1].account_id', message: 'Not an account of your firm' },
                { field: 'give_up_broker_id', message: "Not one of your firm's brokers" },
              ],
            },
            { status: 400 },
          ),
        { once: true },
      ),
      http.put('*/api/orders/:id/allocation', () => HttpResponse.json({ status: 409, detail: 'This trade can no longer be allocated.' }, { status: 409 }), { once: true }),
    );
    const { user } = signIn();
    const dialog = await openDialog(user);
    await choose(user, within(line(dialog, 1)).getByRole('combobox', { name: 'Account' }), 'ACME-MACRO — Acme Global Macro');
    const q1 = within(line(dialog, 1)).getByRole('textbox', { name: 'Quantity' });
    await user.clear(q1);
    await user.type(q1, '700');
    await user.click(within(dialog).getByRole('button', { name: 'Add account' }));
    await choose(user, within(line(dialog, 2)).getByRole('combobox', { name: 'Account' }), 'ACME-RATES — Acme Rates');
    await choose(user, within(dialog).getByRole('combobox', { name: 'Give-up broker' }), 'Baltic');
    // By keyboard: Enter in a field submits.
    await user.type(within(line(dialog, 2)).getByRole('textbox', { name: 'Quantity' }), '{Enter}');

    expect(await within(line(dialog, 2)).findByText('Not an account of your firm')).toBeInTheDocument();
    expect(within(line(dialog, 2)).getByRole('combobox', { name: 'Account' })).toHaveAttribute('aria-invalid', 'true');
    expect(within(dialog).getByText("Not one of your firm's brokers")).toBeInTheDocument();
    expect(within(dialog).queryByRole('alert')).not.toBeInTheDocument();

    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await within(dialog).findByRole('alert')).toHaveTextContent('This trade can no longer be allocated.');
    // Still open, as it was.
    expect(within(line(dialog, 1)).getByRole('textbox', { name: 'Quantity' })).toHaveValue('700');
  });

  it("opens on the allocation there is, with the broker's answer and an account since closed", async () => {
    matched({ state: 'PARTIAL_BROKER_FILLED' });
    trading.allocations.set('o-9', {
      order_id: 'o-9', version: 3, give_up_broker: null, broker_ack: 'REJECTED', broker_ack_text: 'Unknown account ACME-OLD', updated_at: '2026-11-23T10:05:00Z',
      lines: [
        { account_id: 'acc-acme-macro', code: 'ACME-MACRO', name: 'Acme Global Macro', quantity: 1000 },
        { account_id: 'acc-acme-old', code: 'ACME-OLD', name: 'Acme legacy book', quantity: 500 },
      ],
    });
    const { user } = signIn();
    // The card says so before any dialog opens: the trader's allocations are read once.
    expect(await screen.findByRole('button', { name: 'Allocation 1,500 @ -0.020' })).toBeInTheDocument();
    const card = screen.getByRole('listitem', { name: /Buy Euribor/ });
    expect(within(card).getByTestId('allocation-summary')).toHaveTextContent('v3 · ACME-MACRO 1,000; ACME-OLD 500 · Rejected by broker: Unknown account ACME-OLD');
    expect(trading.requests.filter((r) => r.path.includes('allocation')).map((r) => r.path)).toEqual(['/api/allocations']);
    const dialog = await openDialog(user, 'Allocation 1,500 @ -0.020');
    expect(within(dialog).getByTestId('allocation-status')).toHaveTextContent('Version 3: Rejected by broker: Unknown account ACME-OLD');
    const closed = line(dialog, 2);
    expect(within(closed).getByRole('combobox', { name: 'Account' })).toHaveTextContent('ACME-OLD — Acme legacy book (closed)');
    expect(within(closed).getByText('Not an account of your firm')).toBeInTheDocument();
    expect(within(dialog).getByRole('button', { name: 'Save' })).toBeDisabled();
    await choose(user, within(closed).getByRole('combobox', { name: 'Account' }), 'ACME-RATES — Acme Rates');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('Version 4: sent to broker.')).toBeInTheDocument();
    expect(puts().at(-1)?.body).toEqual({
      lines: [{ account_id: 'acc-acme-macro', quantity: 1000 }, { account_id: 'acc-acme-rates', quantity: 500 }],
      give_up_broker_id: null,
    });
    // The row reads the allocation saved.
    expect(await screen.findByRole('button', { name: 'Allocation 1,500 @ -0.020' })).toBeInTheDocument();
  });
});
