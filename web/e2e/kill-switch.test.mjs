// The kill switch on the real server in Chromium: the venue admin stops a trading firm
// with working orders from the Companies panel (after a confirmation saying what
// happens); its orders are cancelled, new ones refused, and its trader sees why on the
// dashboard. The other firm trades on. The admin then re-enables it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN, api, launchBrowser, login, newPage, seedTwoFirms, shot, signIn, startServer, TRADER_PASSWORD as PASSWORD, until, waitForMail, TIPS } from './harness.mjs';

const T = 'kill-switch';

let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

/** The two firms of the harness (a broker, an instrument, a trader each), each trader with working orders. */
async function seedVenue(server) {
  const { admin, broker, instrument, traders: people } = await seedTwoFirms(server, { tips: TIPS });
  // The admin's match-request preference is set, so sign-in goes straight to the panels.
  const me = await api(server.baseUrl, '/users/me', { token: admin });
  await api(server.baseUrl, `/users/${me.user_id}`, { token: admin, method: 'PATCH', body: { auto_accept: 'INSTANT' } });
  const traders = {};
  for (const [name, first, direction, prices] of [
    ['Halyard', 'Anna', 'BUY', [-0.03, -0.025]],
    ['Kestrel', 'Ben', 'SELL', [-0.015]],
  ]) {
    const { email, token, firm } = people[first];
    const parent = await api(server.baseUrl, '/parent-orders', { token, method: 'POST', body: { direction, instrument_id: instrument.instrument_id, quantity: 5000 } });
    for (const limit_price of prices) {
      await api(server.baseUrl, '/orders', {
        token, method: 'POST',
        body: { parent_order_id: parent.parent_order_id, instrument_id: instrument.instrument_id, direction, quantity: 1000, limit_price, residual: false, iceberg: false, broker_id: broker.company_id },
      });
    }
    traders[name] = { email, token, firm, parent };
  }
  return { admin, broker, instrument, traders };
}

const states = async (server, { token, parent }) =>
  (await api(server.baseUrl, `/orders?parent_order_id=${parent.parent_order_id}`, { token })).map((o) => o.state).sort();

/** HH:mm of a server time in this machine's zone, which Chromium shares. */
const hhmm = (iso) => new Date(iso).toTimeString().slice(0, 5);
const ddmmyyyy = (iso) => {
  const d = new Date(iso);
  return `${String(d.getDate()).padStart(2, '0')}/${String(d.getMonth() + 1).padStart(2, '0')}/${d.getFullYear()} ${hhmm(iso)}`;
};

