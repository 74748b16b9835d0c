import { within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { db } from '@/testing/mocks/db';
import { server } from '@/testing/mocks/server';
import { renderApp, screen } from '@/testing/test-utils';

const ADMIN = 'ada@upstairs.test';
const link = (flag: string) => `http://localhost:8080/accept-order?order_id=o1&token=t&accepted=${flag}`;

describe('e-mail outbox', () => {
  it('lists each e-mail with its state and its links, or that they are hidden', async () => {
    db.addUser({ user_id: 'u-admin', email: ADMIN, roles: ['upstairs-admin'], company_id: 'c-upstairs', company_name: 'Upstairs' });
    const asked: string[] = [];
    server.use(
      http.get('*/api/admin/outbox', ({ request }) => {
        asked.push(new URL(request.url).search);
        return HttpResponse.json({
          total_items: 2,
          items: [
            {
              outbox_id: 'x1', message_id: '<x1@h>', to: 'ops@northgate.test', kind: 'TRADE_ACCEPTANCE', summary: 'Northgate: Halyard SELL 1500 Euribor at -0.02',
              created_at: '2026-11-24T10:00:00Z', sent_at: '2026-11-24T10:00:01Z', attempts: 1, last_error: null, links: [link('true'), link('false')], links_hidden: false,
            },
            {
              outbox_id: 'x2', message_id: '<x2@h>', to: 'new@acme.test', kind: 'ACCOUNT_ACTIVATION', summary: 'Account activation for Tom',
              created_at: '2026-11-24T09:00:00Z', sent_at: null, attempts: 2, last_error: 'connection refused', links: [], links_hidden: true,
            },
          ],
        });
      }),
    );
    renderApp('/admin/outbox', { signedInAs: ADMIN });
    const table = await screen.findByRole('table', { name: 'E-mails' });
    const [trade, activation] = within(table).getAllByRole('row').slice(1);
    expect(within(trade!).getByText('Trade to accept')).toBeInTheDocument();
    expect(within(trade!).getByText('Sent')).toBeInTheDocument();
    expect(within(trade!).getByRole('link', { name: 'Accept' })).toHaveAttribute('href', link('true'));
    expect(within(trade!).getByRole('link', { name: 'Decline' })).toHaveAttribute('href', link('false'));
    expect(within(activation!).getByText('Retrying')).toBeInTheDocument();
    expect(within(activation!).getByText('connection refused')).toBeInTheDocument();
    // Outside the demo the server sends no secret link: the row says one was sent.
    expect(within(activation!).getByText('Link hidden')).toBeInTheDocument();
    expect(within(activation!).queryByRole('link')).not.toBeInTheDocument();
    expect(within(trade!).queryByText('Link hidden')).not.toBeInTheDocument();
    expect(asked[0]).toBe('?page=0&size=25');
  });

  it('is for venue admins only', async () => {
    renderApp('/admin/outbox', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('heading', { name: 'No access' })).toBeInTheDocument();
  });
});
