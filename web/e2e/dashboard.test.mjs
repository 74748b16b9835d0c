// Issue 28, the dashboard. Point 13: creating a parent order says so, and its card comes
// into view (first, newest first, and scrolled to) even when the list is longer than its
// 470 px and scrolled elsewhere.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN, api, failedCalls, launchBrowser, newPage, seedTwoFirms, shot, signIn, startServer, TRADER_PASSWORD, typeDate, until, TIPS } from './harness.mjs';

const T = 'dashboard';

let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

test('a new parent order is confirmed and its card brought into view', async () => {
  const server = await startServer({ env: { UPSTAIRS_ALWAYS_OPEN: 'true' } });
  const { page } = await newPage(browser, { width: 1280, height: 800 });
  const failed = failedCalls(page);
  try {
    const { instrument, traders } = await seedTwoFirms(server, { tips: TIPS });
    // Six sell parents already: more cards than the list's height shows.
    for (let n = 1; n <= 6; n++) {
      await api(server.baseUrl, '/parent-orders', {
        token: traders.Anna.token, method: 'POST', body: { direction: 'SELL', instrument_id: instrument.instrument_id, quantity: 1000 * n },
      });
    }
    await signIn(page, server.baseUrl, traders.Anna.email, TRADER_PASSWORD);
    const list = page.getByRole('list', { name: 'Parent orders' });
    await list.getByRole('listitem', { name: `Sell ${instrument.name}` }).first().waitFor();
    // The trader has scrolled the list to its end.
    await list.evaluate((el) => el.scrollTo(0, el.scrollHeight));

    await page.getByRole('button', { name: 'Add parent order' }).click();
    const create = page.locator('form', { has: page.getByRole('heading', { name: 'Create Parent order' }) });
    await create.getByRole('button', { name: 'Buy' }).click();
    await create.getByRole('combobox', { name: 'Instrument' }).fill('euribor');
    await page.getByRole('option', { name: /Euribor 3M Dec26-Mar27/ }).click();
    await create.getByRole('textbox', { name: 'Quantity' }).fill('7500');
    await create.getByRole('button', { name: 'Create parent order' }).click();

    await page.getByText('Parent order created').waitFor();
    await page.getByText(`Buy 7,500 ${instrument.name}: work it from its order book.`).waitFor();
    const card = list.getByRole('listitem', { name: `Buy ${instrument.name}` });
    await card.waitFor();
    assert.equal(await list.getByRole('listitem').first().getAttribute('aria-label'), `Buy ${instrument.name}`, 'newest first');
    assert.equal(await card.getAttribute('data-created'), 'true');
    // Wholly inside the list's visible part once the scroll settles.
    await until(
      async () => {
        const [c, l] = [await card.boundingBox(), await list.boundingBox()];
        return c !== null && l !== null && c.y >= l.y - 1 && c.y + c.height <= l.y + l.height + 1;
      },
      { timeoutMs: 5_000, what: 'the new card in view' },
    );
    // The card names its contract whole, so two contracts can be told apart (issue 28.12).
    const title = card.getByRole('button', { name: `Show the order book of ${instrument.name}` });
    assert.equal(await title.textContent(), instrument.name);
    for (const width of [1280, 1440, 1920]) {
      await page.setViewportSize({ width, height: 800 });
      assert.ok(await title.evaluate((el) => el.scrollWidth <= el.clientWidth), `the name is not cut at ${width}`);
      await shot(page, T, `01-parent-created-${width}`);
    }
    assert.deepEqual(failed, []);
  } finally {
    await page.context().close();
    await server.stop();
  }
});

