import { within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { admin } from '@/testing/mocks/admin-handlers';
import { db } from '@/testing/mocks/db';
import { renderApp, screen } from '@/testing/test-utils';

// Counterparty filters (issue 29, ADR 0042): the operator sets a firm's in the Companies
// panel, a trader sets their own in Settings.

function asAdmin() {
  const email = 'ada@upstairs.test';
  db.addUser({ user_id: 'u-admin', email, first_name: 'Ada', last_name: 'Admin', roles: ['upstairs-admin'], company_id: 'c-upstairs', company_name: 'Upstairs' });
  return renderApp('/admin/company', { signedInAs: email });
}

async function openFilter(user: ReturnType<typeof renderApp>['user'], name: string) {
  const table = await screen.findByRole('table', { name: 'Companies' });
  const row = within(table).getByRole('row', { name: new RegExp(`^${name} `) });
  await user.click(within(row).getByRole('button', { name: `Counterparty filter of ${name}` }));
  return screen.findByRole('dialog', { name: `${name}'s counterparty filter` });
}

describe('counterparty filters', () => {
  it("the operator blocks firms by name and sets a least score; the firm itself is no choice", async () => {
    const { user } = asAdmin();
    const dialog = await openFilter(user, 'Halyard');
    expect(await within(dialog).findByText('None: every firm')).toBeInTheDocument();
    await user.click(within(dialog).getByRole('combobox', { name: 'Firms never to trade with' }));
    const options = (await screen.findAllByRole('option')).map((o) => o.textContent);
    expect(options).toEqual(['Corvid', 'Kestrel']);
    await user.click(screen.getByRole('option', { name: 'Kestrel' }));
    const score = within(dialog).getByRole('textbox', { name: 'Least reliability score of a counterparty firm' });
    await user.type(score, '150');
    expect(within(dialog).getByText('Must be from 0 to 100')).toBeInTheDocument();
    expect(within(dialog).getByRole('button', { name: 'Save filter' })).toBeDisabled();
    await user.clear(score);
    await user.type(score, '60');
    await user.click(within(dialog).getByRole('button', { name: 'Save filter' }));
    expect(await screen.findByText('Counterparty filter saved.')).toBeInTheDocument();
    expect(admin.requests.filter((r) => r.method === 'PUT')).toEqual([
      { method: 'PUT', path: '/api/companies/c-halyard/counterparty-filter', body: { blocked_company_ids: ['c-kestrel'], min_reliability_score: 60 } },
    ]);
    // Opened again, it shows what was saved.
    const again = await openFilter(user, 'Halyard');
    expect(await within(again).findByRole('button', { name: 'Kestrel' })).toBeInTheDocument();
    expect(within(again).getByRole('textbox', { name: 'Least reliability score of a counterparty firm' })).toHaveValue('60');
  });

  it('a trader sets their own in Settings, and reads what it holds', async () => {
    db.user().auto_accept = 'INSTANT';
    const { user } = renderApp('/settings', { signedInAs: 'trader@acme.test' });
    const section = await screen.findByRole('region', { name: 'Your counterparty filter' });
    expect(await within(section).findByText('No firm is blocked; any reliability score.')).toBeInTheDocument();
    await user.click(within(section).getByRole('button', { name: 'Edit filter' }));
    const dialog = await screen.findByRole('dialog', { name: 'Your counterparty filter' });
    await user.click(await within(dialog).findByRole('combobox', { name: 'Firms never to trade with' }));
    await user.click(await screen.findByRole('option', { name: 'Corvid' }));
    await user.click(within(dialog).getByRole('button', { name: 'Save filter' }));
    expect(await within(section).findByText('Never trades with Corvid; any reliability score.')).toBeInTheDocument();
    expect(admin.requests.filter((r) => r.method === 'PUT').map((r) => r.path)).toEqual(['/api/users/me/counterparty-filter']);
  });
});
