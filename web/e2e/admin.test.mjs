// The admin area on the real server in Chromium: companies, users (the
// activation e-mail arrives), instruments with the band rule, the block
// calculator, the action log, and a trader who has no menu and gets no access.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN, api, createUserAsAdmin, frozenServer, launchBrowser, newPage, shot, startServer, until, waitForMail } from './harness.mjs';

const T = 'admin';
let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

async function signIn(page, baseUrl, email, password) {
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

async function openPanel(page, name) {
  await page.getByRole('button', { name: 'Open menu' }).click();
  await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name }).click();
}

/** Picks options of an MUI select (multiple selects stay open until Escape). */
async function pick(page, form, label, options) {
  await form.getByRole('combobox', { name: label }).click();
  for (const o of options) await page.getByRole('listbox').getByRole('option', { name: o, exact: true }).click();
  if (options.length > 1 || label === 'Brokers' || label === 'Roles') await page.keyboard.press('Escape');
}

/** The success toast must leave the panel's primary action visible and clickable. */
async function assertToastClearOf(page, text, button) {
  const toast = page.getByTestId('toast').filter({ hasText: text });
  await toast.waitFor();
  const a = await toast.boundingBox();
  const b = await page.getByRole('main').getByRole('button', { name: button }).boundingBox();
  assert.ok(a && b, 'toast and button are on screen');
  const overlap = a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  assert.equal(overlap, false, `the toast ${JSON.stringify(a)} covers '${button}' ${JSON.stringify(b)}`);
}