test('an admin stops a firm with working orders; its trader sees why and its orders are cancelled', async () => {
  const server = await startServer({ env: { UPSTAIRS_ALWAYS_OPEN: 'true' } });
  const adminPage = await newPage(browser);
  const traderPage = await newPage(browser);
  try {
    const { admin, instrument, traders } = await seedVenue(server);
    const { Halyard, Kestrel } = traders;
    assert.deepEqual(await states(server, Halyard), ['WORKING', 'WORKING']);

    // Anna's dashboard before: her two working orders, no alert.
    await signIn(traderPage.page, server.baseUrl, Halyard.email, PASSWORD);
    const card = traderPage.page.getByRole('listitem', { name: /^Buy Euribor/ });
    await card.getByRole('list', { name: 'Child orders' }).waitFor();
    assert.equal(await card.getByRole('list', { name: 'Child orders' }).locator('> *').count(), 2);
    assert.equal(await traderPage.page.getByTestId('trading-stopped').count(), 0);

    // Anna has a Work order drawer open when the switch comes.
    const tp = traderPage.page;
    await tp.getByRole('region', { name: `Order book ${instrument.name}` }).getByRole('button', { name: 'Price -0.035' }).click();
    const drawer = tp.locator('form').filter({ has: tp.getByRole('heading', { name: 'Work order' }) });
    await drawer.getByRole('button', { name: 'Place order' }).waitFor();

    // The admin stops Halyard from the Companies panel.
    const { page } = adminPage;
    await signIn(page, server.baseUrl, ADMIN.email, ADMIN.password);
    await page.getByRole('button', { name: 'Open menu' }).click();
    await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: 'Companies panel' }).click();
    const companies = page.getByRole('table', { name: 'Companies' });
    const halyardRow = companies.getByRole('row', { name: /^Halyard / });
    await halyardRow.waitFor();
    await shot(page, T, '01-companies-trading');
    await halyardRow.getByRole('button', { name: 'Stop trading for Halyard' }).click();
    const dialog = page.getByRole('dialog', { name: 'Stop trading for Halyard?' });
    await dialog.getByText('Every working order of Halyard is cancelled.').waitFor();
    await dialog.getByText('Its pending match requests, open RFQs and quotes are ended, and the counterparties are told.').waitFor();
    await dialog.getByText('New orders from Halyard are refused until an admin re-enables trading.').waitFor();
    await shot(page, T, '02-stop-confirm');
    await dialog.getByRole('button', { name: 'Stop trading' }).click();
    await page.getByTestId('toast').filter({ hasText: 'Trading stopped for Halyard.' }).waitFor();

    const stopped = (await api(server.baseUrl, '/admin/companies?page=0&size=200', { token: admin })).items.find((c) => c.name === 'Halyard');
    assert.ok(stopped.trading_stopped_at, 'Halyard is stopped');
    await halyardRow.getByText(`Trading stopped since ${ddmmyyyy(stopped.trading_stopped_at)}`).waitFor();
    await halyardRow.getByRole('button', { name: 'Re-enable trading for Halyard' }).waitFor();
    assert.equal(await companies.getByRole('row', { name: /^Kestrel / }).getByText(/Trading stopped/).count(), 0);
    await shot(page, T, '03-companies-stopped');

    // Halyard's orders are cancelled; Kestrel's still work; Halyard's new orders are refused.
    await until(async () => (await states(server, Halyard)).every((s) => s === 'CANCELLED'), { what: "Halyard's orders cancelled" });
    assert.deepEqual(await states(server, Halyard), ['CANCELLED', 'CANCELLED']);
    assert.deepEqual(await states(server, Kestrel), ['WORKING']);
    await assert.rejects(
      api(server.baseUrl, '/orders', {
        token: Halyard.token, method: 'POST',
        body: { parent_order_id: Halyard.parent.parent_order_id, instrument_id: instrument.instrument_id, direction: 'BUY', quantity: 1000, limit_price: -0.03, residual: false, iceberg: false, broker_id: Halyard.firm.default_broker.company_id },
      }),
      /409.*kill switch/,
    );

    // Anna sees why, at once (the cancellations arrive on her orders topic), in red.
    const alert = traderPage.page.getByTestId('trading-stopped');
    await alert.waitFor({ timeout: 10_000 });
    assert.equal(
      await alert.innerText(),
      `Trading is stopped for your company (kill switch) since ${hhmm(stopped.trading_stopped_at)}. New orders are refused until a venue admin re-enables it.`,
    );
    assert.equal(await alert.getAttribute('role'), 'alert');
    const background = await alert.evaluate((el) => getComputedStyle(el).backgroundColor);
    const [r, g, b] = background.match(/\d+/g).map(Number);
    assert.ok(r > 150 && g < 100 && b < 100, `the alert is red, not ${background}`);
    // Her working orders left the card.
    await card.getByRole('list', { name: 'Child orders' }).waitFor({ state: 'detached' });
    // The drawer she had open sends; the refusal's red snackbar leaves its buttons
    // uncovered, so she can cancel (issue 28.14).
    await drawer.getByRole('button', { name: 'Place order' }).click();
    const snackbar = tp.getByTestId('api-error-snackbar');
    await snackbar.filter({ hasText: /kill switch/ }).waitFor();
    const [bar, cancel] = [await snackbar.boundingBox(), await drawer.getByRole('button', { name: 'Cancel' }).boundingBox()];
    const apart = (p, q) => p.y + p.height <= q.y || q.y + q.height <= p.y || p.x + p.width <= q.x || q.x + q.width <= p.x;
    assert.ok(bar && cancel && apart(bar, cancel), `the snackbar ${JSON.stringify(bar)} covers Cancel ${JSON.stringify(cancel)}`);
    await shot(tp, T, '04a-refused-in-the-drawer');
    await drawer.getByRole('button', { name: 'Cancel' }).click();
    await drawer.waitFor({ state: 'detached' });
    // Nothing she could send would be taken, so nothing offers it (issue 28.14): no new
    // parent order, no RFQ, no ladder row to work or take (the book is still shown).
    await until(async () => tp.getByRole('button', { name: 'Add parent order' }).isDisabled(), { what: 'Add parent order disabled' });
    assert.ok(await card.getByRole('button', { name: 'Request quotes' }).isDisabled());
    const book = tp.getByRole('region', { name: `Order book ${instrument.name}` });
    await book.locator('[data-price="-0.030"]').waitFor();
    assert.equal(await book.getByRole('button', { name: /^Price / }).count(), 0, 'no ladder row to click');
    for (const width of [1280, 1440, 1920]) {
      await tp.setViewportSize({ width, height: 900 });
      await shot(tp, T, `04-trader-dashboard-stopped-${width}`);
    }

    // The admin re-enables trading; Anna's alert goes on her next look.
    await halyardRow.getByRole('button', { name: 'Re-enable trading for Halyard' }).click();
    const release = page.getByRole('dialog', { name: 'Re-enable trading for Halyard?' });
    await release.getByText(/Halyard can place orders again/).waitFor();
    await shot(page, T, '05-release-confirm');
    await release.getByRole('button', { name: 'Re-enable trading' }).click();
    await page.getByTestId('toast').filter({ hasText: 'Trading re-enabled for Halyard.' }).waitFor();
    await halyardRow.getByRole('button', { name: 'Stop trading for Halyard' }).waitFor();
    assert.equal(await halyardRow.getByText(/Trading stopped/).count(), 0);
    await traderPage.page.reload();
    await card.waitFor();
    assert.equal(await traderPage.page.getByTestId('trading-stopped').count(), 0);
    assert.deepEqual(adminPage.errors, []);
    assert.deepEqual(traderPage.errors, []);
  } finally {
    await adminPage.context.close();
    await traderPage.context.close();
    await server.stop();
  }
});

