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

describe('admin navigation', () => {
  it('gives an admin the menu button and the drawer', async () => {
    const { user } = asAdmin('/dashboard');
    await user.click(await screen.findByRole('button', { name: 'Open menu' }));
    const nav = await screen.findByRole('navigation', { name: 'Main menu' });
    expect(within(nav).getAllByRole('link').map((l) => l.textContent)).toEqual([
      'Dashboard', 'Action logs', 'Companies panel', 'Users panel', 'Instruments panel', 'Block Calculator', 'E-mail outbox', 'Account Info',
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
