import { within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
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
    expect(within(form).getByText('Please enter a valid email address')).toBeInTheDocument();
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
