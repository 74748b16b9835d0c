// Allocations and give-ups (ADR 0045) on the demo venue in Chromium: the venue admin opens
// an account for Halyard in the Companies panel; Halyard's trader takes Kestrel's offer, then
// splits the trade across two of the firm's accounts and gives it up to Baltic (the trade
// went through Northgate); the admin reads the split and the give-up in Billing. Kestrel,
// the other side, can read neither Halyard's allocation nor its accounts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { api, failedCalls, launchBrowser, login, newPage, shot, signIn, startServer, TIPS, until } from './harness.mjs';

const T = 'allocations';
const PASSWORD = 'Upstairs-Demo-1';
const ADMIN = 'admin@upstairs.demo';
const HALYARD = 'trader1@halyard.demo';
const KESTREL = 'trader1@kestrel.demo';
const EURIBOR = 'Euribor 3M Dec26-Mar27';

let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

/** The status of a GET as `token`, whatever it is. */
async function status(baseUrl, path, token) {
  const res = await fetch(`${baseUrl}/api${path}`, { headers: { Authorization: `Bearer ${token}` } });
  await res.body?.cancel();
  return res.status;
}

/**
 * Halyard's trader takes Kestrel's resting Euribor offer (1,500) with the firm's default
 * broker; Kestrel's preference (Instant) accepts at once. The demo's band moves: a take
 * refused because it moved since the book was read (409) is tried again.
 */
async function takeKestrelsOffer(baseUrl, token) {
  const me = await api(baseUrl, '/users/me', { token });
  const company = await api(baseUrl, `/companies/${me.company_id}`, { token });
  const instrument = (await api(baseUrl, `/instruments?name=${encodeURIComponent(EURIBOR)}`, { token })).find((i) => i.name === EURIBOR);
  const parent = (await api(baseUrl, '/parent-orders?state=ACTIVE', { token })).find((p) => p.instrument_id === instrument.instrument_id && p.direction === 'BUY');
  await until(
    async () => {
      const book = await api(baseUrl, `/instruments/${instrument.instrument_id}/book`, { token });
      const level = book.levels.find((l) => l.sell_quantity > 0 && l.price >= book.min_tick_price && l.price <= book.max_tick_price);
      if (!level) return false;
      const body = {
        requesting_parent_order_id: parent.parent_order_id, price: level.price, quantity: Math.min(level.sell_quantity, parent.quantities.tradable),
        requesting_broker_id: company.default_broker.company_id, dry_run: false,
      };
      const sent = await api(baseUrl, '/order-match-requests', { token, method: 'POST', body }).catch((e) => (/→ 409/.test(e.message) ? [] : Promise.reject(e)));
      return sent.length > 0;
    },
    { timeoutMs: 30_000, intervalMs: 250, what: "a take of Kestrel's Euribor offer" },
  );
  const order = await until(
    async () => (await api(baseUrl, `/orders?parent_order_id=${parent.parent_order_id}`, { token })).find((o) => o.state === 'MATCHED'),
    { what: "Halyard's side of the trade to be matched" },
  );
  return { me, company, order };
}

