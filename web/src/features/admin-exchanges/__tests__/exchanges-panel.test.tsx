import { act, fireEvent, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { admin, mockExchange } from '@/testing/mocks/admin-handlers';
import { db } from '@/testing/mocks/db';
import { server } from '@/testing/mocks/server';
import { renderApp, screen, typeDate } from '@/testing/test-utils';

const ADMIN = 'ada@upstairs.test';

function asAdmin() {
  db.addUser({ user_id: 'u-admin', email: ADMIN, first_name: 'Ada', last_name: 'Admin', roles: ['upstairs-admin'], company_id: 'c-upstairs', company_name: 'Upstairs' });
  return renderApp('/admin/exchanges', { signedInAs: ADMIN });
}

/** Counts the platform status reads (the top bar's), answered by the usual handler. */
function countStatusReads() {
  const reads = { count: 0 };
  server.use(
    http.get('*/api/platform/status', () => {
      reads.count += 1;
    }),
  );
  return reads;
}

const cells = (row: HTMLElement) => within(row).getAllByRole('cell').map((c) => c.textContent);

async function openDialog(user: ReturnType<typeof asAdmin>['user'], button: string, title: string) {
  await user.click(await screen.findByRole('button', { name: button }));
  const dialog = await screen.findByRole('dialog', { name: title });
  const field = (label: string) => within(dialog).getByLabelText(new RegExp(`^${label}`)) as HTMLInputElement;
  // A time input takes a whole value at once (as its picker sets it).
  const setTime = (label: string, value: string) =>
    act(async () => {
      fireEvent.change(field(label), { target: { value } });
    });
  return { dialog, field, setTime };
}

describe('exchanges panel', () => {
  it('lists the exchanges with their hours, days, holidays, instruments and state now', async () => {
    admin.exchanges.push(
      mockExchange({
        mic: 'XEUR',
        name: 'Eurex',
        time_zone: 'Europe/Berlin',
        open_time: '01:10',
        close_time: '22:00',
        parent_orders_from: '01:00',
        days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'],
        status: {
          mic: 'XEUR', name: 'Eurex', time_zone: 'Europe/Berlin', open_time: '01:10', close_time: '22:00', parent_orders_from: '01:00',
          days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'], open: true, parent_orders_open: true, closing_soon: false, next_open: null, next_close: null, holiday: null,
        },
      }),
    );
    admin.exchanges[0]!.status = {
      ...admin.exchanges[0]!.status,
      holiday: { date: '2026-12-25', name: 'Christmas Day' },
      next_open: '2026-12-28T08:00:00Z',
    };
    asAdmin();
    const table = await screen.findByRole('table', { name: 'Exchanges' });
    expect(screen.getByRole('heading', { name: 'Exchanges', level: 1 })).toBeInTheDocument();
    expect(within(table).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['MIC', 'Name', 'Time zone', 'Hours', 'Days', 'Holidays', 'Instruments', 'Now', 'Actions']);
    const [, ifeu, xeur] = within(table).getAllByRole('row') as HTMLElement[];
    expect(cells(ifeu!)).toEqual([
      'IFEU',
      'ICE Futures Europe',
      'Europe/London',
      '8:00 AM–6:00 PMParent orders from 7:00 AM',
      'Mon–Fri',
      '3Next: 25 Dec 2099, Christmas Day',
      '1',
      'Closed for Christmas Day',
      '',
    ]);
    expect(within(ifeu!).getByText('Closed for Christmas Day').closest('[title]')).toHaveAttribute('title', expect.stringMatching(/^Closed today for Christmas Day\. It opens again /));
    expect(cells(xeur!)).toEqual(['XEUR', 'Eurex', 'Europe/Berlin', '1:10 AM–10:00 PMParent orders from 1:00 AM', 'Mon–Sat', 'None', '0', 'Open', '']);
    expect(within(xeur!).getByRole('button', { name: 'Edit XEUR' })).toBeInTheDocument();
    expect(within(xeur!).getByRole('button', { name: 'Delete XEUR' })).toBeInTheDocument();
  });

  it('says every instrument trades on the venue hours while there is no exchange', async () => {
    admin.exchanges = [];
    asAdmin();
    expect(await screen.findByText("No exchanges yet: every instrument trades on the venue's hours.")).toBeInTheDocument();
    expect(screen.queryByRole('table')).not.toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Add exchange' })).toBeEnabled();
  });

  it('shows an error card when the list cannot be read', async () => {
    server.use(http.get('*/api/admin/exchanges', () => HttpResponse.json({ status: 503, detail: 'The venue is busy: try again.' }, { status: 503 })));
    asAdmin();
    expect(await screen.findByRole('button', { name: /try again|retry/i })).toBeInTheDocument();
    expect(screen.queryByRole('table')).not.toBeInTheDocument();
  });

  // Many keystrokes through user-event: 11–13 s on an idle 2-core machine.
  it("adds an exchange, shows the server's field error under its field, then saves it and reads the status again", async () => {
    admin.exchanges = [];
    const { user } = asAdmin();
    await screen.findByText("No exchanges yet: every instrument trades on the venue's hours.");
    const { dialog, field, setTime } = await openDialog(user, 'Add exchange', 'Add exchange');
    const add = within(dialog).getByRole('button', { name: 'Add exchange' });
    expect(add).toBeDisabled();
    // Monday to Friday to start with.
    expect(['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((d) => (within(dialog).getByRole('checkbox', { name: d }) as HTMLInputElement).checked)).toEqual([
      true, true, true, true, true, false, false,
    ]);
    await user.type(field('MIC'), 'xeur');
    expect(field('MIC')).toHaveValue('XEUR');
    await user.type(field('Name'), 'Eurex');
    await user.type(field('Time zone'), 'Europe/Berlin');
    await setTime('Opens', '08:00');
    await setTime('Closes', '22:00');
    await setTime('Parent orders from', '07:30');
    await user.click(within(dialog).getByRole('checkbox', { name: 'Sat' }));
    await user.click(within(dialog).getByRole('button', { name: 'Add holiday' }));
    await typeDate(user, 'Holiday 1 date', '24/12/2026');
    await user.type(field('Holiday 1 name'), 'Christmas Eve');
    await user.click(within(dialog).getByRole('button', { name: 'Add holiday' }));
    await typeDate(user, 'Holiday 2 date', '01/01/2027');

    // The server knows fewer zones than the browser, say.
    const sent: { path: string; body: unknown }[] = [];
    server.use(
      http.put('*/api/admin/exchanges/:mic', async ({ request }) => {
        sent.push({ path: new URL(request.url).pathname, body: await request.json() });
        return HttpResponse.json({ status: 400, detail: 'The exchange is not valid.', errors: [{ field: 'time_zone', message: 'Unknown time zone: Europe/Berlin' }] }, { status: 400 });
      }),
    );
    await expect.poll(() => add).toBeEnabled();
    await user.click(add);
    await expect.poll(() => field('Time zone')).toHaveAccessibleDescription('Unknown time zone: Europe/Berlin');
    expect(field('Time zone')).toHaveAttribute('aria-invalid', 'true');
    // Said under the field, not again in an alert or the snackbar.
    expect(within(dialog).queryByRole('alert')).not.toBeInTheDocument();
    expect(screen.queryByText('The exchange is not valid.')).not.toBeInTheDocument();
    expect(sent).toHaveLength(1);
    expect(sent[0]?.path).toBe('/api/admin/exchanges/XEUR');
    expect(sent[0]?.body).toEqual({
      name: 'Eurex',
      time_zone: 'Europe/Berlin',
      open_time: '08:00',
      close_time: '22:00',
      parent_orders_from: '07:30',
      days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'],
      holidays: [
        { date: '2026-12-24', name: 'Christmas Eve' },
        { date: '2027-01-01', name: null },
      ],
    });

    server.resetHandlers();
    const reads = countStatusReads();
    await user.click(add);
    expect(await screen.findByText('Eurex (XEUR) added.')).toBeInTheDocument();
    expect(admin.requests.find((r) => r.method === 'PUT')?.body).toEqual(sent[0]?.body);
    expect(screen.queryByRole('dialog', { name: 'Add exchange' })).not.toBeInTheDocument();
    const row = (await screen.findByRole('cell', { name: 'XEUR' })).closest('tr') as HTMLElement;
    expect(cells(row).slice(0, 6)).toEqual(['XEUR', 'Eurex', 'Europe/Berlin', '8:00 AM–10:00 PMParent orders from 7:30 AM', 'Mon–Sat', '2Next: 24 Dec 2026, Christmas Eve']);
    // The top bar and the books read the exchanges from the platform status.
    await expect.poll(() => reads.count).toBeGreaterThan(0);
  }, 30_000);

  // Many keystrokes through user-event: 11–13 s on an idle 2-core machine.
  it('checks the calendar as the server does before sending it', async () => {
    admin.exchanges = [];
    const { user } = asAdmin();
    const { dialog, field, setTime } = await openDialog(user, 'Add exchange', 'Add exchange');
    await user.type(field('MIC'), 'IF');
    await user.tab();
    expect(field('MIC')).toHaveAccessibleDescription('A MIC is 4 capital letters or digits');
    await user.type(field('MIC'), 'EU');
    expect(field('MIC')).not.toHaveAccessibleDescription('A MIC is 4 capital letters or digits');
    await user.type(field('Name'), 'ICE Futures Europe');
    await user.type(field('Time zone'), 'Mars/Base');
    expect(field('Time zone')).toHaveAccessibleDescription('Unknown time zone: Mars/Base');
    await user.clear(field('Time zone'));
    await user.type(field('Time zone'), 'Europe/London');
    await setTime('Opens', '08:00');
    await setTime('Closes', '08:00');
    expect(field('Closes')).toHaveAccessibleDescription('The close must differ from the open');
    await setTime('Closes', '18:00');
    expect(field('Closes')).not.toHaveAccessibleDescription('The close must differ from the open');
    await setTime('Parent orders from', '09:00');
    expect(field('Parent orders from')).toHaveAccessibleDescription('Parent orders cannot open after the open');
    await setTime('Parent orders from', '07:00');
    for (const d of ['Mon', 'Tue', 'Wed', 'Thu', 'Fri']) await user.click(within(dialog).getByRole('checkbox', { name: d }));
    expect(within(dialog).getByText('Pick at least one trading day')).toBeInTheDocument();
    await user.click(within(dialog).getByRole('checkbox', { name: 'Sun' }));
    expect(within(dialog).queryByText('Pick at least one trading day')).not.toBeInTheDocument();
    await user.click(within(dialog).getByRole('button', { name: 'Add holiday' }));
    await typeDate(user, 'Holiday 1 date', '25/12/2026');
    await user.click(within(dialog).getByRole('button', { name: 'Add holiday' }));
    await typeDate(user, 'Holiday 2 date', '25/12/2026');
    expect(await within(dialog).findByText('2026-12-25 is listed twice')).toBeInTheDocument();
    expect(within(dialog).getByRole('button', { name: 'Add exchange' })).toBeDisabled();
    await user.click(within(dialog).getByRole('button', { name: 'Remove holiday 2' }));
    expect(within(dialog).queryByText('2026-12-25 is listed twice')).not.toBeInTheDocument();
    await expect.poll(() => within(dialog).getByRole('button', { name: 'Add exchange' })).toBeEnabled();
    expect(admin.requests.filter((r) => r.method === 'PUT')).toEqual([]);
  }, 30_000);

  it('edits an exchange: its MIC stays, its calendar is replaced', async () => {
    const { user } = asAdmin();
    await screen.findByRole('table', { name: 'Exchanges' });
    const { dialog, field, setTime } = await openDialog(user, 'Edit IFEU', 'Edit IFEU');
    expect(field('MIC')).toHaveValue('IFEU');
    expect(field('MIC')).toBeDisabled();
    expect(field('Name')).toHaveValue('ICE Futures Europe');
    expect(field('Time zone')).toHaveValue('Europe/London');
    expect([field('Opens'), field('Closes'), field('Parent orders from')].map((i) => i.value)).toEqual(['08:00', '18:00', '07:00']);
    expect(field('Holiday 2 name')).toHaveValue('Christmas Day');
    expect(field('Holiday 3 name')).toHaveValue('');
    await setTime('Closes', '17:30');
    await user.click(within(dialog).getByRole('button', { name: 'Remove holiday 1' }));
    await user.click(within(dialog).getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByText('ICE Futures Europe (IFEU) updated.')).toBeInTheDocument();
    const put = admin.requests.find((r) => r.method === 'PUT');
    expect(put?.path).toBe('/api/admin/exchanges/IFEU');
    expect(put?.body).toEqual({
      name: 'ICE Futures Europe',
      time_zone: 'Europe/London',
      open_time: '08:00',
      close_time: '17:30',
      parent_orders_from: '07:00',
      days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri'],
      holidays: [
        { date: '2099-12-25', name: 'Christmas Day' },
        { date: '2099-12-28', name: null },
      ],
    });
    const row = (await screen.findByRole('cell', { name: 'IFEU' })).closest('tr') as HTMLElement;
    await expect.poll(() => cells(row)[3]).toBe('8:00 AM–5:30 PMParent orders from 7:00 AM');
    expect(cells(row)[5]).toBe('2Next: 25 Dec 2099, Christmas Day');
  });

  it('deletes an exchange after asking, its instruments back on the venue hours', async () => {
    const { user } = asAdmin();
    await screen.findByRole('table', { name: 'Exchanges' });
    await user.click(screen.getByRole('button', { name: 'Delete IFEU' }));
    const confirm = await screen.findByRole('dialog', { name: 'Delete IFEU?' });
    expect(confirm).toHaveTextContent("ICE Futures Europe's calendar is removed: its instrument trades on the venue's hours from now on.");
    await user.click(within(confirm).getByRole('button', { name: 'Back' }));
    expect(admin.requests.filter((r) => r.method === 'DELETE')).toEqual([]);
    await user.click(await screen.findByRole('button', { name: 'Delete IFEU' }));
    await user.click(within(await screen.findByRole('dialog', { name: 'Delete IFEU?' })).getByRole('button', { name: 'Delete' }));
    expect(await screen.findByText('ICE Futures Europe (IFEU) deleted.')).toBeInTheDocument();
    expect(admin.requests.find((r) => r.method === 'DELETE')?.path).toBe('/api/admin/exchanges/IFEU');
    expect(await screen.findByText("No exchanges yet: every instrument trades on the venue's hours.")).toBeInTheDocument();
  });
});
