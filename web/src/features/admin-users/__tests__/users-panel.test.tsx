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

describe('users panel', () => {
  it('offers a company admin their own company and no venue role', async () => {
    db.addUser({ user_id: 'u-boss', email: 'boss@acme.test', first_name: 'Bo', last_name: 'Boss', roles: ['company-admin'], company_id: 'c-acme', company_name: 'Acme' });
    const { user } = renderApp('/admin/user', { signedInAs: 'boss@acme.test' });
    await user.click(await screen.findByRole('button', { name: 'Create user' }));
    const form = await drawer('Create user');
    await user.click(within(form).getByRole('combobox', { name: 'Roles' }));
    const offered = (await screen.findAllByRole('option')).map((o) => o.textContent);
    expect(offered).toEqual(['Trader', 'Company admin', 'Sandbox']);
  });

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

  it("shows the server's refusal of a venue role beside a trading role under Roles", async () => {
    const message = 'A venue role (upstairs-admin, upstairs-sales) cannot be held with a trading role (trader, sandbox)';
    let sent: unknown;
    server.use(
      http.patch('*/api/users/:id', async ({ request }) => {
        sent = await request.json();
        // As the server answers it: the field's message is also the detail.
        return HttpResponse.json({ status: 400, detail: message, errors: [{ field: 'roles', message }] }, { status: 400 });
      }),
    );
    const { user } = asAdmin('/admin/user');
    await user.click(await screen.findByRole('button', { name: 'Edit trader@acme.test' }));
    const form = await drawer('Edit trader@acme.test');
    await choose(user, form, 'Roles', 'Upstairs admin');
    await user.keyboard('{Escape}');
    await user.click(within(form).getByRole('button', { name: 'Save changes' }));
    expect(await within(form).findByRole('alert')).toHaveTextContent(message);
    expect(sent).toMatchObject({ roles: ['trader', 'upstairs-admin'] });
    expect(within(form).getByRole('combobox', { name: 'Roles' })).toHaveAccessibleDescription(message);
  });
});