test('an admin manages companies, users and instruments; a trader cannot', async () => {
  const server = await startServer();
  const { context, page, errors } = await newPage(browser);
  try {
    await signIn(page, server.baseUrl, ADMIN.email, ADMIN.password);
    // The bootstrap admin chooses a match-request preference first.
    await page.getByRole('heading', { name: 'Welcome to Upstairs' }).waitFor();
    await page.getByRole('radio', { name: /Instant/ }).check();
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();

    await page.getByRole('button', { name: 'Open menu' }).click();
    await page.getByRole('navigation', { name: 'Main menu' }).waitFor();
    await shot(page, T, '01-drawer');
    await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: 'Companies panel' }).click();
    await page.getByRole('heading', { name: 'Companies' }).waitFor();

    // A broker company.
    await page.getByRole('button', { name: 'Create company' }).click();
    let form = page.getByRole('form', { name: 'Create company' });
    await form.getByRole('textbox', { name: 'Company name' }).fill('Northgate');
    await form.getByRole('textbox', { name: 'Full name' }).fill('N');
    await form.getByRole('textbox', { name: 'Full name' }).blur();
    await form.getByText('Full name must be at least 4 characters long').waitFor();
    await form.getByRole('textbox', { name: 'Full name' }).fill('Northgate Clearing LLP');
    await form.getByRole('textbox', { name: 'Trade confirmation e-mail' }).fill('ops@northgate.test');
    await form.getByRole('switch', { name: 'Trade confirmation via e-mail' }).check();
    await pick(page, form, 'Roles', ['Broker']);
    await shot(page, T, '02-company-form');
    await form.getByRole('button', { name: 'Create company' }).click();
    await page.getByText('Northgate created.').waitFor();

    // A trading firm using it: the default broker follows the brokers.
    await page.getByRole('button', { name: 'Create company' }).click();
    form = page.getByRole('form', { name: 'Create company' });
    await form.getByRole('textbox', { name: 'Company name' }).fill('Halyard');
    await form.getByRole('textbox', { name: 'Full name' }).fill('Halyard Capital LLP');
    await pick(page, form, 'Brokers', ['Northgate']);
    assert.equal(await form.getByRole('combobox', { name: 'Default broker' }).textContent(), 'Northgate');
    await form.getByRole('button', { name: 'Create company' }).click();
    await assertToastClearOf(page, 'Halyard created.', 'Create company');
    const companies = page.getByRole('table', { name: 'Companies' });
    await companies.getByRole('row', { name: /Halyard Halyard Capital LLP Trading firm Northgate Northgate/ }).waitFor();
    await shot(page, T, '03-companies-panel');

    // A user in the firm: the activation e-mail arrives.
    await openPanel(page, 'Users panel');
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    await page.getByRole('button', { name: 'Create user' }).click();
    form = page.getByRole('form', { name: 'Create user' });
    await form.getByRole('textbox', { name: 'First name' }).fill('Nia');
    await form.getByRole('textbox', { name: 'Last name' }).fill('Novak');
    await form.getByRole('textbox', { name: 'E-mail' }).fill('nia@halyard');
    await form.getByRole('textbox', { name: 'E-mail' }).blur();
    await form.getByText('Please enter a valid email address').waitFor();
    await form.getByRole('textbox', { name: 'E-mail' }).fill('nia@halyard.test');
    await pick(page, form, 'Company', ['Halyard']);
    await form.getByRole('textbox', { name: 'Parent order limit multiplier' }).fill('3');
    await shot(page, T, '04-user-form');
    await form.getByRole('button', { name: 'Create user' }).click();
    await assertToastClearOf(page, 'nia@halyard.test created. An activation e-mail is on its way.', 'Create user');
    const { link } = await waitForMail(server.mailDir, 'nia@halyard.test', { pathPrefix: '/account-activate' });
    assert.match(link, /\/account-activate\?hash=/);
    await page.getByRole('table', { name: 'Users' }).getByRole('row', { name: /Nia Novak nia@halyard.test Halyard Trader 3/ }).waitFor();

    // Editing: the company is locked; an empty multiplier is stored as none.
    await page.getByRole('button', { name: 'Edit nia@halyard.test' }).click();
    form = page.getByRole('form', { name: 'Edit nia@halyard.test' });
    assert.equal(await form.getByRole('combobox', { name: 'Company' }).getAttribute('aria-disabled'), 'true');
    await form.getByRole('textbox', { name: 'Parent order limit multiplier' }).fill('');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('nia@halyard.test updated.').waitFor();
    const { token } = await api(server.baseUrl, '/auth/login', { method: 'POST', body: { ...ADMIN, rememberMe: false } });
    const users = await api(server.baseUrl, '/admin/users?page=0&size=200', { token });
    assert.equal(users.items.find((u) => u.email === 'nia@halyard.test').parent_order_limit_multiplier, null);
    await shot(page, T, '05-users-panel');

    // An instrument, then an edit of its band.
    await openPanel(page, 'Instruments panel');
    await page.getByRole('heading', { name: 'Instruments' }).waitFor();
    await page.getByRole('button', { name: 'Create instrument' }).click();
    form = page.getByRole('form', { name: 'Create instrument' });
    await form.getByRole('textbox', { name: /^Name/ }).fill('Euribor 3M Dec26-Mar27');
    await form.getByRole('textbox', { name: 'Term' }).fill('Dec26-Mar27');
    await form.getByRole('textbox', { name: 'Currency' }).fill('EUR');
    await form.getByRole('textbox', { name: /^Tick size/ }).fill('0.005');
    await form.getByRole('textbox', { name: 'Exchange id' }).fill('I');
    await form.getByRole('textbox', { name: 'Minimum block size' }).fill('500');
    await form.getByRole('textbox', { name: 'Best bid' }).fill('-0.040');
    assert.equal(await form.getByRole('textbox', { name: 'Best offer' }).inputValue(), '0.010');
    await form.getByRole('textbox', { name: 'Best offer' }).fill('-0.015');
    assert.equal(await form.getByRole('textbox', { name: 'Best bid' }).inputValue(), '-0.065');
    await form.getByRole('textbox', { name: 'Best bid' }).fill('-0.0401');
    await form.getByText('Invalid value').waitFor();
    assert.equal(await form.getByRole('button', { name: 'Create instrument' }).isDisabled(), true);
    await form.getByRole('textbox', { name: 'Best bid' }).fill('-0.040');
    await form.getByRole('textbox', { name: 'Best offer' }).fill('-0.015');
    await shot(page, T, '06-instrument-form');
    await form.getByRole('button', { name: 'Create instrument' }).click();
    await assertToastClearOf(page, 'Euribor 3M Dec26-Mar27 created.', 'Create instrument');

    await page.getByRole('button', { name: 'Edit Euribor 3M Dec26-Mar27' }).click();
    form = page.getByRole('form', { name: 'Edit Euribor 3M Dec26-Mar27' });
    assert.equal(await form.getByRole('textbox', { name: 'Best offer' }).inputValue(), '-0.015');
    await form.getByRole('textbox', { name: 'Best bid' }).fill('-0.030');
    assert.equal(await form.getByRole('textbox', { name: 'Best offer' }).inputValue(), '0.020');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Euribor 3M Dec26-Mar27 updated.').waitFor();
    const [instrument] = await api(server.baseUrl, '/instruments', { token });
    assert.deepEqual([instrument.min_tick_price, instrument.max_tick_price], [-0.03, 0.02]);

    // No exchange tick size was given: the edit shows an empty field and saved it as none (null);
    // a typed one is saved as exactly that decimal.
    const adminInstrument = async () => (await api(server.baseUrl, '/admin/instruments?page=0&size=200', { token })).items[0];
    assert.equal((await adminInstrument()).exchange_tick_size, null);
    await page.getByRole('button', { name: 'Edit Euribor 3M Dec26-Mar27' }).click();
    form = page.getByRole('form', { name: 'Edit Euribor 3M Dec26-Mar27' });
    assert.equal(await form.getByRole('textbox', { name: 'Exchange tick size' }).inputValue(), '');
    await form.getByRole('textbox', { name: 'Exchange tick size' }).fill('0.0025');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await form.waitFor({ state: 'detached' });
    await until(async () => (await adminInstrument()).exchange_tick_size === 0.0025, { what: 'the exchange tick size 0.0025' });

    await page.getByRole('textbox', { name: 'Name' }).fill('bund');
    await page.getByText('No instrument matches these filters.').waitFor();
    await page.getByRole('textbox', { name: 'Name' }).fill('');
    await page.getByRole('table', { name: 'Instruments' }).getByText('Euribor 3M Dec26-Mar27').waitFor();
    await shot(page, T, '07-instruments-panel');

    await openPanel(page, 'Block Calculator');
    await page.getByTestId('band').filter({ hasText: '94.26 – 95.20' }).waitFor();
    assert.equal(await page.getByTestId('notional').textContent(), '198,933.00');
    await shot(page, T, '08-block-calculator');
    // A spread priced below zero, as Euribor calendars are (issue 28.20).
    await page.getByRole('textbox', { name: 'Average price' }).fill('-12.5');
    await page.getByTestId('band').filter({ hasText: '-12.56 – -12.44' }).waitFor();
    await shot(page, T, '08b-block-calculator-negative');
    // This server runs without FIX: its sessions page says so (issue 28.20).
    await openPanel(page, 'FIX sessions');
    await page.getByText(/^FIX is off on this node: no session can log on here\./).waitFor();
    await shot(page, T, '08c-fix-off');

    // A trader: no menu button, and 'No access' on admin routes.
    const tom = await createUserAsAdmin(server.baseUrl, { email: 'tom@upstairs.test' });
    const { link: tomLink } = await waitForMail(server.mailDir, 'tom@upstairs.test', { pathPrefix: '/account-activate' });
    await api(server.baseUrl, `/users/password-reset/${new URL(tomLink).searchParams.get('hash')}`, { method: 'POST', body: { password: 'Trader-Pass-2026' } });
    const tomToken = (await api(server.baseUrl, '/auth/login', { method: 'POST', body: { email: 'tom@upstairs.test', password: 'Trader-Pass-2026' } })).token;
    await api(server.baseUrl, `/users/${tom.user_id}`, { token: tomToken, method: 'PATCH', body: { auto_accept: 'INSTANT' } });
    const trader = await newPage(browser);
    try {
      await signIn(trader.page, server.baseUrl, 'tom@upstairs.test', 'Trader-Pass-2026');
      await trader.page.getByRole('heading', { name: 'Dashboard' }).waitFor();
      assert.equal(await trader.page.getByRole('button', { name: 'Open menu' }).count(), 0);
      for (const path of ['/admin/company', '/admin/user', '/admin/instrument']) {
        await trader.page.goto(`${server.baseUrl}${path}`);
        await trader.page.getByRole('heading', { name: 'No access' }).waitFor();
        assert.equal(await trader.page.getByRole('table').count(), 0, `${path} shows no data`);
      }
      await shot(trader.page, T, '09-trader-404');
      await assert.rejects(api(server.baseUrl, '/admin/companies?page=0&size=200', { token: tomToken }), /→ 403/);
      assert.deepEqual(trader.errors.map(String), []);
    } finally {
      await trader.context.close();
    }
    assert.deepEqual(errors.map(String), [], 'no uncaught errors in the page');
  } catch (e) {
    await shot(page, T, 'failure').catch(() => {});
    console.error(server.log().slice(-4000));
    throw e;
  } finally {
    await context.close();
    await server.stop();
  }
});

