import { within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { admin } from '@/testing/mocks/admin-handlers';
import { db } from '@/testing/mocks/db';
import { renderApp, screen } from '@/testing/test-utils';

const ADMIN = 'ada@upstairs.test';

function asAdmin(path: string, options: { fakeTimers?: boolean } = {}) {
  db.addUser({ user_id: 'u-admin', email: ADMIN, first_name: 'Ada', last_name: 'Admin', roles: ['upstairs-admin'], company_id: 'c-upstairs', company_name: 'Upstairs' });
  return renderApp(path, { signedInAs: ADMIN, ...options });
}

async function drawer(title: string) {
  return screen.findByRole('form', { name: title });
}

async function choose(user: ReturnType<typeof renderApp>['user'], form: HTMLElement, label: string, option: string) {
  await user.click(within(form).getByRole('combobox', { name: label }));
  await user.click(await screen.findByRole('option', { name: option }));
}

describe('admin navigation', () => {
  it('gives an admin the menu button and the drawer', async () => {
    const { user } = asAdmin('/dashboard');
    await user.click(await screen.findByRole('button', { name: 'Open menu' }));
    const nav = await screen.findByRole('navigation', { name: 'Main menu' });
    expect(within(nav).getAllByRole('link').map((l) => l.textContent)).toEqual([
      'Dashboard', 'Companies panel', 'Users panel', 'Instruments panel', 'Block Calculator', 'Account Info',
    ]);
    await user.click(within(nav).getByRole('link', { name: 'Companies panel' }));
    expect(await screen.findByRole('heading', { name: 'Companies' })).toBeInTheDocument();
  });

  it('gives a sales user the drawer without the admin panels', async () => {
    db.addUser({ email: 'sam@upstairs.test', roles: ['upstairs-sales'] });
    const { user } = renderApp('/dashboard', { signedInAs: 'sam@upstairs.test' });
    await user.click(await screen.findByRole('button', { name: 'Open menu' }));
    const nav = await screen.findByRole('navigation', { name: 'Main menu' });
    expect(within(nav).getAllByRole('link').map((l) => l.textContent)).toEqual(['Dashboard', 'Block Calculator', 'Account Info']);
  });

  it('gives a trader no menu button and the 404 page on admin routes', async () => {
    renderApp('/admin/company', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('heading', { name: 'Oops! Page Not Found (404)' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Open menu' })).not.toBeInTheDocument();
    expect(admin.requests).toEqual([]);
  });
});

describe('companies panel', () => {
  it('lists page 0 of 200 and creates a trading firm with its brokers', async () => {
    const { user } = asAdmin('/admin/company');
    const table = await screen.findByRole('table', { name: 'Companies' });
    expect(within(table).getByText('Halyard')).toBeInTheDocument();
    expect(admin.requests[0]?.path).toBe('/api/admin/companies?page=0&size=200');

    await user.click(screen.getByRole('button', { name: 'Create company' }));
    const form = await drawer('Create company');
    const submit = within(form).getByRole('button', { name: 'Create company' });
    expect(submit).toBeDisabled();
    await user.type(within(form).getByRole('textbox', { name: 'Company name' }), 'K');
    await user.type(within(form).getByRole('textbox', { name: 'Full name' }), 'K');
    await user.tab();
    expect(within(form).getByText('Name must be at least 2 characters long')).toBeInTheDocument();
    expect(within(form).getByText('Full name must be at least 4 characters long')).toBeInTheDocument();
    await user.type(within(form).getByRole('textbox', { name: 'Company name' }), 'estrel');
    // The rule is 2 characters, whatever the message says.
    await user.type(within(form).getByRole('textbox', { name: 'Full name' }), 'T');
    expect(within(form).queryByText('Full name must be at least 4 characters long')).not.toBeInTheDocument();
    await user.type(within(form).getByRole('textbox', { name: 'Trade confirmation e-mail' }), 'ab');
    await user.tab();
    expect(within(form).getByText('Email must be at least 5 characters long')).toBeInTheDocument();
    await user.clear(within(form).getByRole('textbox', { name: 'Trade confirmation e-mail' }));

    // Brokers: the default follows the first selected broker, and resets when it is removed.
    await user.click(within(form).getByRole('combobox', { name: 'Brokers' }));
    const listbox = await screen.findByRole('listbox');
    await user.click(within(listbox).getByRole('option', { name: 'Baltic' }));
    await user.click(within(listbox).getByRole('option', { name: 'Northgate' }));
    await user.keyboard('{Escape}');
    expect(within(form).getByRole('combobox', { name: 'Default broker' })).toHaveTextContent('Baltic');
    await user.click(within(form).getByRole('combobox', { name: 'Brokers' }));
    await user.click(within(await screen.findByRole('listbox')).getByRole('option', { name: 'Baltic' }));
    await user.keyboard('{Escape}');
    expect(within(form).getByRole('combobox', { name: 'Default broker' })).toHaveTextContent('Northgate');

    expect(submit).toBeEnabled();
    await user.click(submit);
    expect(await screen.findByText('Kestrel created.')).toBeInTheDocument();
    expect(admin.requests.find((r) => r.method === 'POST')?.body).toEqual({
      name: 'Kestrel',
      full_name: 'KT',
      trade_confirmation_email: null,
      trade_confirmation_via_email_enabled: false,
      brokers: [{ company_id: 'c-northgate' }],
      default_broker: { company_id: 'c-northgate' },
      roles: [],
    });
  });

  it("requires a broker for a trading firm and shows the server's field errors", async () => {
    const { user } = asAdmin('/admin/company');
    await user.click(await screen.findByRole('button', { name: 'Create company' }));
    const form = await drawer('Create company');
    await user.type(within(form).getByRole('textbox', { name: 'Company name' }), 'Halyard');
    await user.type(within(form).getByRole('textbox', { name: 'Full name' }), 'Halyard LLP');
    await user.click(within(form).getByRole('combobox', { name: 'Brokers' }));
    await user.click(within(await screen.findByRole('listbox')).getByRole('option', { name: 'Baltic' }));
    await user.click(within(screen.getByRole('listbox')).getByRole('option', { name: 'Baltic' }));
    await user.keyboard('{Escape}');
    expect(within(form).getByText('Broker is required')).toBeInTheDocument();
    expect(within(form).getByRole('button', { name: 'Create company' })).toBeDisabled();
    await choose(user, form, 'Roles', 'Broker');
    await user.keyboard('{Escape}');
    await user.click(within(form).getByRole('button', { name: 'Create company' }));
    expect(await within(form).findByText('A company with this name already exists.')).toBeInTheDocument();
    expect(within(form).getByRole('alert')).toHaveTextContent('The company is not valid.');
  });
});

describe('users panel', () => {
  it('creates a user in a company and sends an empty multiplier as -1', async () => {
    const { user } = asAdmin('/admin/user');
    await user.click(await screen.findByRole('button', { name: 'Create user' }));
    const form = await drawer('Create user');
    await user.type(within(form).getByRole('textbox', { name: 'First name' }), 'Nia');
    await user.type(within(form).getByRole('textbox', { name: 'Last name' }), 'Novak');
    await user.type(within(form).getByRole('textbox', { name: 'E-mail' }), 'nia-at-halyard');
    await user.tab();
    expect(within(form).getByText('Please enter a valid email address')).toBeInTheDocument();
    await user.clear(within(form).getByRole('textbox', { name: 'E-mail' }));
    await user.type(within(form).getByRole('textbox', { name: 'E-mail' }), 'nia@halyard.test');
    await choose(user, form, 'Company', 'Halyard');
    await user.type(within(form).getByRole('textbox', { name: 'Parent order limit multiplier' }), '0');
    expect(within(form).getByText('Must be greater than 0')).toBeInTheDocument();
    await user.clear(within(form).getByRole('textbox', { name: 'Parent order limit multiplier' }));
    await user.click(within(form).getByRole('button', { name: 'Create user' }));
    expect(await screen.findByText('nia@halyard.test created. An activation e-mail is on its way.')).toBeInTheDocument();
    expect(admin.requests.find((r) => r.path === '/api/users')?.body).toMatchObject({
      email: 'nia@halyard.test', company_id: 'c-halyard', roles: ['trader'], parent_order_limit_multiplier: -1, active: true,
    });
  });

  it('locks the company on edit and clears the multiplier with -1', async () => {
    db.user().parent_order_limit_multiplier = 4;
    const { user } = asAdmin('/admin/user');
    await user.click(await screen.findByRole('button', { name: 'Edit trader@acme.test' }));
    const form = await drawer('Edit trader@acme.test');
    expect(within(form).getByRole('combobox', { name: 'Company' })).toHaveAttribute('aria-disabled', 'true');
    expect(within(form).getByText('The company of a user cannot be changed')).toBeInTheDocument();
    const multiplier = within(form).getByRole('textbox', { name: 'Parent order limit multiplier' });
    expect(multiplier).toHaveValue('4');
    await user.clear(multiplier);
    await user.click(within(form).getByRole('switch', { name: 'Active' }));
    await user.click(within(form).getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByText('trader@acme.test updated.')).toBeInTheDocument();
    expect(db.userPatches.at(-1)).toMatchObject({ userId: 'u-1', body: { parent_order_limit_multiplier: -1, active: false } });
    expect(db.userPatches.at(-1)?.body).not.toHaveProperty('company_id');
  });
});

describe('instruments panel', () => {
  it('debounces the name filter 500 ms and sorts by column', async () => {
    const { user } = asAdmin('/admin/instrument', { fakeTimers: true });
    await screen.findByRole('table', { name: 'Instruments' });
    const before = admin.requests.length;
    await user.type(screen.getByRole('textbox', { name: 'Name' }), 'eur');
    expect(admin.requests.length).toBe(before);
    await vi.advanceTimersByTimeAsync(500);
    await expect.poll(() => admin.requests.at(-1)?.path).toContain('name=eur');
    expect(admin.requests.slice(before).filter((r) => r.path.includes('name=e&') || r.path.includes('name=eu&'))).toEqual([]);

    await user.click(screen.getByRole('button', { name: 'Term' }));
    await expect.poll(() => admin.requests.at(-1)?.path).toContain('sort_by=term');
    expect(admin.requests.at(-1)?.path).toContain('order_by=ASC');
    await user.click(screen.getByRole('button', { name: 'Term' }));
    await expect.poll(() => admin.requests.at(-1)?.path).toContain('order_by=DESC');
    await user.click(screen.getByRole('combobox', { name: 'Active' }));
    await user.click(await screen.findByRole('option', { name: 'Inactive' }));
    await expect.poll(() => admin.requests.at(-1)?.path).toContain('active=false');
  });

  it('creates the first instrument from the empty list', async () => {
    admin.instruments = [];
    const { user } = asAdmin('/admin/instrument');
    expect(await screen.findByText('No instrument matches these filters.')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Create instrument' }));
    const form = await drawer('Create instrument');
    const fill = async (name: RegExp, value: string) => user.type(within(form).getByRole('textbox', { name }), value);
    await fill(/^Name/, 'Brent Crude Dec26-Jun27');
    await fill(/^Term/, 'Dec26-Jun27');
    await fill(/^Currency/, 'USD');
    await fill(/^Tick size/, '0.01');
    await fill(/^Minimum block size/, '100');
    await fill(/^Best bid/, '1.18');
    expect(within(form).getByRole('textbox', { name: /^Best offer/ })).toHaveValue('1.28');
    await fill(/^Exchange id/, 'B');
    await user.click(within(form).getByRole('button', { name: 'Create instrument' }));
    expect(await screen.findByText('Brent Crude Dec26-Jun27 created.')).toBeInTheDocument();
    expect(admin.requests.find((r) => r.method === 'POST')?.body).toMatchObject({ min_tick_price: 1.18, max_tick_price: 1.28, exchange_tick_size: 0.01, min_quantity: 100 });
    expect(await screen.findByRole('table', { name: 'Instruments' })).toHaveTextContent('Brent Crude Dec26-Jun27');
  });

  it('edits the band: one side sets the other 10 ticks away, off-tick prices are invalid', async () => {
    const { user } = asAdmin('/admin/instrument');
    await user.click(await screen.findByRole('button', { name: 'Edit Euribor 3M Dec26-Mar27' }));
    const form = await drawer('Edit Euribor 3M Dec26-Mar27');
    const bid = within(form).getByRole('textbox', { name: 'Best bid' });
    const offer = within(form).getByRole('textbox', { name: 'Best offer' });
    expect([bid, offer].map((i) => (i as HTMLInputElement).value)).toEqual(['-0.040', '-0.015']);
    await user.clear(bid);
    await user.type(bid, '-0.030');
    expect(offer).toHaveValue('0.020');
    await user.clear(offer);
    await user.type(offer, '0.010');
    expect(bid).toHaveValue('-0.040');
    await user.type(offer, '1');
    expect(within(form).getByText('Invalid value')).toBeInTheDocument();
    expect(within(form).getByRole('button', { name: 'Save changes' })).toBeDisabled();
    await user.clear(offer);
    await user.type(offer, '0.010');
    await user.clear(within(form).getByRole('textbox', { name: 'Minimum block size' }));
    expect(within(form).getByText('Minimum block size is required')).toBeInTheDocument();
    await user.type(within(form).getByRole('textbox', { name: 'Minimum block size' }), '750');
    await user.click(within(form).getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByText('Euribor 3M Dec26-Mar27 updated.')).toBeInTheDocument();
    expect(admin.requests.find((r) => r.method === 'PATCH')?.body).toMatchObject({ min_tick_price: -0.04, max_tick_price: 0.01, min_quantity: 750, tick_size: 0.005 });
  });
});

describe('block calculator', () => {
  it('shows the defaults and follows the inputs, exactly', async () => {
    const { user } = asAdmin('/admin/block-calculator');
    expect(await screen.findByTestId('band')).toHaveTextContent('94.26 – 95.20');
    expect(screen.getByTestId('ticks')).toHaveTextContent('94 (95 prices)');
    expect(screen.getByTestId('notional')).toHaveTextContent('198,933.00');
    const tick = screen.getByRole('textbox', { name: 'Tick size' });
    await user.clear(tick);
    await user.type(tick, '0.25');
    expect(screen.getByTestId('band')).toHaveTextContent('94.50 – 95.00');
    expect(screen.getByTestId('ticks')).toHaveTextContent('2 (3 prices)');
    await user.clear(tick);
    expect(screen.getByText('Enter a tick size greater than 0')).toBeInTheDocument();
  });
});
