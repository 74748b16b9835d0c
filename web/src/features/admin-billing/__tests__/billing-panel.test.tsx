import { within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Role } from '@/lib/api/dto';
import { adminOrders, mockBilling } from '@/testing/mocks/admin-order-handlers';
import { db } from '@/testing/mocks/db';
import { server } from '@/testing/mocks/server';
import { renderApp, screen } from '@/testing/test-utils';
import { parseCsv } from './csv';

const ADMIN = 'ada@upstairs.test';

function as(roles: Role[], email = ADMIN) {
  db.addUser({ user_id: `u-${email}`, email, roles, company_id: 'c-upstairs', company_name: 'Upstairs' });
  return renderApp('/admin/billing', { signedInAs: email });
}

const grid = () => screen.findByRole('grid', { name: 'Billing' });
const dataRows = async () => within(await grid()).getAllByRole('row').filter((r) => r.getAttribute('data-rowindex') !== null);

/** On screen the trade first; the ids last, hidden until the Columns panel shows them. */
const SHOWN = [
  'Match request created', 'Company', 'Instrument', 'Direction', 'Quantity', 'Price', 'Allocations', 'First name', 'Last name', 'Broker',
  'Give-up broker', 'Term', 'Tick size', 'Exchange', 'Exchange ISO code', 'BBG code', 'Exchange instrument ID',
];
/** The CSV keeps the billing item's own field order (admin spec section 3), ids included, then the allocation and give-up. */
const HEADERS = [
  'Company', 'First name', 'Last name', 'User ID', 'Broker', 'Broker ID', 'Match request ID', 'Order ID', 'Payment order ID', 'Match request created',
  'Instrument', 'BBG code', 'Exchange instrument ID', 'Exchange', 'Exchange ISO code', 'Tick size', 'Term', 'Direction', 'Quantity', 'Price',
  'Allocations', 'Give-up broker',
];

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('billing', () => {
  it('shows one column per billing item field and 50 rows first, of page sizes 10, 25, 50 and 100', async () => {
    adminOrders.billing = mockBilling(60);
    const { user } = as(['upstairs-admin']);
    expect(await screen.findByRole('heading', { name: 'Billing' })).toBeInTheDocument();
    const g = await grid();
    expect(within(g).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(SHOWN);
    expect(screen.getByText('1–50 of 120')).toBeInTheDocument();
    expect(screen.getByText('120 items')).toBeInTheDocument();

    // Hidden below the sm breakpoint by the grid's CSS, which jsdom applies without media queries.
    await user.click(screen.getByRole('combobox', { name: /Rows per page/, hidden: true }));
    const options = await screen.findAllByRole('option');
    expect(options.map((o) => o.textContent)).toEqual(['10', '25', '50', '100']);
    expect(options.find((o) => o.textContent === '50')).toHaveAttribute('aria-selected', 'true');
    await user.click(screen.getByRole('option', { name: '10' }));
    expect(await screen.findByText('1–10 of 120')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Go to next page' }));
    expect(await screen.findByText('11–20 of 120')).toBeInTheDocument();
  });

  it('shows the match request time as a date plus UTC time, and decimals exactly', async () => {
    adminOrders.billing = mockBilling(2);
    as(['upstairs-admin']);
    const rows = await dataRows();
    expect(rows).toHaveLength(4);
    const first = within(rows[0]!);
    expect(first.getByText('25/11/2026 14:03 UTC')).toBeInTheDocument();
    expect(first.getByText('-0.025')).toBeInTheDocument();
    expect(first.getByText('0.005')).toBeInTheDocument();
    expect(first.getByText('1,500')).toBeInTheDocument();
    expect(first.getByText('Tess')).toBeInTheDocument();
    // The buyer's allocation across two accounts, given up to Baltic; the seller's none.
    expect(first.getByText('HAL-MACRO 1,000; HAL-RATES 500')).toBeInTheDocument();
    expect(first.getByText('Baltic')).toBeInTheDocument();
    const cells = (row: HTMLElement) => Object.fromEntries(within(row).getAllByRole('gridcell').map((c) => [c.getAttribute('data-field'), c.textContent]));
    expect(cells(rows[1]!)).toMatchObject({ allocations: '', give_up_broker_name: '' });
  });

  it('exports every row to billing.csv with semicolons, showing progress while it is built', async () => {
    adminOrders.billing = mockBilling(30);
    // One value holding the delimiter and one a spreadsheet would run as a formula.
    adminOrders.billing[0] = { ...adminOrders.billing[0]!, company_name: 'Halyard; Co', first_name: '=HYPERLINK("x")' };
    const blobs: Blob[] = [];
    const names: string[] = [];
    // What the page showed while the grid built the file.
    const during: { progress: boolean; button: string | null }[] = [];
    const createObjectURL = (b: Blob) => {
      blobs.push(b);
      during.push({
        progress: screen.queryByRole('progressbar', { name: 'Exporting billing CSV' }) !== null,
        button: screen.queryByRole('button', { name: 'Exporting…' })?.getAttribute('disabled') ?? null,
      });
      return 'blob:billing';
    };
    // A subclass carries the stubs: the real URL is never changed for the files after this one.
    vi.stubGlobal('URL', Object.assign(class extends URL {}, { createObjectURL, revokeObjectURL: () => {} }));
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      names.push(this.download);
    });
    const { user } = as(['upstairs-sales'], 'sam@upstairs.test');
    await grid();
    await user.click(screen.getByRole('button', { name: 'Export CSV' }));
    await expect.poll(() => blobs.length).toBe(1);
    expect(during).toEqual([{ progress: true, button: '' }]);
    await expect.poll(() => screen.queryByRole('progressbar', { name: 'Exporting billing CSV' })).toBeNull();
    expect(names).toEqual(['billing.csv']);
    click.mockRestore();

    const [header, ...rows] = parseCsv(await blobs[0]!.text(), ';');
    expect(header).toEqual(HEADERS);
    // Every row, not only the 50 of the first page, in the server's order.
    expect(rows).toHaveLength(60);
    const item = adminOrders.billing[2]!;
    expect(rows[2]).toEqual([
      'Halyard', 'Tess', 'Trader', item.user_id, 'Northgate', 'b-1', 'mr-001', 'o-1-0', 'p-1-0', '25/11/2026 14:04 UTC',
      'Euribor 3M Dec26-Mar27', '', '', 'ICE Futures Europe', 'IFEU', '0.005', 'Dec26-Mar27', 'BUY', '1501', '-0.025', '', '',
    ]);
    expect(rows[0]!.slice(0, 2)).toEqual(['Halyard; Co', `'=HYPERLINK("x")`]);
    // The allocation with plain quantities (its '; ' inside one quoted field), and the give-up broker.
    expect(rows[0]!.slice(-4)).toEqual(['1500', '-0.025', 'HAL-MACRO 1000; HAL-RATES 500', 'Baltic']);
    expect(rows[1]!.slice(-2)).toEqual(['', '']);
    expect(rows.map((r) => r[6])).toEqual(adminOrders.billing.map((b) => b.match_request_id));
  });

  it('says when there is nothing to bill', async () => {
    as(['upstairs-admin']);
    expect(await screen.findByText('No trade to bill yet.')).toBeInTheDocument();
  });

  it('shows the server’s error with a retry', async () => {
    adminOrders.billing = mockBilling(1);
    server.use(
      http.get(
        '*/api/billing',
        () => HttpResponse.json({ type: 'about:blank', title: 'Internal Server Error', status: 500, detail: 'Something broke.' }, { status: 500, headers: { 'content-type': 'application/problem+json' } }),
        { once: true },
      ),
    );
    const { user } = as(['upstairs-admin']);
    expect(await screen.findByText('Oops! There was an error.')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Retry' }));
    expect(await dataRows()).toHaveLength(2);
  });

  it('is not for traders or company admins', async () => {
    db.addUser({ email: 'cora@acme.test', roles: ['company-admin'] });
    renderApp('/admin/billing', { signedInAs: 'cora@acme.test' });
    expect(await screen.findByRole('heading', { name: 'No access' })).toBeInTheDocument();
    expect(adminOrders.requests).toEqual([]);
  });
});
