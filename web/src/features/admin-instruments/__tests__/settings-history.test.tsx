import { act, fireEvent, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { formatDateTime } from '@/lib/format-date';
import { admin } from '@/testing/mocks/admin-handlers';
import { db } from '@/testing/mocks/db';
import { server } from '@/testing/mocks/server';
import { renderApp, screen } from '@/testing/test-utils';
import { settingErrors, settingRequest } from '../lib/setting-form';

const ADMIN = 'ada@upstairs.test';
const NAME = 'Euribor 3M Dec26-Mar27';
const SETTINGS_PATH = '/api/admin/instruments/ai-1/settings';

function asAdmin() {
  db.addUser({ user_id: 'u-admin', email: ADMIN, first_name: 'Ada', last_name: 'Admin', roles: ['upstairs-admin'], company_id: 'c-upstairs', company_name: 'Upstairs' });
  return renderApp('/admin/instrument', { signedInAs: ADMIN });
}

/** A `datetime-local` value (local time, to the minute) for an instant. */
function localValue(d: Date) {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** A week from now at 08:30 local time. */
function nextWeek() {
  const d = new Date(Date.now() + 7 * 86_400_000);
  d.setHours(8, 30, 0, 0);
  return d;
}

async function openSettings() {
  const utils = asAdmin();
  await utils.user.click(await screen.findByRole('button', { name: `Settings of ${NAME}` }));
  const dialog = await screen.findByRole('dialog', { name: `Settings of ${NAME}` });
  const form = await within(dialog).findByRole('form', { name: 'Schedule a change' });
  const field = (name: string) => within(form).getByLabelText(new RegExp(`^${name}`)) as HTMLInputElement;
  // A datetime-local input takes a whole value at once (as its picker sets it).
  const setTime = (value: string) =>
    act(async () => {
      fireEvent.change(field('Effective from'), { target: { value } });
    });
  const retype = async (name: string, value: string) => {
    await utils.user.clear(field(name));
    if (value) await utils.user.type(field(name), value);
  };
  return { ...utils, dialog, form, field, setTime, retype };
}

const cells = (row: HTMLElement) => within(row).getAllByRole('cell').map((c) => c.textContent);

describe('instrument settings history', () => {
  it('lists the versions with their states, and prefills the form from the one in force', async () => {
    const { dialog, field, form } = await openSettings();
    const table = within(dialog).getByRole('table', { name: 'Settings history' });
    expect(within(table).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Effective from', 'Tick size', 'Exchange tick', 'Minimum block', 'State', 'Set by', 'Actions']);
    const [, scheduled, inForce, superseded] = within(table).getAllByRole('row') as HTMLElement[];
    const scheduledAt = formatDateTime('2027-01-04T07:00:00Z');
    expect(cells(scheduled!)).toEqual([scheduledAt, '0.0025', '0.0025', '250', 'Scheduled', ADMIN, 'Cancel change']);
    expect(cells(inForce!)).toEqual([formatDateTime('2026-06-01T06:00:00Z'), '0.005', '0.005', '500', 'In force', ADMIN, '']);
    expect(cells(superseded!)).toEqual([formatDateTime('2025-03-03T07:00:00Z'), '0.01', '—', '100', 'Superseded', '—', '']);
    // Only a scheduled change can be cancelled.
    expect(within(table).getAllByRole('button')).toHaveLength(1);
    expect(within(scheduled!).getByRole('button', { name: `Cancel the change of ${scheduledAt}` })).toBeEnabled();

    expect(field('Effective from')).toHaveValue('');
    expect(field('Effective from')).toHaveAttribute('type', 'datetime-local');
    expect(field('Tick size')).toHaveValue('0.005');
    expect(field('Exchange tick size')).toHaveValue('0.005');
    expect(field('Minimum block')).toHaveValue('500');
    // No time chosen yet.
    expect(within(form).getByRole('button', { name: 'Schedule' })).toBeDisabled();
  });

  it('shows the loading and then the empty state, the form prefilled from the instrument', async () => {
    let answer: () => void = () => {};
    server.use(http.get(`*${SETTINGS_PATH}`, () => new Promise<Response>((resolve) => (answer = () => resolve(HttpResponse.json([]))))));
    const { user } = asAdmin();
    await user.click(await screen.findByRole('button', { name: `Settings of ${NAME}` }));
    const dialog = await screen.findByRole('dialog', { name: `Settings of ${NAME}` });
    expect(await within(dialog).findByRole('progressbar', { name: 'Loading the settings' })).toBeInTheDocument();
    answer();
    expect(await within(dialog).findByText('No settings recorded yet.')).toBeInTheDocument();
    expect(within(dialog).queryByRole('table')).not.toBeInTheDocument();
    const form = within(dialog).getByRole('form', { name: 'Schedule a change' });
    expect(within(form).getByLabelText(/^Tick size/)).toHaveValue('0.005');
    expect(within(form).getByLabelText(/^Minimum block/)).toHaveValue('500');
  });

  it('schedules a change: exact decimals as JSON numbers, the local time as an ISO instant', async () => {
    const { user, dialog, form, field, setTime, retype } = await openSettings();
    const at = nextWeek();
    await setTime(localValue(at));
    await retype('Tick size', '0.0005');
    await retype('Exchange tick size', '');
    await retype('Minimum block', '1000');
    const before = admin.requests.length;
    await user.click(within(form).getByRole('button', { name: 'Schedule' }));

    const status = await within(dialog).findByRole('status');
    expect(status).toHaveTextContent(`Change scheduled for ${formatDateTime(at)}.`);
    const post = admin.requests.slice(before).find((r) => r.method === 'POST');
    expect(post?.path).toBe(SETTINGS_PATH);
    expect(post?.body).toEqual({ effective_from: at.toISOString(), tick_size: 0.0005, exchange_tick_size: null, min_quantity: 1000 });
    // The time is chosen again; the settings stay as typed.
    expect(field('Effective from')).toHaveValue('');
    expect(field('Tick size')).toHaveValue('0.0005');
    expect(within(form).getByRole('button', { name: 'Schedule' })).toBeDisabled();
    // The history is read again, the new change in its place (newest first: after the one of January 2027).
    const table = within(dialog).getByRole('table', { name: 'Settings history' });
    const row = (await within(table).findByRole('button', { name: `Cancel the change of ${formatDateTime(at)}` })).closest('tr') as HTMLElement;
    expect(cells(row)).toEqual([formatDateTime(at), '0.0005', '—', '1000', 'Scheduled', ADMIN, 'Cancel change']);
    expect(within(table).getAllByRole('row').map((r) => within(r).queryAllByRole('cell')[4]?.textContent)).toEqual([undefined, 'Scheduled', 'Scheduled', 'In force', 'Superseded']);
    expect(admin.requests.slice(before).filter((r) => r.method === 'GET' && r.path === SETTINGS_PATH)).not.toHaveLength(0);
  });

  it("shows the server's field error under its field", async () => {
    server.use(
      http.post(`*${SETTINGS_PATH}`, () =>
        HttpResponse.json({ status: 400, detail: 'The settings are not valid.', errors: [{ field: 'effective_from', message: 'Choose a time after now' }] }, { status: 400 }),
      ),
    );
    const { user, dialog, form, field, setTime } = await openSettings();
    await setTime(localValue(nextWeek()));
    expect(field('Effective from')).not.toHaveAccessibleDescription('Choose a time after now');
    await expect.poll(() => within(form).getByRole('button', { name: 'Schedule' })).toBeEnabled();
    await user.click(within(form).getByRole('button', { name: 'Schedule' }));
    await expect.poll(() => field('Effective from')).toHaveAccessibleDescription('Choose a time after now');
    expect(field('Effective from')).toHaveAttribute('aria-invalid', 'true');
    // Said under the field, not again in an alert.
    expect(within(dialog).queryByRole('alert')).not.toBeInTheDocument();
    expect(screen.queryByText('The settings are not valid.')).not.toBeInTheDocument();
  });

  it('shows a conflict (a change already scheduled then) in an alert in the dialog', async () => {
    const at = nextWeek();
    admin.settings['ai-1']![0]!.effective_from = at.toISOString();
    const { user, dialog, form, setTime } = await openSettings();
    await setTime(localValue(at));
    await expect.poll(() => within(form).getByRole('button', { name: 'Schedule' })).toBeEnabled();
    await user.click(within(form).getByRole('button', { name: 'Schedule' }));
    const detail = "A change of this instrument's settings is already scheduled for that time.";
    expect(await within(dialog).findByRole('alert')).toHaveTextContent(detail);
    // Once: not in the error snackbar as well.
    expect(screen.getAllByText(detail)).toHaveLength(1);
    expect(within(dialog).queryByRole('status')).not.toBeInTheDocument();
  });

  it('cancels a scheduled change, and says why one in force cannot be', async () => {
    const { user, dialog } = await openSettings();
    const table = within(dialog).getByRole('table', { name: 'Settings history' });
    const scheduledAt = formatDateTime('2027-01-04T07:00:00Z');
    const before = admin.requests.length;
    await user.click(within(table).getByRole('button', { name: `Cancel the change of ${scheduledAt}` }));
    expect(await within(dialog).findByRole('status')).toHaveTextContent(`Change of ${scheduledAt} cancelled.`);
    expect(admin.requests.slice(before).find((r) => r.method === 'DELETE')?.path).toBe(`${SETTINGS_PATH}/00000000-0000-4000-8000-000000000003`);
    await expect.poll(() => within(table).queryAllByRole('row')).toHaveLength(3);
    expect(within(table).queryByRole('button', { name: /^Cancel the change/ })).not.toBeInTheDocument();

    // A change that took effect meanwhile.
    const at = nextWeek();
    admin.settings['ai-1']!.unshift({ ...admin.settings['ai-1']![0]!, setting_id: '00000000-0000-4000-8000-000000000009', effective_from: at.toISOString(), state: 'SCHEDULED' });
    server.use(
      http.delete(`*${SETTINGS_PATH}/:settingId`, () =>
        HttpResponse.json({ status: 409, detail: 'This change is in force already: schedule another to change it.' }, { status: 409 }),
      ),
    );
    await user.click(within(dialog).getByRole('button', { name: 'Close' }));
    await user.click(screen.getByRole('button', { name: `Settings of ${NAME}` }));
    const again = await screen.findByRole('dialog', { name: `Settings of ${NAME}` });
    await user.click(await within(again).findByRole('button', { name: `Cancel the change of ${formatDateTime(at)}` }));
    expect(await within(again).findByRole('alert')).toHaveTextContent('This change is in force already: schedule another to change it.');
  });

  it('checks the tick size, the minimum block and the time as the server does', async () => {
    const { form, field, setTime, retype } = await openSettings();
    const schedule = within(form).getByRole('button', { name: 'Schedule' });
    await setTime(localValue(nextWeek()));
    await expect.poll(() => schedule).toBeEnabled();
    for (const bad of ['0', '-0.005', 'abc']) {
      await retype('Tick size', bad);
      expect(field('Tick size')).toHaveAccessibleDescription('Tick size must be greater than 0');
      expect(schedule).toBeDisabled();
    }
    await retype('Tick size', '0.001');
    expect(field('Tick size')).not.toHaveAccessibleDescription('Tick size must be greater than 0');
    await retype('Exchange tick size', '0');
    expect(field('Exchange tick size')).toHaveAccessibleDescription('Tick size must be greater than 0');
    await retype('Exchange tick size', '');
    for (const bad of ['0', '1.5', '']) {
      await retype('Minimum block', bad);
      expect(field('Minimum block')).toHaveAccessibleDescription('The minimum block must be a whole number above 0');
    }
    await retype('Minimum block', '750');
    await setTime(localValue(new Date(Date.now() - 3_600_000)));
    await expect.poll(() => field('Effective from')).toHaveAccessibleDescription('Choose a time after now');
    expect(schedule).toBeDisabled();
    // Submitted anyway (the rules run again): nothing is sent.
    await act(async () => {
      fireEvent.submit(form);
    });
    await expect.poll(() => field('Effective from')).toHaveAccessibleDescription('Choose a time after now');
    expect(admin.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });

  it('builds the request from the form without floating point', () => {
    expect(settingRequest({ effective_from: '2027-02-01T08:30', tick_size: ' 0.0005 ', exchange_tick_size: '0.00025', min_quantity: '250' })).toEqual({
      effective_from: new Date(2027, 1, 1, 8, 30).toISOString(),
      tick_size: 0.0005,
      exchange_tick_size: 0.00025,
      min_quantity: 250,
    });
    const now = new Date(2027, 1, 1, 8, 30).getTime();
    expect(settingErrors({ effective_from: '2027-02-01T08:30', tick_size: '0.1', exchange_tick_size: '', min_quantity: '1' }, now)).toEqual({
      effective_from: 'Choose a time after now',
    });
    expect(settingErrors({ effective_from: '2027-02-01T08:31', tick_size: '0.1234567890123456789', exchange_tick_size: '', min_quantity: '01' }, now)).toEqual({
      tick_size: 'Invalid value',
    });
  });
});
