import { within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import type { Role } from '@/lib/api/dto';
import { admin } from '@/testing/mocks/admin-handlers';
import { db } from '@/testing/mocks/db';
import { server } from '@/testing/mocks/server';
import { renderApp, screen } from '@/testing/test-utils';

const ADMIN = 'ada@upstairs.test';

function asAdmin(path: string, options: { fakeTimers?: boolean } = {}) {
  db.addUser({ user_id: 'u-admin', email: ADMIN, first_name: 'Ada', last_name: 'Admin', roles: ['upstairs-admin'], company_id: 'c-upstairs', company_name: 'Upstairs' });
  return renderApp(path, { signedInAs: ADMIN, ...options });
}

/** Every admin screen: its drawer entry, route and heading. */
const SCREENS = [
  { entry: 'Action logs', path: '/admin/action-logs', heading: 'Action logs' },
  { entry: 'Billing', path: '/admin/billing', heading: 'Billing' },
  { entry: 'Companies panel', path: '/admin/company', heading: 'Companies' },
  { entry: 'Users panel', path: '/admin/user', heading: 'Users' },
  { entry: 'Instruments panel', path: '/admin/instrument', heading: 'Instruments' },
  { entry: 'Exchanges', path: '/admin/exchanges', heading: 'Exchanges' },
  { entry: 'Orders panel', path: '/admin/order', heading: 'Orders' },
  { entry: 'Orders newsletter', path: '/admin/orders-newsletter', heading: 'Orders newsletter' },
  { entry: 'Block Calculator', path: '/admin/block-calculator', heading: 'Block Calculator' },
  { entry: 'E-mail outbox', path: '/admin/outbox', heading: 'E-mail outbox' },
  { entry: 'FIX sessions', path: '/admin/fix-sessions', heading: 'FIX sessions' },
];

/**
 * Admin spec sections 2 and 6 with DESIGN section 4: the drawer of each role, in the spec's
 * order (Exchanges, ours, follows the instruments; the E-mail outbox and FIX sessions, ours,
 * close the Admin group), or no menu at all.
 */
const MATRIX: { role: Role; drawer: string[] | null }[] = [
  {
    role: 'upstairs-admin',
    drawer: ['Dashboard', 'Action logs', 'Billing', 'Companies panel', 'Users panel', 'Instruments panel', 'Exchanges', 'Orders panel', 'Orders newsletter', 'Block Calculator', 'E-mail outbox', 'FIX sessions', 'Account Info'],
  },
  { role: 'upstairs-sales', drawer: ['Dashboard', 'Billing', 'Orders panel', 'Orders newsletter', 'Block Calculator', 'Account Info'] },
  { role: 'company-admin', drawer: ['Dashboard', 'Users panel', 'Orders newsletter', 'Block Calculator', 'Account Info'] },
  { role: 'trader', drawer: null },
  { role: 'sandbox', drawer: null },
];

describe('admin navigation', () => {
  it.each(MATRIX)('gives $role the drawer of its permissions, and the no-access page on every other admin route', async ({ role, drawer }) => {
    // The panels' own calls, answered empty: only the guards are under test here.
    server.use(
      http.get('*/api/admin/outbox', () => HttpResponse.json({ items: [], total_items: 0 })),
      http.get('*/api/admin/action-logs', () => HttpResponse.json({ items: [], total_items: 0 })),
      http.get('*/api/admin/newsletters', () => HttpResponse.json([])),
    );
    const email = `${role}@upstairs.test`;
    db.addUser({ user_id: `u-${role}`, email, roles: [role], company_id: 'c-upstairs', company_name: 'Upstairs' });
    const { user, router } = renderApp('/dashboard', { signedInAs: email });
    await screen.findByRole('button', { name: 'Profile menu' });
    if (drawer === null) {
      expect(screen.queryByRole('button', { name: 'Open menu' })).not.toBeInTheDocument();
    } else {
      await user.click(screen.getByRole('button', { name: 'Open menu' }));
      const nav = await screen.findByRole('navigation', { name: 'Main menu' });
      expect(within(nav).getAllByRole('link').map((l) => l.textContent)).toEqual(drawer);
      expect(within(nav).getByText('Admin')).toBeInTheDocument();
      expect(within(nav).getByText('User')).toBeInTheDocument();
      await user.keyboard('{Escape}');
    }
    // The route guards match the drawer: a screen not in it says 'No access' (issue 28).
    for (const s of SCREENS) {
      // Back to the dashboard first, so the previous screen's heading is gone.
      await router.navigate('/dashboard');
      await screen.findByRole('heading', { name: 'Dashboard', level: 1 });
      await router.navigate(s.path);
      if (drawer?.includes(s.entry)) {
        expect(await screen.findByRole('heading', { name: s.heading, level: 1 }), `${role} on ${s.path}`).toBeInTheDocument();
        expect(screen.queryByRole('heading', { name: 'No access' })).toBeNull();
      } else {
        expect(await screen.findByRole('heading', { name: 'No access' }), `${role} on ${s.path}`).toBeInTheDocument();
      }
    }
  }, 30_000);

  it("lands a venue admin on the operator's dashboard, never the trader's Getting started", async () => {
    const { user } = asAdmin('/dashboard');
    const areas = await screen.findByRole('navigation', { name: 'Admin areas' });
    expect(within(areas).getAllByRole('link').map((l) => l.textContent)).toContain('Orders panel');
    expect(screen.queryByRole('heading', { name: 'Getting started' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Add parent order' })).toBeNull();
    await user.click(within(areas).getByRole('link', { name: 'Companies panel' }));
    expect(await screen.findByRole('heading', { name: 'Companies' })).toBeInTheDocument();
  });

  it('takes an admin from the drawer to a panel', async () => {
    const { user } = asAdmin('/dashboard');
    await user.click(await screen.findByRole('button', { name: 'Open menu' }));
    const nav = await screen.findByRole('navigation', { name: 'Main menu' });
    await user.click(within(nav).getByRole('link', { name: 'Companies panel' }));
    expect(await screen.findByRole('heading', { name: 'Companies' })).toBeInTheDocument();
  });

  it('gives a sales user the no-access page on the Companies panel, and asks nothing', async () => {
    db.addUser({ email: 'sam@upstairs.test', roles: ['upstairs-sales'] });
    renderApp('/admin/company', { signedInAs: 'sam@upstairs.test' });
    expect(await screen.findByRole('heading', { name: 'No access' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Open menu' })).toBeInTheDocument();
    expect(admin.requests).toEqual([]);
  });

  it('lets a company admin manage its own company’s users, without the company list', async () => {
    db.addUser({ user_id: 'u-cora', email: 'cora@acme.test', first_name: 'Cora', last_name: 'Admin', roles: ['company-admin'] });
    db.addUser({ user_id: 'u-other', email: 'olaf@other.test', first_name: 'Olaf', last_name: 'Other', company_id: 'c-other', company_name: 'Other' });
    db.addUser({ user_id: 'u-vic', email: 'vic@acme.test', first_name: 'Vic', last_name: 'Venue', roles: ['upstairs-sales'] });
    const { user } = renderApp('/admin/user', { signedInAs: 'cora@acme.test' });
    const table = await screen.findByRole('table', { name: 'Users' });
    await within(table).findByText('cora@acme.test');
    expect(within(table).getByText('trader@acme.test')).toBeInTheDocument();
    // A venue-role user of its company is listed, but only a venue admin may change it.
    expect(within(table).getByText('vic@acme.test')).toBeInTheDocument();
    expect(within(table).queryByRole('button', { name: 'Edit vic@acme.test' })).toBeNull();
    expect(within(table).getByRole('button', { name: 'Edit trader@acme.test' })).toBeInTheDocument();
    expect(within(table).queryByText('olaf@other.test')).toBeNull();
    expect(admin.requests.map((r) => r.path)).toEqual(['/api/admin/users?page=0&size=200']);

    await user.click(screen.getByRole('button', { name: 'Create user' }));
    const form = await screen.findByRole('form', { name: 'Create user' });
    await user.click(within(form).getByRole('combobox', { name: 'Company' }));
    expect((await screen.findAllByRole('option')).map((o) => o.textContent)).toEqual(['Acme Capital']);
  });

  it('gives a trader no menu button and the no-access page on admin routes', async () => {
    renderApp('/admin/company', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('heading', { name: 'No access' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Open menu' })).not.toBeInTheDocument();
    expect(admin.requests).toEqual([]);
  });
});
