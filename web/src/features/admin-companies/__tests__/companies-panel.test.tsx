import { within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { admin } from '@/testing/mocks/admin-handlers';
import { db } from '@/testing/mocks/db';
import { server } from '@/testing/mocks/server';
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
      fix_comp_id: null,
      fix_reset_on_logon: false,
      fix_cancel_on_disconnect: true,
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

describe('FIX fields of the company form', () => {
  const COMP_ID_MESSAGE = "A FIX CompID is 1 to 32 letters, digits, '.', '_' or '-'";
  const PASSWORD_MESSAGE = 'A FIX password has at least 8 characters';

  it('checks the CompID and password as the server does, and sends the password only when typed', async () => {
    const { user } = asAdmin('/admin/company');
    await user.click(await screen.findByRole('button', { name: 'Create company' }));
    const form = await drawer('Create company');
    await user.type(within(form).getByRole('textbox', { name: 'Company name' }), 'Kestrel');
    await user.type(within(form).getByRole('textbox', { name: 'Full name' }), 'Kestrel Trading Ltd');
    await choose(user, form, 'Roles', 'Broker');
    await user.keyboard('{Escape}');
    const submit = within(form).getByRole('button', { name: 'Create company' });
    expect(submit).toBeEnabled();
    expect(within(form).getByText('At least 8 characters; leave blank for none')).toBeInTheDocument();

    const compId = within(form).getByRole('textbox', { name: 'FIX CompID' });
    await user.type(compId, 'KES TREL');
    await user.tab();
    expect(within(form).getByText(COMP_ID_MESSAGE)).toBeInTheDocument();
    expect(submit).toBeDisabled();
    await user.clear(compId);
    await user.type(compId, 'X'.repeat(33));
    expect(within(form).getByText(COMP_ID_MESSAGE)).toBeInTheDocument();
    await user.clear(compId);
    await user.type(compId, ' KESTREL ');
    expect(within(form).queryByText(COMP_ID_MESSAGE)).not.toBeInTheDocument();

    const password = within(form).getByLabelText('FIX password');
    expect(password).toHaveAttribute('type', 'password');
    expect(password).toHaveAttribute('autocomplete', 'new-password');
    await user.type(password, 'Short-1');
    await user.tab();
    expect(within(form).getByText(PASSWORD_MESSAGE)).toBeInTheDocument();
    expect(submit).toBeDisabled();
    await user.type(password, '!');
    expect(within(form).queryByText(PASSWORD_MESSAGE)).not.toBeInTheDocument();
    // No "remove" on a company that has no password yet.
    expect(within(form).queryByRole('switch', { name: 'Remove FIX password' })).not.toBeInTheDocument();
    await user.click(within(form).getByRole('switch', { name: 'Allow sequence resets (141=Y) on FIX Logon' }));

    await user.click(submit);
    expect(await screen.findByText('Kestrel created.')).toBeInTheDocument();
    expect(admin.requests.find((r) => r.method === 'POST')?.body).toMatchObject({
      name: 'Kestrel',
      fix_comp_id: 'KESTREL',
      fix_password: 'Short-1!',
      fix_reset_on_logon: true,
    });
    const table = screen.getByRole('table', { name: 'Companies' });
    expect(within(table).getByRole('row', { name: /^Kestrel / })).toHaveTextContent('KESTREL');
  });

  it('keeps the password when left blank, removes it when asked, and says whether one is set', async () => {
    const northgate = admin.companies.find((c) => c.name === 'Northgate')!;
    Object.assign(northgate, { fix_comp_id: 'NORTHGATE', fix_password_set: true, fix_reset_on_logon: true });
    const { user } = asAdmin('/admin/company');
    const table = await screen.findByRole('table', { name: 'Companies' });
    expect(within(table).getByRole('row', { name: /^Northgate / })).toHaveTextContent('NORTHGATE');

    await user.click(within(table).getByRole('button', { name: 'Edit Northgate' }));
    let form = await drawer('Edit Northgate');
    expect(within(form).getByRole('textbox', { name: 'FIX CompID' })).toHaveValue('NORTHGATE');
    expect(within(form).getByLabelText('FIX password')).toHaveValue('');
    expect(within(form).getByText('A FIX password is set; leave blank to keep it')).toBeInTheDocument();
    expect(within(form).getByRole('switch', { name: 'Allow sequence resets (141=Y) on FIX Logon' })).toBeChecked();
    // Cancel on disconnect for FIX is on by default (issue 29); turned off here.
    const cod = within(form).getByRole('switch', { name: /^Cancel on disconnect/ });
    expect(cod).toBeChecked();
    await user.click(cod);
    await user.click(within(form).getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByText('Northgate updated.')).toBeInTheDocument();
    const kept = admin.requests.filter((r) => r.method === 'PATCH').at(-1)?.body as Record<string, unknown>;
    expect(kept).toMatchObject({ fix_comp_id: 'NORTHGATE', fix_reset_on_logon: true, fix_cancel_on_disconnect: false });
    expect(northgate.fix_cancel_on_disconnect).toBe(false);
    expect(kept).not.toHaveProperty('fix_password');

    // Removing it: the password field is off (a short value there no longer blocks), null is sent.
    await user.click(within(table).getByRole('button', { name: 'Edit Northgate' }));
    form = await drawer('Edit Northgate');
    await user.type(within(form).getByLabelText('FIX password'), 'x');
    await user.tab();
    expect(within(form).getByText(PASSWORD_MESSAGE)).toBeInTheDocument();
    await user.click(within(form).getByRole('switch', { name: 'Remove FIX password' }));
    expect(within(form).getByLabelText('FIX password')).toBeDisabled();
    expect(within(form).queryByText(PASSWORD_MESSAGE)).not.toBeInTheDocument();
    await user.click(within(form).getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByText('Northgate updated.')).toBeInTheDocument();
    expect(admin.requests.filter((r) => r.method === 'PATCH').at(-1)?.body).toMatchObject({ fix_password: null });

    await user.click(within(table).getByRole('button', { name: 'Edit Northgate' }));
    form = await drawer('Edit Northgate');
    expect(within(form).getByText('No FIX password is set; leave blank for none')).toBeInTheDocument();
    expect(within(form).queryByRole('switch', { name: 'Remove FIX password' })).not.toBeInTheDocument();
    // A blank CompID removes it.
    await user.clear(within(form).getByRole('textbox', { name: 'FIX CompID' }));
    await user.click(within(form).getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByText('Northgate updated.')).toBeInTheDocument();
    expect(admin.requests.filter((r) => r.method === 'PATCH').at(-1)?.body).toMatchObject({ fix_comp_id: null });
  });

  it("shows the server's FIX field errors under their fields", async () => {
    server.use(
      http.patch('*/api/admin/companies/:id', () =>
        HttpResponse.json(
          // As the server answers it: the field's message is also the detail.
          { status: 409, detail: 'Another company has this FIX CompID.', errors: [{ field: 'fix_comp_id', message: 'Another company has this FIX CompID.' }] },
          { status: 409 },
        ),
      ),
    );
    const { user } = asAdmin('/admin/company');
    const table = await screen.findByRole('table', { name: 'Companies' });
    await user.click(within(table).getByRole('button', { name: 'Edit Baltic' }));
    const form = await drawer('Edit Baltic');
    await user.type(within(form).getByRole('textbox', { name: 'FIX CompID' }), 'NORTHGATE');
    await user.click(within(form).getByRole('button', { name: 'Save changes' }));
    expect(await within(form).findByRole('alert')).toHaveTextContent('Another company has this FIX CompID.');
    const compId = within(form).getByRole('textbox', { name: 'FIX CompID' });
    expect(compId).toHaveAttribute('aria-invalid', 'true');
    expect(compId).toHaveAccessibleDescription('Another company has this FIX CompID.');
  });
});