test("a company admin keeps its own firm: users, a newsletter to its own traders, and its kill switch", async () => {
  const server = await startServer({ env: { UPSTAIRS_ALWAYS_OPEN: 'true' } });
  const { context, page, errors } = await newPage(browser);
  try {
    const { admin, traders } = await seedVenue(server);
    const { Halyard, Kestrel } = traders;
    // Halyard's company admin, activated by the link of their e-mail.
    const email = 'cora@halyard.test';
    const boss = await api(server.baseUrl, '/users', {
      token: admin, method: 'POST', body: { email, first_name: 'Cora', last_name: 'Boss', company_id: Halyard.firm.company_id, roles: ['company-admin'] },
    });
    const { link } = await waitForMail(server.mailDir, email, { pathPrefix: '/account-activate' });
    await api(server.baseUrl, `/users/password-reset/${new URL(link).searchParams.get('hash')}`, { method: 'POST', body: { password: PASSWORD } });
    const token = await login(server.baseUrl, email, PASSWORD);
    await api(server.baseUrl, `/users/${boss.user_id}`, { token, method: 'PATCH', body: { auto_accept: 'INSTANT' } });
    // The venue's own newsletter, which Halyard's admin must not see.
    await api(server.baseUrl, '/admin/newsletters', { token: admin, method: 'POST', body: { name: 'Venue desk', description: 'Every firm' } });

    // The drawer (admin spec sections 2, 6 and 9): 486 px, the entries of a company admin.
    await signIn(page, server.baseUrl, email, PASSWORD);
    await page.getByRole('button', { name: 'Open menu' }).click();
    const nav = page.getByRole('navigation', { name: 'Main menu' });
    await nav.waitFor();
    assert.deepEqual(await nav.getByRole('link').allInnerTexts(), ['Dashboard', 'Users panel', 'Orders newsletter', 'Block Calculator', 'Account Info']);
    assert.equal(Math.round((await nav.boundingBox()).width), 486);
    await shot(page, T, '06-company-admin-drawer');

    // The Users panel: Halyard's users only, and Halyard's kill switch.
    await nav.getByRole('link', { name: 'Users panel' }).click();
    const users = page.getByRole('table', { name: 'Users' });
    await users.getByText(Halyard.email).waitFor();
    await users.getByText(email).waitFor();
    assert.equal(await users.getByText(Kestrel.email).count(), 0);
    const killSwitch = page.getByRole('region', { name: 'Kill switch' });
    await killSwitch.getByText('Kill switch: stop every order, match request and RFQ of Halyard at once.').waitFor();
    await shot(page, T, '07-company-admin-users');

    // The Orders newsletter: Halyard's own, to Halyard's traders only; the venue's is not listed.
    await page.getByRole('button', { name: 'Open menu' }).click();
    await nav.getByRole('link', { name: 'Orders newsletter' }).click();
    await page.getByText('No newsletters yet. Create one, then choose its recipients.').waitFor();
    await page.getByRole('button', { name: 'Create newsletter' }).click();
    const form = page.getByRole('form', { name: 'Create newsletter' });
    await form.getByRole('textbox', { name: 'Name' }).fill('Halyard desk');
    await form.getByRole('textbox', { name: 'Description' }).fill('Resting interest for our traders');
    await form.getByRole('button', { name: 'Create newsletter' }).click();
    const list = page.getByRole('table', { name: 'Newsletters' });
    await list.getByRole('row', { name: /^Halyard desk Resting interest for our traders 0 Never/ }).waitFor();
    assert.equal(await list.getByText('Venue desk').count(), 0);
    await list.getByRole('button', { name: 'Recipients of Halyard desk' }).click();
    const drawer = page.getByRole('region', { name: 'Recipients of Halyard desk' });
    await drawer.getByRole('combobox', { name: 'Users to add' }).click();
    const options = await page.getByRole('option').allInnerTexts();
    assert.ok(options.some((o) => o.includes(Halyard.email)), `Anna is offered: ${options}`);
    assert.ok(!options.some((o) => o.includes(Kestrel.email)), `no other firm's trader is offered: ${options}`);
    await page.getByRole('option').filter({ hasText: Halyard.email }).click();
    await drawer.getByRole('button', { name: 'Add recipient' }).click();
    await drawer.getByRole('listitem').filter({ hasText: `${Halyard.email} · Halyard` }).waitFor();
    await shot(page, T, '08-company-admin-newsletter');
    await drawer.getByRole('button', { name: 'Done' }).click();
    await list.getByRole('button', { name: 'Preview Halyard desk' }).click();
    const preview = page.getByRole('dialog', { name: 'Preview of Halyard desk' });
    await preview.getByRole('button', { name: 'Send…' }).click();
    await page.getByRole('dialog', { name: 'Send Halyard desk?' }).getByRole('button', { name: 'Send to 1 recipient' }).click();
    await page.getByTestId('toast').filter({ hasText: 'Halyard desk sent: 1 e-mail queued.' }).waitFor();
    const { mail } = await waitForMail(server.mailDir, Halyard.email, { skip: 1 });
    assert.equal(mail.subject, 'Upstairs orders digest: Halyard desk');

    // The kill switch: Halyard stops itself; only a venue admin re-enables it.
    await page.getByRole('button', { name: 'Open menu' }).click();
    await nav.getByRole('link', { name: 'Users panel' }).click();
    await killSwitch.getByRole('button', { name: 'Stop trading' }).click();
    const dialog = page.getByRole('dialog', { name: 'Stop trading for Halyard?' });
    await dialog.getByText('Every working order of Halyard is cancelled.').waitFor();
    await dialog.getByRole('button', { name: 'Stop trading' }).click();
    await page.getByTestId('toast').filter({ hasText: 'Trading stopped for Halyard.' }).waitFor();
    await killSwitch.getByText(/^Trading is stopped for Halyard since .*\. A venue admin re-enables it\.$/).waitFor();
    await until(async () => (await states(server, Halyard)).every((s) => s === 'CANCELLED'), { what: "Halyard's orders cancelled" });
    assert.deepEqual(await states(server, Kestrel), ['WORKING']);
    await shot(page, T, '09-company-admin-stopped');
    // The harness's init script also runs in the preview's sandboxed frame, which denies storage.
    const sandboxed = (e) => /The document is sandboxed and lacks the 'allow-same-origin' flag/.test(e.message);
    assert.deepEqual(errors.filter((e) => !sandboxed(e)), []);
  } finally {
    await context.close();
    await server.stop();
  }
});