test('an admin reads the action log: pages, e-mail filter, sorting, details; a trader cannot', async () => {
  const server = await startServer();
  const { context, page, errors } = await newPage(browser);
  try {
    // Some history: companies, a trader created, activated and choosing a preference.
    const { token } = await api(server.baseUrl, '/auth/login', { method: 'POST', body: { ...ADMIN, rememberMe: false } });
    const northgate = await api(server.baseUrl, '/admin/companies', { token, method: 'POST', body: { name: 'Northgate', full_name: 'Northgate Clearing LLP', roles: ['broker'] } });
    const brokers = [{ company_id: northgate.company_id }];
    await api(server.baseUrl, '/admin/companies', { token, method: 'POST', body: { name: 'Halyard', full_name: 'Halyard Capital LLP', brokers, default_broker: brokers[0] } });
    const tom = await createUserAsAdmin(server.baseUrl, { email: 'tom@upstairs.test' });
    const { link } = await waitForMail(server.mailDir, 'tom@upstairs.test', { pathPrefix: '/account-activate' });
    await api(server.baseUrl, `/users/password-reset/${new URL(link).searchParams.get('hash')}`, { method: 'POST', body: { password: 'Trader-Pass-2026' } });
    const tomToken = (await api(server.baseUrl, '/auth/login', { method: 'POST', body: { email: 'tom@upstairs.test', password: 'Trader-Pass-2026' } })).token;
    await api(server.baseUrl, `/users/${tom.user_id}`, { token: tomToken, method: 'PATCH', body: { auto_accept: 'INSTANT' } });

    await signIn(page, server.baseUrl, ADMIN.email, ADMIN.password);
    await page.getByRole('heading', { name: 'Welcome to Upstairs' }).waitFor();
    await page.getByRole('radio', { name: /Instant/ }).check();
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    const toast = page.getByTestId('toast').filter({ hasText: 'Your preferences have been set successfully' });
    // Out of the way of the screenshots (it may have gone by itself already).
    await toast.getByRole('button', { name: 'Close' }).click({ timeout: 2_000 }).catch(() => {});
    await toast.waitFor({ state: 'hidden' });

    // Spec section 2: the drawer's entries in the spec's order, Action logs first in the Admin group.
    await page.getByRole('button', { name: 'Open menu' }).click();
    const nav = page.getByRole('navigation', { name: 'Main menu' });
    const links = await nav.getByRole('link').allTextContents();
    assert.deepEqual(links, [
      'Dashboard', 'Action logs', 'Billing', 'Companies panel', 'Users panel', 'Instruments panel', 'Exchanges', 'Orders panel', 'Orders newsletter', 'Block Calculator',
      'E-mail outbox', 'FIX sessions', 'Account Info',
    ]);
    await nav.getByRole('link', { name: 'Action logs' }).click();
    await page.getByRole('heading', { name: 'Action logs' }).waitFor();
    const table = page.getByRole('table', { name: 'Action logs' });
    const all = await api(server.baseUrl, '/admin/action-logs?size=500', { token });
    assert.ok(all.total_items > 10, `${all.total_items} rows`);
    await page.getByText(`1–${all.total_items} of ${all.total_items}`).waitFor();
    // Newest first: the admin's sign-in and preference are the latest rows.
    await table.getByRole('row').nth(1).filter({ hasText: 'update_preferences' }).waitFor();
    assert.equal(await table.getByRole('row').count(), all.total_items + 1);
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 1440, 'nothing overflows the window');
    await shot(page, T, '10-action-logs');

    // Server-side pages of 10.
    await page.getByRole('combobox', { name: /Rows per page/ }).click();
    await page.getByRole('option', { name: '10', exact: true }).click();
    await page.getByText(`1–10 of ${all.total_items}`).waitFor();
    await page.getByRole('button', { name: 'Go to next page' }).click();
    await page.getByText(`11–${Math.min(20, all.total_items)} of ${all.total_items}`).waitFor();
    // The label moves with the click; the rows once the second page has come.
    await until(async () => (await table.getByRole('row').count()) === Math.min(10, all.total_items - 10) + 1, { what: 'the second page' });

    // The e-mail filter (any case, part of it) goes back to the first page.
    await page.getByRole('textbox', { name: 'E-mail' }).fill('TOM@');
    await page.getByText('1–3 of 3').waitFor();
    const rows = table.getByRole('row');
    for (let i = 1; i < 4; i++) assert.match(await rows.nth(i).textContent(), /tom@upstairs\.test/);

    // Sorting by operation, A to Z.
    await page.getByRole('button', { name: 'Operation' }).click();
    await until(async () => (await page.getByRole('columnheader', { name: /Operation/ }).getAttribute('aria-sort')) === 'ascending', { what: 'sorted by operation' });
    await until(async () => (await rows.nth(1).textContent()).includes('login'), { what: 'login first' });
    assert.deepEqual(
      await Promise.all([1, 2, 3].map(async (i) => (await rows.nth(i).getByRole('cell').nth(3).textContent()))),
      ['login', 'password_set', 'update_preferences'],
    );
    await shot(page, T, '11-action-logs-filtered-sorted');

    // The details payload, by keyboard: focus, Enter, read, Escape.
    const details = rows.filter({ hasText: 'update_preferences' }).getByRole('button', { name: /^Details/ });
    await details.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'user · update_preferences' });
    await dialog.waitFor();
    const payload = await dialog.getByTestId('action-log-details').textContent();
    assert.equal(JSON.parse(payload).after.auto_accept, 'INSTANT');
    assert.equal(JSON.parse(payload).before.auto_accept, null);
    await dialog.getByText('tom@upstairs.test (Upstairs)').waitFor();
    await shot(page, T, '12-action-log-details');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await details.evaluate((el) => el === document.activeElement), true, 'focus is back on the button');

    // A trader: no menu, the 404 page on the route, 403 from the API.
    const trader = await newPage(browser);
    try {
      await signIn(trader.page, server.baseUrl, 'tom@upstairs.test', 'Trader-Pass-2026');
      await trader.page.getByRole('heading', { name: 'Dashboard' }).waitFor();
      await trader.page.goto(`${server.baseUrl}/admin/action-logs`);
      await trader.page.getByRole('heading', { name: 'No access' }).waitFor();
      assert.equal(await trader.page.getByRole('table').count(), 0);
      assert.equal(await trader.page.getByRole('button', { name: 'Open menu' }).count(), 0);
      await shot(trader.page, T, '13-trader-action-logs-404');
      await assert.rejects(api(server.baseUrl, '/admin/action-logs', { token: tomToken }), /→ 403/);
      assert.deepEqual(trader.errors.map(String), []);
    } finally {
      await trader.context.close();
    }
    assert.deepEqual(errors.map(String), [], 'no uncaught errors in the page');
  } catch (e) {
    await shot(page, T, 'action-logs-failure').catch(() => {});
    console.error(server.log().slice(-4000));
    throw e;
  } finally {
    await context.close();
    await server.stop();
  }
});

