import { within } from '@testing-library/react';
import dayjs from 'dayjs';
import { describe, expect, it } from 'vitest';
import { admin } from '@/testing/mocks/admin-handlers';
import { db } from '@/testing/mocks/db';
import { newsletters } from '@/testing/mocks/newsletter-handlers';
import { renderApp, screen } from '@/testing/test-utils';

const ADMIN = 'ada@upstairs.test';

function asAdmin() {
  db.addUser({ user_id: 'u-admin', email: ADMIN, first_name: 'Ada', last_name: 'Admin', roles: ['upstairs-admin'], company_id: 'c-upstairs', company_name: 'Upstairs' });
  return renderApp('/admin/company', { signedInAs: ADMIN });
}

const row = async (name: string) => {
  const table = await screen.findByRole('table', { name: 'Companies' });
  return within(table).getByRole('row', { name: new RegExp(`^${name} `) });
};

describe('kill switch in the companies panel', () => {
  it('stops a company after a confirmation that says what happens, then shows since when', async () => {
    const { user } = asAdmin();
    const halyard = await row('Halyard');
    expect(within(halyard).queryByText(/Trading stopped since/)).not.toBeInTheDocument();
    expect(within(halyard).queryByRole('button', { name: 'Re-enable trading for Halyard' })).not.toBeInTheDocument();

    await user.click(within(halyard).getByRole('button', { name: 'Stop trading for Halyard' }));
    const dialog = await screen.findByRole('dialog', { name: 'Stop trading for Halyard?' });
    expect(dialog).toHaveTextContent('Every working order of Halyard is cancelled.');
    expect(dialog).toHaveTextContent('Its pending match requests, open RFQs and quotes are ended, and the counterparties are told.');
    expect(dialog).toHaveTextContent('New orders from Halyard are refused until an admin re-enables trading.');

    // Back leaves it trading.
    await user.click(within(dialog).getByRole('button', { name: 'Back' }));
    await expect.poll(() => screen.queryByRole('dialog')).toBeNull();
    expect(admin.requests.filter((r) => r.path.endsWith('/kill-switch'))).toEqual([]);

    await user.click(within(halyard).getByRole('button', { name: 'Stop trading for Halyard' }));
    await user.click(within(await screen.findByRole('dialog', { name: 'Stop trading for Halyard?' })).getByRole('button', { name: 'Stop trading' }));
    expect(await screen.findByText('Trading stopped for Halyard.')).toBeInTheDocument();
    expect(admin.requests.filter((r) => r.path.endsWith('/kill-switch'))).toEqual([
      { method: 'POST', path: '/api/companies/c-halyard/kill-switch', body: undefined },
    ]);
    const stopped = await row('Halyard');
    expect(within(stopped).getByText(`Trading stopped since ${dayjs(newsletters.now).format('DD/MM/YYYY HH:mm')}`)).toBeInTheDocument();
    expect(within(stopped).queryByRole('button', { name: 'Stop trading for Halyard' })).not.toBeInTheDocument();
    // The others still trade.
    expect(within(await row('Northgate')).getByRole('button', { name: 'Stop trading for Northgate' })).toBeInTheDocument();
  });

  it('re-enables a stopped company (venue admins), and shows the server error when it is not stopped', async () => {
    admin.companies.find((c) => c.name === 'Halyard')!.trading_stopped_at = '2026-11-20T15:05:00Z';
    const { user } = asAdmin();
    const halyard = await row('Halyard');
    expect(within(halyard).getByText(`Trading stopped since ${dayjs('2026-11-20T15:05:00Z').format('DD/MM/YYYY HH:mm')}`)).toBeInTheDocument();

    await user.click(within(halyard).getByRole('button', { name: 'Re-enable trading for Halyard' }));
    const dialog = await screen.findByRole('dialog', { name: 'Re-enable trading for Halyard?' });
    expect(dialog).toHaveTextContent('Halyard can place orders again');
    // Meanwhile another admin released it: the server's 409 is shown, the dialog stays.
    admin.companies.find((c) => c.name === 'Halyard')!.trading_stopped_at = null;
    await user.click(within(dialog).getByRole('button', { name: 'Re-enable trading' }));
    expect(await within(dialog).findByText("This company's trading is not stopped.")).toBeInTheDocument();
    await user.click(within(dialog).getByRole('button', { name: 'Back' }));

    admin.companies.find((c) => c.name === 'Halyard')!.trading_stopped_at = '2026-11-20T15:05:00Z';
    await user.click(within(await row('Halyard')).getByRole('button', { name: 'Re-enable trading for Halyard' }));
    await user.click(within(await screen.findByRole('dialog', { name: 'Re-enable trading for Halyard?' })).getByRole('button', { name: 'Re-enable trading' }));
    expect(await screen.findByText('Trading re-enabled for Halyard.')).toBeInTheDocument();
    await expect.poll(async () => within(await row('Halyard')).queryByText(/Trading stopped since/)).toBeNull();
    expect(within(await row('Halyard')).getByRole('button', { name: 'Stop trading for Halyard' })).toBeInTheDocument();
  });

  it('can be worked from the keyboard', async () => {
    const { user } = asAdmin();
    const button = within(await row('Baltic')).getByRole('button', { name: 'Stop trading for Baltic' });
    button.focus();
    await user.keyboard('{Enter}');
    const dialog = await screen.findByRole('dialog', { name: 'Stop trading for Baltic?' });
    // Focus starts on Back, the safe choice.
    expect(within(dialog).getByRole('button', { name: 'Back' })).toHaveFocus();
    await user.tab();
    expect(within(dialog).getByRole('button', { name: 'Stop trading' })).toHaveFocus();
    await user.keyboard('{Enter}');
    expect(await screen.findByText('Trading stopped for Baltic.')).toBeInTheDocument();
  });

  it('lets a company admin stop their own company from the Users panel, and only a venue admin re-enable it', async () => {
    db.addUser({ user_id: 'u-boss', email: 'boss@halyard.test', first_name: 'Bo', last_name: 'Boss', roles: ['company-admin'], company_id: 'c-halyard', company_name: 'Halyard' });
    const { user } = renderApp('/admin/user', { signedInAs: 'boss@halyard.test' });
    const section = await screen.findByRole('region', { name: 'Kill switch' });
    await user.click(within(section).getByRole('button', { name: 'Stop trading' }));
    const dialog = await screen.findByRole('dialog', { name: 'Stop trading for Halyard?' });
    await user.click(within(dialog).getByRole('button', { name: 'Stop trading' }));
    expect(await within(section).findByText(/Trading is stopped for Halyard since/)).toBeInTheDocument();
    expect(within(section).queryByRole('button', { name: /Re-enable/ })).toBeNull();
    expect(admin.requests.filter((r) => r.path.endsWith('/kill-switch'))).toEqual([
      { method: 'POST', path: '/api/companies/c-halyard/kill-switch', body: undefined },
    ]);
  });
});