test('a trader splits a trade across accounts with a give-up broker; the admin opens accounts and bills it; the other firm sees none of it', async () => {
  const server = await startServer({ demo: true });
  const ops = await newPage(browser);
  const trader = await newPage(browser);
  const opsFailed = failedCalls(ops.page);
  const traderFailed = failedCalls(trader.page);
  let desk;
  try {
    const { baseUrl } = server;
    // The venue admin: a new account for Halyard, beside the demo's three.
    await signIn(ops.page, baseUrl, ADMIN, PASSWORD);
    await ops.page.goto(`${baseUrl}/admin/company`);
    const companies = ops.page.getByRole('table', { name: 'Companies' });
    await companies.getByRole('button', { name: 'Accounts of Halyard' }).waitFor();
    // The accounts button beside each company's actions still fits the window.
    assert.equal(await ops.page.evaluate(() => document.documentElement.scrollWidth), 1440, 'nothing overflows the window');
    await shot(ops.page, T, '00-companies-panel');
    await companies.getByRole('button', { name: 'Accounts of Halyard' }).click();
    const accounts = ops.page.getByRole('dialog', { name: "Halyard's accounts" });
    const accountRows = accounts.getByRole('table', { name: 'Accounts of Halyard' }).getByRole('row');
    await accountRows.filter({ hasText: 'HAL-PROP' }).waitFor();
    assert.equal(await accountRows.count(), 4, 'a header and the demo’s three accounts');
    await accounts.getByRole('button', { name: 'Add account' }).click();
    const add = accounts.getByRole('form', { name: 'Add account' });
    await add.getByRole('textbox', { name: 'Code' }).fill('HAL-CLIENT');
    await add.getByRole('textbox', { name: 'Name' }).fill('Halyard client facilitation');
    await shot(ops.page, T, '01-admin-add-account');
    await add.getByRole('button', { name: 'Add account' }).click();
    await ops.page.getByText('HAL-CLIENT added to Halyard.').waitFor();
    await accountRows.filter({ hasText: 'HAL-CLIENT' }).filter({ hasText: 'Open' }).waitFor();
    await shot(ops.page, T, '02-admin-accounts');
    await accounts.getByRole('button', { name: 'Done' }).click();

    // A trade between Halyard and Kestrel, made through the API.
    const hal = await login(baseUrl, HALYARD, PASSWORD);
    const { me, company, order } = await takeKestrelsOffer(baseUrl, hal);
    assert.equal(company.default_broker.name, 'Northgate');
    assert.deepEqual(company.brokers.map((b) => b.name).sort(), ['Baltic', 'Northgate']);
    await api(baseUrl, `/users/${me.user_id}`, { token: hal, method: 'PATCH', body: { ui_metadata: [{ key: 'TOOLTIPS', value: TIPS.map((key) => ({ key, read: true })) }] } });

    // Halyard's trader: Allocate on the matched order.
    await signIn(trader.page, baseUrl, HALYARD, PASSWORD);
    // The notice of the trade opens by itself and lies over the cards: closed first.
    await trader.page.getByRole('dialog', { name: 'Match request accepted' }).getByRole('button', { name: 'Close' }).click();
    const card = trader.page.getByRole('listitem', { name: `Buy ${EURIBOR}` });
    const allocate = card.getByRole('button', { name: /^Allocate 1,500 @ / });
    await allocate.click();
    const dialog = trader.page.getByRole('dialog', { name: 'Allocate trade' });
    await dialog.getByText(/^Bought 1,500 Euribor 3M Dec26-Mar27 at .*, executed by Northgate\./).waitFor();
    const line = (n) => dialog.getByRole('group', { name: `Account line ${n}` });
    // The firm's open accounts, the one the admin just opened among them.
    await line(1).getByRole('combobox', { name: 'Account' }).click();
    const options = await trader.page.getByRole('listbox').getByRole('option').allTextContents();
    assert.deepEqual(options.sort(), [
      'HAL-CLIENT — Halyard client facilitation', 'HAL-MACRO — Halyard Global Macro Fund', 'HAL-PROP — Halyard proprietary book',
      'HAL-RATES — Halyard Rates Opportunities',
    ]);
    await trader.page.getByRole('option', { name: 'HAL-MACRO — Halyard Global Macro Fund' }).click();
    await line(1).getByRole('textbox', { name: 'Quantity' }).fill('1000');
    await dialog.getByText("The quantities add up to 1000, not the trade's 1500").waitFor();
    await dialog.getByRole('button', { name: 'Add account' }).click();
    assert.equal(await line(2).getByRole('textbox', { name: 'Quantity' }).inputValue(), '500', 'the second line starts with what is left');
    await line(2).getByRole('combobox', { name: 'Account' }).click();
    await trader.page.getByRole('option', { name: 'HAL-RATES — Halyard Rates Opportunities' }).click();
    // Given up to Baltic: Northgate, which executed it, is no choice.
    await dialog.getByRole('combobox', { name: 'Give-up broker' }).click();
    assert.deepEqual(await trader.page.getByRole('listbox').getByRole('option').allTextContents(), ['None', 'Baltic']);
    await trader.page.getByRole('option', { name: 'Baltic' }).click();
    await dialog.getByRole('status').filter({ hasText: 'Allocated 1,500 of 1,500' }).waitFor();
    await shot(trader.page, T, '03-allocate-dialog');
    // The same trader's second screen, open before the save: the allocation reaches it pushed.
    desk = await newPage(browser);
    // (The trade's notice was read on the first screen: it does not open here.)
    await signIn(desk.page, baseUrl, HALYARD, PASSWORD);
    const deskCard = desk.page.getByRole('listitem', { name: `Buy ${EURIBOR}` });
    await deskCard.getByRole('button', { name: /^Allocate 1,500 @ / }).waitFor();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await trader.page.getByText('Allocation saved.').waitFor();
    await dialog.waitFor({ state: 'detached' });
    const summary = card.getByTestId('allocation-summary');
    await summary.filter({ hasText: 'v1 · HAL-MACRO 1,000; HAL-RATES 500 · Give-up: Baltic · Sent to broker' }).waitFor();
    await card.getByRole('button', { name: /^Allocation 1,500 @ / }).waitFor();
    await shot(trader.page, T, '04-trader-allocated-1440');
    await deskCard.getByTestId('allocation-summary').filter({ hasText: 'v1 · HAL-MACRO 1,000; HAL-RATES 500 · Give-up: Baltic · Sent to broker' }).waitFor();
    await deskCard.getByRole('button', { name: /^Allocation 1,500 @ / }).scrollIntoViewIfNeeded();
    await shot(desk.page, T, '04b-second-screen-pushed');
    // Read again, the card still says it is allocated, before any dialog opens.
    await trader.page.reload();
    await summary.filter({ hasText: 'v1 · HAL-MACRO 1,000; HAL-RATES 500 · Give-up: Baltic · Sent to broker' }).waitFor();
    await card.getByRole('button', { name: /^Allocation 1,500 @ / }).waitFor();

    const allocation = await api(baseUrl, `/orders/${order.order_id}/allocation`, { token: hal });
    assert.equal(allocation.version, 1);
    assert.deepEqual(allocation.lines.map((l) => [l.code, l.quantity]), [['HAL-MACRO', 1000], ['HAL-RATES', 500]]);
    assert.equal(allocation.give_up_broker?.name, 'Baltic');

    // Reopened, it shows the version and the broker's answer.
    await card.getByRole('button', { name: /^Allocation 1,500 @ / }).click();
    await dialog.getByTestId('allocation-status').filter({ hasText: 'Version 1: Sent to broker' }).waitFor();
    await shot(trader.page, T, '05-allocation-reopened');
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    // Kestrel, the other side: neither Halyard's allocation nor its accounts.
    const kes = await login(baseUrl, KESTREL, PASSWORD);
    assert.equal(await status(baseUrl, `/orders/${order.order_id}/allocation`, kes), 404);
    assert.equal(await status(baseUrl, `/companies/${me.company_id}/accounts`, kes), 404);
    const kesMe = await api(baseUrl, '/users/me', { token: kes });
    const own = await api(baseUrl, `/companies/${kesMe.company_id}/accounts`, { token: kes });
    assert.deepEqual(own.map((a) => a.code).sort(), ['KES-CLIENT', 'KES-MAIN']);

    // The admin's Billing: Halyard's side with its split and give-up; Kestrel's side with none.
    await ops.page.goto(`${baseUrl}/admin/billing`);
    const grid = ops.page.getByRole('grid', { name: 'Billing' });
    const halyardRow = grid.getByRole('row').filter({ hasText: 'HAL-MACRO 1,000; HAL-RATES 500' });
    await halyardRow.waitFor();
    assert.equal(await grid.locator('[data-rowindex]').count(), 2, 'both sides of the trade');
    assert.match(await halyardRow.locator('[data-field="company_name"]').textContent(), /^Halyard$/);
    const kestrelRow = grid.locator('[data-rowindex]').filter({ hasText: 'Kestrel' });
    assert.equal(await kestrelRow.locator('[data-field="allocations"]').textContent(), '');
    await shot(ops.page, T, '06-billing-allocations');
    // The give-up broker's column, further right.
    await grid.locator('.MuiDataGrid-virtualScroller').evaluate((el) => {
      el.scrollLeft = 600;
    });
    await until(async () => (await halyardRow.locator('[data-field="give_up_broker_name"]').textContent().catch(() => null)) === 'Baltic', {
      what: "Halyard's give-up broker in Billing",
    });
    await shot(ops.page, T, '07-billing-give-up');
    // The CSV: the split with plain quantities (one quoted field: it holds the delimiter), then the give-up.
    const [download] = await Promise.all([ops.page.waitForEvent('download'), ops.page.getByRole('button', { name: 'Export CSV' }).click()]);
    const csv = readFileSync(await download.path(), 'utf8').split(/\r?\n/);
    assert.match(csv[0], /;Quantity;Price;Allocations;Give-up broker$/);
    assert.ok(csv.some((l) => l.startsWith('Halyard;') && l.endsWith(';"HAL-MACRO 1000; HAL-RATES 500";Baltic')), csv.join('\n'));
    assert.ok(csv.some((l) => l.startsWith('Kestrel;') && l.endsWith(';;')), csv.join('\n'));
    const billing = (await api(baseUrl, '/billing', { token: await login(baseUrl, ADMIN, PASSWORD) })).items;
    const halyardItem = billing.find((b) => b.company_name === 'Halyard');
    assert.equal(halyardItem.give_up_broker_name, 'Baltic');
    assert.deepEqual(halyardItem.allocations.map((l) => l.code), ['HAL-MACRO', 'HAL-RATES']);

    // No failed call: a trade not allocated yet is simply not in the trader's allocations.
    assert.deepEqual(opsFailed, []);
    assert.deepEqual(traderFailed, []);
    assert.deepEqual([...ops.errors, ...trader.errors, ...desk.errors].map(String), []);
  } catch (e) {
    console.error(server.log().slice(-4000));
    throw e;
  } finally {
    await ops.context.close();
    await trader.context.close();
    await desk?.context.close();
    await server.stop();
  }
});