test("an admin schedules an instrument's tick size and minimum block ahead; they take effect at their time", async () => {
  const { server, clock, stop } = await frozenServer();
  const { context, page, errors } = await newPage(browser);
  try {
    const { token } = await api(server.baseUrl, '/auth/login', { method: 'POST', body: { ...ADMIN, rememberMe: false } });
    const created = await api(server.baseUrl, '/admin/instruments', {
      token,
      method: 'POST',
      body: { name: 'Euribor 3M Dec26-Mar27', term: 'Dec26-Mar27', min_quantity: 500, tick_size: 0.005, exchange_id: 'I', currency: 'EUR', min_tick_price: -0.04, max_tick_price: -0.015 },
    });
    await signIn(page, server.baseUrl, ADMIN.email, ADMIN.password);
    await page.getByRole('heading', { name: 'Welcome to Upstairs' }).waitFor();
    await page.getByRole('radio', { name: /Instant/ }).check();
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await openPanel(page, 'Instruments panel');
    await page.getByRole('table', { name: 'Instruments' }).getByText('Euribor 3M Dec26-Mar27').waitFor();

    // The history: the settings it was made with, in force.
    await page.getByRole('button', { name: 'Settings of Euribor 3M Dec26-Mar27' }).click();
    const dialog = page.getByRole('dialog', { name: 'Settings of Euribor 3M Dec26-Mar27' });
    const history = dialog.getByRole('table', { name: 'Settings history' });
    const rows = async () => (await history.getByRole('row').all()).slice(1);
    const cells = async () => Promise.all((await rows()).map(async (r) => (await r.getByRole('cell').allTextContents()).slice(1, 5)));
    await history.getByRole('cell', { name: 'In force' }).waitFor();
    assert.deepEqual(await cells(), [['0.005', '—', '500', 'In force']]);

    // An hour ahead (the venue's clock, in the browser's local time): 0.0025 and a block of 1,000.
    const when = await page.evaluate((ms) => {
      const d = new Date(ms);
      const pad = (n) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
    }, clock.now() + 3_600_000);
    const form = dialog.getByRole('form', { name: 'Schedule a change' });
    await form.getByLabel('Effective from').fill(when);
    await form.getByRole('textbox', { name: 'Tick size', exact: true }).fill('0.0025');
    await form.getByRole('textbox', { name: 'Minimum block' }).fill('1000');
    await form.getByRole('button', { name: 'Schedule' }).click();
    await dialog.getByRole('status').filter({ hasText: /^Change scheduled for \d\d\/\d\d\/\d{4} \d\d:\d\d\.$/ }).waitFor();
    await history.getByRole('cell', { name: 'Scheduled' }).waitFor();
    assert.deepEqual(await cells(), [['0.0025', '—', '1000', 'Scheduled'], ['0.005', '—', '500', 'In force']]);
    await shot(page, T, '20-settings-scheduled');
    let [instrument] = await api(server.baseUrl, '/instruments', { token });
    assert.deepEqual([instrument.tick_size, instrument.min_quantity], [0.005, 500]);

    // The hour passes on the venue's clock: in force by itself.
    await clock.move(3_700);
    await until(async () => {
      [instrument] = await api(server.baseUrl, '/instruments', { token });
      return instrument.tick_size === 0.0025 && instrument.min_quantity === 1000;
    }, { timeoutMs: 20_000, what: 'the scheduled settings in force' });
    await dialog.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('button', { name: 'Settings of Euribor 3M Dec26-Mar27' }).click();
    await history.getByRole('cell', { name: 'Superseded' }).waitFor();
    assert.deepEqual(await cells(), [['0.0025', '—', '1000', 'In force'], ['0.005', '—', '500', 'Superseded']]);
    // The form starts from the version now in force.
    await until(async () => (await form.getByRole('textbox', { name: 'Tick size', exact: true }).inputValue()) === '0.0025', { what: 'the form from the settings in force' });
    assert.equal(await form.getByRole('textbox', { name: 'Minimum block' }).inputValue(), '1000');
    await shot(page, T, '21-settings-in-force');
    assert.equal(created.instrument_id, instrument.instrument_id);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    await stop();
  }
});
