// Cancel on disconnect on the real server in Chromium (issue 29, ADR 0043): Anna turns it
// on in Settings, works two orders, and closes her browser. Within the grace period
// nothing happens; after it her working orders are cancelled, and when she signs in again
// the notice of each opens by itself and stays in the history. Ben, who did not choose
// it, closes his browser too and keeps his order. The venue admin sees the FIX setting,
// on by default, in the Companies panel.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { ADMIN, api, frozenServer, launchBrowser, newPage, seedTwoFirms, shot, signIn, TIPS, TRADER_PASSWORD as PASSWORD, until } from './harness.mjs';

const T = 'disconnect';

/** When the pending cancels on disconnect are due, in ms since the epoch, read from the server's database. */
async function cancelsDue(server) {
  const script = 'import sqlite3, sys, json; c = sqlite3.connect(sys.argv[1]); print(json.dumps([r[0] // 1000 for r in c.execute("select due_at from timer where kind = \'disconnect.cancel\'")]))';
  const { stdout } = await promisify(execFile)('python3', ['-c', script, server.database]);
  return JSON.parse(stdout);
}

let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

test('a trader who chose it has their working orders cancelled once every window of theirs is gone', async () => {
  const { server, clock, stop } = await frozenServer();
  try {
    const { admin, broker, instrument, traders } = await seedTwoFirms(server, { tips: TIPS });
    const order = async ({ token }, direction, limit_price) => {
      const parent = await api(server.baseUrl, '/parent-orders', { token, method: 'POST', body: { direction, instrument_id: instrument.instrument_id, quantity: 5000 } });
      const o = await api(server.baseUrl, '/orders', {
        token, method: 'POST',
        body: { parent_order_id: parent.parent_order_id, instrument_id: instrument.instrument_id, direction, quantity: 1000, limit_price, residual: false, iceberg: false, broker_id: broker.company_id },
      });
      return o.order_id;
    };
    const state = async ({ token }, id) => (await api(server.baseUrl, `/orders/${id}`, { token })).state;
    const { Anna, Ben } = traders;

    // Anna turns it on in Settings, by the keyboard.
    const anna = await newPage(browser);
    await signIn(anna.page, server.baseUrl, Anna.email, PASSWORD);
    await anna.page.goto(`${server.baseUrl}/settings`);
    const section = anna.page.getByRole('region', { name: 'Cancel on disconnect' });
    await section.getByText('lost its connection for 10 seconds').waitFor();
    const toggle = section.getByRole('switch', { name: 'Cancel my working orders when I disconnect' });
    assert.equal(await toggle.isChecked(), false, 'off unless chosen');
    await toggle.focus();
    await anna.page.keyboard.press('Space');
    await anna.page.getByTestId('toast').filter({ hasText: 'Your working orders will be cancelled if you disconnect.' }).waitFor();
    assert.equal(await toggle.isChecked(), true);
    await shot(anna.page, T, '01-settings-on');
    const annas = [await order(Anna, 'BUY', -0.03), await order(Anna, 'BUY', -0.025)];
    const bens = await order(Ben, 'SELL', -0.015);

    // Both dashboards open, then both browsers close.
    await anna.page.goto(`${server.baseUrl}/dashboard`);
    await anna.page.getByRole('listitem', { name: /^Buy Euribor/ }).first().getByRole('list', { name: 'Child orders' }).waitFor();
    const ben = await newPage(browser);
    await signIn(ben.page, server.baseUrl, Ben.email, PASSWORD);
    await ben.page.getByRole('listitem', { name: /^Sell Euribor/ }).getByRole('list', { name: 'Child orders' }).waitFor();
    await anna.context.close();
    await ben.context.close();

    // One cancel is scheduled, Anna's, due the grace period after she left; Ben chose nothing.
    let due = [];
    await until(async () => (due = await cancelsDue(server)).length > 0, { what: 'a cancel on disconnect scheduled' });
    assert.deepEqual(due, [clock.now() + 10_000]);
    assert.deepEqual(await Promise.all(annas.map((id) => state(Anna, id))), ['WORKING', 'WORKING']);
    // After it: Anna's orders are cancelled, Ben's works on.
    await clock.move(9);
    await until(
      async () => {
        await clock.move(2);
        return (await Promise.all(annas.map((id) => state(Anna, id)))).every((s) => s === 'CANCELLED');
      },
      { what: "Anna's orders cancelled", intervalMs: 500 },
    );
    assert.equal(await state(Ben, bens), 'WORKING');

    // Anna is back: each notice opens by itself, then stays in the history.
    const back = await newPage(browser);
    await signIn(back.page, server.baseUrl, Anna.email, PASSWORD);
    const view = back.page.getByRole('dialog', { name: 'Order cancelled on disconnect' });
    await view.getByText(/^Buy 1,000 @ -0\.0(30|25)\. You were disconnected, so the venue cancelled your working order on Euribor/).waitFor();
    await shot(back.page, T, '02-notice-on-return');
    await view.getByRole('button', { name: 'Close' }).click();
    await back.page.getByRole('dialog', { name: 'Order cancelled on disconnect' }).getByRole('button', { name: 'Close' }).click();
    await back.page.getByRole('button', { name: 'Notifications' }).click();
    const history = back.page.getByRole('dialog', { name: 'Notifications' }).getByRole('region', { name: 'History' });
    await until(async () => (await history.getByText('Order cancelled on disconnect').count()) === 2, { what: 'two notices in the history' });
    await shot(back.page, T, '03-history');
    assert.deepEqual(back.errors, []);
    await back.context.close();

    // The admin: the FIX session's setting, on by default, in the Companies panel.
    const me = await api(server.baseUrl, '/users/me', { token: admin });
    await api(server.baseUrl, `/users/${me.user_id}`, { token: admin, method: 'PATCH', body: { auto_accept: 'INSTANT' } });
    const ops = await newPage(browser);
    await signIn(ops.page, server.baseUrl, ADMIN.email, ADMIN.password);
    await ops.page.goto(`${server.baseUrl}/admin/company`);
    await ops.page.getByRole('table', { name: 'Companies' }).getByRole('button', { name: 'Edit Halyard' }).click();
    const cod = ops.page.getByRole('switch', { name: /^Cancel on disconnect/ });
    await cod.waitFor();
    assert.equal(await cod.isChecked(), true);
    await cod.scrollIntoViewIfNeeded();
    await shot(ops.page, T, '04-company-fix-setting');
    await ops.context.close();
  } finally {
    await stop();
  }
});
