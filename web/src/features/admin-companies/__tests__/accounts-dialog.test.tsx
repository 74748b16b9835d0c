import { waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { admin, mockAccount } from '@/testing/mocks/admin-handlers';
import { db } from '@/testing/mocks/db';
import { renderApp, screen } from '@/testing/test-utils';
import { ACCOUNT_MESSAGES, accountCodeError, accountNameError } from '../lib/account-form';

const ADMIN = 'ada@upstairs.test';

function asAdmin() {
  db.addUser({ user_id: 'u-admin', email: ADMIN, first_name: 'Ada', last_name: 'Admin', roles: ['upstairs-admin'], company_id: 'c-upstairs', company_name: 'Upstairs' });
  return renderApp('/admin/company', { signedInAs: ADMIN });
}

type User = ReturnType<typeof renderApp>['user'];

async function openAccounts(user: User, company: string) {
  const table = await screen.findByRole('table', { name: 'Companies' });
  await user.click(within(table).getByRole('button', { name: `Accounts of ${company}` }));
  return screen.findByRole('dialog', { name: `${company}'s accounts` });
}

const rows = (dialog: HTMLElement, company: string) =>
  within(within(dialog).getByRole('table', { name: `Accounts of ${company}` }))
    .getAllByRole('row')
    .slice(1)
    .map((r) => within(r).getAllByRole('cell').slice(0, 3).map((c) => c.textContent));

const requests = (method: string) => admin.requests.filter((r) => r.method === method && r.path.includes('/accounts'));

describe('account rules (the server’s, with its texts)', () => {
  it('takes a code of 1 to 32 letters, digits, dots, underscores, dashes or slashes, and a name of 1 to 100 characters', () => {
    expect(accountCodeError(' HAL-MACRO/2.a_b ')).toBeUndefined();
    expect(accountCodeError('X'.repeat(32))).toBeUndefined();
    expect(accountCodeError('X'.repeat(33))).toBe(ACCOUNT_MESSAGES.code);
    expect(accountCodeError('HAL MACRO')).toBe(ACCOUNT_MESSAGES.code);
    expect(accountCodeError('HAL+1')).toBe(ACCOUNT_MESSAGES.code);
    expect(accountNameError('é'.repeat(100))).toBeUndefined();
    expect(accountNameError('😀'.repeat(100))).toBeUndefined();
    expect(accountNameError('x'.repeat(101))).toBe(ACCOUNT_MESSAGES.name);
  });
});

describe("a company's accounts in the Companies panel", () => {
  it('lists every account with its status, adds one, and refuses a code the company has', async () => {
    admin.accounts.push(mockAccount('c-halyard', 'HAL-OLD', 'Halyard old book', false));
    const { user } = asAdmin();
    const dialog = await openAccounts(user, 'Halyard');
    await within(dialog).findByRole('table', { name: 'Accounts of Halyard' });
    // The venue's staff see the closed ones too.
    expect(rows(dialog, 'Halyard')).toEqual([
      ['HAL-MACRO', 'Halyard Global Macro Fund', 'Open'],
      ['HAL-OLD', 'Halyard old book', 'Closed'],
    ]);

    await user.click(within(dialog).getByRole('button', { name: 'Add account' }));
    const form = within(dialog).getByRole('form', { name: 'Add account' });
    const submit = within(form).getByRole('button', { name: 'Add account' });
    expect(submit).toBeDisabled();
    const code = within(form).getByRole('textbox', { name: 'Code' });
    expect(code).toHaveFocus();
    await user.type(code, 'HAL RATES');
    await user.tab();
    expect(within(form).getByText(ACCOUNT_MESSAGES.code)).toBeInTheDocument();
    await user.clear(code);
    // The server's answer to a code the company has: under the field.
    await user.type(code, 'HAL-MACRO');
    await user.type(within(form).getByRole('textbox', { name: 'Name' }), 'Halyard Rates Opportunities');
    expect(submit).toBeEnabled();
    await user.click(submit);
    expect(await within(form).findByText(ACCOUNT_MESSAGES.codeTaken)).toBeInTheDocument();
    expect(code).toHaveAttribute('aria-invalid', 'true');

    await user.clear(code);
    // Sent trimmed, by keyboard.
    await user.type(code, ' HAL-RATES {Enter}');
    expect(await screen.findByText('HAL-RATES added to Halyard.')).toBeInTheDocument();
    expect(requests('POST').at(-1)).toMatchObject({ path: '/api/admin/companies/c-halyard/accounts', body: { code: 'HAL-RATES', name: 'Halyard Rates Opportunities' } });
    await waitFor(() => expect(rows(dialog, 'Halyard')).toContainEqual(['HAL-RATES', 'Halyard Rates Opportunities', 'Open']));
    expect(within(dialog).queryByRole('form', { name: 'Add account' })).not.toBeInTheDocument();
  });

  it('renames, closes and reopens an account', async () => {
    const { user } = asAdmin();
    const dialog = await openAccounts(user, 'Halyard');
    await within(dialog).findByRole('table', { name: 'Accounts of Halyard' });

    await user.click(within(dialog).getByRole('button', { name: 'Rename HAL-MACRO' }));
    const rename = within(dialog).getByRole('form', { name: 'Rename HAL-MACRO' });
    const name = within(rename).getByRole('textbox', { name: 'Name' });
    expect(name).toHaveValue('Halyard Global Macro Fund');
    await user.clear(name);
    expect(within(rename).getByRole('button', { name: 'Save' })).toBeDisabled();
    await user.type(name, 'Halyard Macro{Enter}');
    expect(await screen.findByText('HAL-MACRO renamed.')).toBeInTheDocument();
    expect(requests('PATCH').at(-1)).toMatchObject({ path: '/api/admin/companies/c-halyard/accounts/acc-hal-macro', body: { name: 'Halyard Macro' } });
    await waitFor(() => expect(rows(dialog, 'Halyard')).toEqual([['HAL-MACRO', 'Halyard Macro', 'Open']]));

    // Esc leaves a rename, not the dialog.
    await user.click(within(dialog).getByRole('button', { name: 'Rename HAL-MACRO' }));
    await user.keyboard('{Escape}');
    expect(within(dialog).queryByRole('form', { name: 'Rename HAL-MACRO' })).not.toBeInTheDocument();
    expect(screen.getByRole('dialog', { name: "Halyard's accounts" })).toBeInTheDocument();

    await user.click(within(dialog).getByRole('button', { name: 'Close account HAL-MACRO' }));
    expect(await screen.findByText('HAL-MACRO closed: no new allocations.')).toBeInTheDocument();
    expect(requests('PATCH').at(-1)?.body).toEqual({ active: false });
    await waitFor(() => expect(rows(dialog, 'Halyard')).toEqual([['HAL-MACRO', 'Halyard Macro', 'Closed']]));
    await user.click(within(dialog).getByRole('button', { name: 'Reopen account HAL-MACRO' }));
    expect(await screen.findByText('HAL-MACRO reopened.')).toBeInTheDocument();
    expect(requests('PATCH').at(-1)?.body).toEqual({ active: true });
    await waitFor(() => expect(rows(dialog, 'Halyard')).toEqual([['HAL-MACRO', 'Halyard Macro', 'Open']]));

    await user.click(within(dialog).getByRole('button', { name: 'Done' }));
    await waitFor(() => expect(screen.queryByRole('dialog', { name: "Halyard's accounts" })).not.toBeInTheDocument());
  });

  it('keeps what was typed in a new account through Esc, and closes an empty one', async () => {
    const { user } = asAdmin();
    const dialog = await openAccounts(user, 'Halyard');
    await within(dialog).findByRole('table', { name: 'Accounts of Halyard' });
    await user.click(within(dialog).getByRole('button', { name: 'Add account' }));
    const form = within(dialog).getByRole('form', { name: 'Add account' });
    await user.type(within(form).getByRole('textbox', { name: 'Code' }), 'HAL-NEW');
    await user.keyboard('{Escape}');
    // Typed input stays, in the dialog still open.
    expect(screen.getByRole('dialog', { name: "Halyard's accounts" })).toBeInTheDocument();
    expect(within(dialog).getByRole('textbox', { name: 'Code' })).toHaveValue('HAL-NEW');
    // Cancel drops it; Esc in an empty form closes the form, then the dialog.
    await user.click(within(form).getByRole('button', { name: 'Cancel' }));
    await user.click(within(dialog).getByRole('button', { name: 'Add account' }));
    expect(within(dialog).getByRole('textbox', { name: 'Code' })).toHaveValue('');
    await user.keyboard('{Escape}');
    expect(within(dialog).queryByRole('form', { name: 'Add account' })).not.toBeInTheDocument();
    expect(screen.getByRole('dialog', { name: "Halyard's accounts" })).toBeInTheDocument();
    await user.keyboard('{Escape}');
    await waitFor(() => expect(screen.queryByRole('dialog', { name: "Halyard's accounts" })).not.toBeInTheDocument());
    expect(requests('POST')).toEqual([]);
  });

  it('says when a company has no account yet', async () => {
    const { user } = asAdmin();
    const dialog = await openAccounts(user, 'Baltic');
    expect(await within(dialog).findByText('No account yet.')).toBeInTheDocument();
    expect(within(dialog).getByRole('button', { name: 'Add account' })).toBeEnabled();
  });
});