// Issue 28.12: a fifth instrument's book does not fit; the dashboard says so and how to
// show it, instead of dropping it in silence.
test("a fifth instrument's book is said not to fit, and its card brings it in", async () => {
  const server = await startServer({ env: { UPSTAIRS_ALWAYS_OPEN: 'true' } });
  const { page } = await newPage(browser, { width: 1440, height: 900 });
  const failed = failedCalls(page);
  try {
    const { admin, instrument, traders } = await seedTwoFirms(server, { tips: TIPS });
    const instruments = [instrument];
    for (const name of ['SONIA 3M Mar27-Jun27', 'Euro-Bund Dec26-Mar27', 'Brent Crude Dec26-Jun27', 'Euro Stoxx 50 Dec26']) {
      instruments.push(await api(server.baseUrl, '/admin/instruments', {
        token: admin, method: 'POST',
        body: { name, term: 'Dec26', min_quantity: 100, tick_size: 0.01, min_tick_price: 1.1, max_tick_price: 1.2, exchange_id: 'I', currency: 'EUR' },
      }));
    }
    for (const i of instruments) {
      await api(server.baseUrl, '/parent-orders', { token: traders.Anna.token, method: 'POST', body: { direction: 'BUY', instrument_id: i.instrument_id, quantity: 1000 } });
    }
    await signIn(page, server.baseUrl, traders.Anna.email, TRADER_PASSWORD);
    const books = page.getByRole('region', { name: /^Order book / });
    await until(async () => (await books.count()) === 4, { what: 'four books' });
    const note = page.getByTestId('hidden-books');
    await note.getByText('One more instrument has parent orders: 4 books show at once.', { exact: false }).waitFor();
    // The oldest parent's instrument is the one left out; its card's name brings its book in.
    assert.equal(await page.getByRole('region', { name: `Order book ${instrument.name}` }).count(), 0);
    for (const width of [1280, 1440, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      await books.nth(3).getByTestId('ladder-row').first().waitFor();
      // Side by side, the ladders start level however the names wrap (issue 28.12), and
      // their 15 rows (a 10-tick band) show whole, with no cue of rows out of view (28.11).
      const ladders = await books.getByTestId('price-ladder').evaluateAll((els) =>
        els.map((l) => {
          const box = l.getBoundingClientRect();
          const last = [...l.querySelectorAll('[data-testid="ladder-row"]')].at(-1).getBoundingClientRect();
          return { top: Math.round(box.top), rows: l.querySelectorAll('[data-testid="ladder-row"]').length, whole: last.bottom <= box.bottom + 0.5 };
        }),
      );
      assert.equal(new Set(ladders.map((l) => l.top)).size, 1, `level at ${width}: ${JSON.stringify(ladders)}`);
      assert.ok(ladders.every((l) => l.rows === 15 && l.whole), `whole at ${width}: ${JSON.stringify(ladders)}`);
      assert.equal(await page.locator('[data-testid^="ladder-more-"]').count(), 0);
      // The books take the width beside the parent list, up to the page's edge (28.12:
      // no half-empty screen at 1920 px).
      const [list, last, note] = [await page.getByRole('list', { name: 'Parent orders' }).boundingBox(), await books.nth(3).boundingBox(), await page.getByTestId('hidden-books').boundingBox()];
      assert.ok(last.x + last.width >= note.x + note.width - 1, `the fourth book ends at the row's end at ${width}`);
      const span = (last.x + last.width - list.x) / width;
      assert.ok(span >= 0.75, `the parent list and books span ${span.toFixed(2)} of the ${width} px window`);
      await shot(page, T, `03-fifth-book-${width}`);
    }
    await page.getByRole('button', { name: `Show the order book of ${instrument.name}` }).click();
    await page.getByRole('region', { name: `Order book ${instrument.name}` }).waitFor();
    assert.equal(await books.count(), 4);
    await note.waitFor();
    assert.deepEqual(failed, []);
  } finally {
    await page.context().close();
    await server.stop();
  }
});

test('a closed venue names its holiday and its next opening', async () => {
  // Today, in the venue's time zone, is a holiday with a name.
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/London', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
  const server = await startServer({ env: { UPSTAIRS_HOLIDAYS: `${today}=Venue Test Day` } });
  const { page } = await newPage(browser);
  const failed = failedCalls(page);
  try {
    const { traders } = await seedTwoFirms(server, { tips: TIPS });
    const status = await api(server.baseUrl, '/platform/status', { token: traders.Anna.token });
    assert.deepEqual(status.holiday, { date: today, name: 'Venue Test Day' });
    await signIn(page, server.baseUrl, traders.Anna.email, TRADER_PASSWORD);
    const closed = page.getByRole('status').filter({ hasText: 'Upstairs is closed' });
    await closed.getByText(/^Closed today for Venue Test Day\. It opens again (tomorrow|on \w+day \d+ \w+) at 9:00 AM UK time\.$/).waitFor();
    await closed.getByText('Operating hours are 9:00 AM to 5:00 PM (UK time, Monday to Friday only).').waitFor();
    for (const width of [1280, 1440, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      await shot(page, T, `02-closed-for-a-holiday-${width}`);
    }
    assert.deepEqual(failed, []);
  } finally {
    await page.context().close();
    await server.stop();
  }
});

test("an exchange's calendar kept in the admin screen closes its instruments' book for its holiday, at once", async () => {
  const server = await startServer();
  const admin = await newPage(browser);
  const trader = await newPage(browser);
  const failed = failedCalls(trader.page);
  try {
    const { traders, instrument, admin: token } = await seedTwoFirms(server, { tips: TIPS });
    // The instrument is on Eurex (its MIC).
    await api(server.baseUrl, `/admin/instruments/${instrument.instrument_id}`, { token, method: 'PATCH', body: { exchange_iso_code: 'XEUR' } });
    // Today in Berlin, as the picker takes it (DD/MM/YYYY).
    const [y, m, d] = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date()).split('-');
    // Eurex closes at 23:59 Berlin time: in the quarter of an hour before, each page would
    // open on its 'Eurex closes soon' warning. Both have seen today's already.
    for (const { page } of [admin, trader]) {
      await page.addInitScript((day) => localStorage.setItem('upstairs.closing-warning.XEUR', day), `${y}-${m}-${d}`);
    }

    // The admin adds Eurex, trading every day around the clock (whatever the venue's own hours now).
    const { page } = admin;
    await page.goto(`${server.baseUrl}/login`);
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Welcome to Upstairs' }).waitFor();
    await page.getByRole('radio', { name: /Instant/ }).check();
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await page.getByRole('button', { name: 'Open menu' }).click();
    await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: 'Exchanges' }).click();
    await page.getByText("No exchanges yet: every instrument trades on the venue's hours.").waitFor();
    await page.getByRole('button', { name: 'Add exchange' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add exchange' });
    await dialog.getByLabel('MIC').fill('xeur');
    await dialog.getByLabel('Name').fill('Eurex');
    await dialog.getByLabel('Time zone').fill('Europe/Berlin');
    await dialog.getByLabel('Opens').fill('00:00');
    await dialog.getByLabel('Closes').fill('23:59');
    await dialog.getByLabel('Parent orders from').fill('00:00');
    for (const day of ['Sat', 'Sun']) await dialog.getByRole('checkbox', { name: day }).check();
    await dialog.getByRole('button', { name: 'Add exchange' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const row = page.getByRole('table', { name: 'Exchanges' }).getByRole('row').filter({ hasText: 'XEUR' });
    await row.getByText('Open', { exact: true }).waitFor();
    await row.getByRole('cell', { name: '1', exact: true }).waitFor();

    // Anna works the instrument: Eurex is open, her book of it shows its ladder.
    await api(server.baseUrl, '/parent-orders', { token: traders.Anna.token, method: 'POST', body: { direction: 'BUY', instrument_id: instrument.instrument_id, quantity: 1000 } });
    await signIn(trader.page, server.baseUrl, traders.Anna.email, TRADER_PASSWORD);
    const book = trader.page.getByRole('region', { name: `Order book ${instrument.name}` });
    await book.getByTestId('ladder-row').first().waitFor();
    await trader.page.getByTestId('trading-hours-XEUR').getByText(/XEUR/).waitFor();

    // The admin makes today a Eurex holiday: the book says Eurex is closed, why, and when
    // it opens, from the trader's next look at the status.
    await row.getByRole('button', { name: 'Edit XEUR' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit XEUR' });
    await edit.getByRole('button', { name: 'Add holiday' }).click();
    await typeDate(page, 'Holiday 1 date', `${d}/${m}/${y}`);
    await edit.getByLabel('Holiday 1 name').fill('Eurex Test Day');
    await shot(page, T, '10-exchange-holiday');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.waitFor({ state: 'hidden' });
    await row.getByText('Closed for Eurex Test Day').waitFor();
    await shot(page, T, '11-exchanges');
    const closed = trader.page.getByRole('status').filter({ hasText: 'Eurex is closed' });
    await closed.getByText(/^Closed today for Eurex Test Day\. It opens again tomorrow at 12:00 AM Europe\/Berlin time\.$/).waitFor({ timeout: 40_000 });
    await shot(trader.page, T, '12-exchange-closed-for-a-holiday');
    const status = await api(server.baseUrl, '/platform/status', { token: traders.Anna.token });
    assert.deepEqual(status.exchanges.map((x) => [x.mic, x.open, x.holiday?.name]), [['XEUR', false, 'Eurex Test Day']]);
    const refused = await fetch(`${server.baseUrl}/api/parent-orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${traders.Anna.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ direction: 'BUY', instrument_id: instrument.instrument_id, quantity: 500 }),
    });
    assert.equal(refused.status, 409);
    assert.match((await refused.json()).detail, /^Eurex is closed today for Eurex Test Day\. It opens again tomorrow at 00:00 Europe\/Berlin time\.$/);

    // The holiday taken out, the book opens again by itself.
    await row.getByRole('button', { name: 'Edit XEUR' }).click();
    await edit.getByRole('button', { name: 'Remove holiday 1' }).click();
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.waitFor({ state: 'hidden' });
    await row.getByText('Open', { exact: true }).waitFor();
    await closed.waitFor({ state: 'hidden', timeout: 40_000 });
    await shot(trader.page, T, '13-exchange-open-again');
    assert.deepEqual(failed, []);
  } finally {
    await admin.context.close();
    await trader.context.close();
    await server.stop();
  }
});
