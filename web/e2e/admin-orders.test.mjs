// The Orders panel and Billing on the demo venue in Chromium: the demo admin filters
// every order, corrects a working order's limit price on the tick (refused off it), and
// exports billing as CSV, compared row by row with GET /api/billing; the demo sales user
// reads both and edits nothing.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { api, failedCalls, launchBrowser, login, newPage, shot, signIn, startServer, typeDate, until, TIPS } from './harness.mjs';

const T = 'admin-orders';
const PASSWORD = 'Upstairs-Demo-1';
const ADMIN = 'admin@upstairs.demo';
const SALES = 'sales@upstairs.demo';

let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

// ----- exact decimals on the JSON numbers' shortest text (no float arithmetic) -----

const scaleOf = (n) => (String(n).split('.')[1] ?? '').length;
function units(n, scale) {
  const s = String(n);
  const negative = s.startsWith('-');
  const [whole, frac = ''] = s.replace('-', '').split('.');
  const u = BigInt(whole + frac.padEnd(scale, '0'));
  return negative ? -u : u;
}
function decimalText(u, scale) {
  const negative = u < 0n;
  const digits = (negative ? -u : u).toString().padStart(scale + 1, '0');
  const text = scale ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}`.replace(/\.?0+$/, '') : digits;
  return `${negative ? '-' : ''}${text}`;
}
/** `price + ticks × tick`, exactly, as plain text. */
function addTicks(price, tick, ticks) {
  const scale = Math.max(scaleOf(price), scaleOf(tick));
  return decimalText(units(price, scale) + BigInt(ticks) * units(tick, scale), scale);
}

/** RFC 4180 CSV with the given delimiter. */
function parseCsv(text, delimiter) {
  const rows = [];
  let row = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === delimiter) {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length) rows.push([...row, field]);
  return rows;
}

const pad = (n) => String(n).padStart(2, '0');
const utc = (iso) => {
  const d = new Date(iso);
  return `${pad(d.getUTCDate())}/${pad(d.getUTCMonth() + 1)}/${d.getUTCFullYear()} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
};

/** The billing item's fields in the order of admin spec section 3: the CSV's columns. */
const BILLING_HEADERS = [
  'Company', 'First name', 'Last name', 'User ID', 'Broker', 'Broker ID', 'Match request ID', 'Order ID', 'Payment order ID', 'Match request created',
  'Instrument', 'BBG code', 'Exchange instrument ID', 'Exchange', 'Exchange ISO code', 'Tick size', 'Term', 'Direction', 'Quantity', 'Price',
  'Allocations', 'Give-up broker',
];
/** What the grid shows first (issue 28.19): the trade; the ids are hidden until asked for. */
const BILLING_SHOWN_FIRST = ['Match request created', 'Company', 'Instrument', 'Direction', 'Quantity', 'Price'];

/** A billing item as the grid exports it: text as sent, the time as UTC, decimals exact. */
const csvRow = (b) => [
  b.company_name, b.first_name, b.last_name, b.user_id, b.broker_name, b.broker_id, b.match_request_id, b.order_id, b.payment_order_id,
  utc(b.match_request_created_at), b.instrument_name, b.bbg_code ?? '', b.exchange_instrument_id ?? '', b.exchange, b.exchange_iso_code,
  String(b.tick_size), b.term, b.direction, String(b.quantity), String(b.price),
  b.allocations.map((l) => `${l.code} ${l.quantity}`).join('; '), b.give_up_broker_name ?? '',
];

/**
 * Halyard's trader takes Kestrel's resting offers inside the moving band until `trades` matches
 * exist (Kestrel's preference, Instant, accepts at once): billing then has both sides of each.
 */
async function trade(baseUrl, trades) {
  const token = await login(baseUrl, 'trader1@halyard.demo', PASSWORD);
  const me = await api(baseUrl, '/users/me', { token });
  const company = await api(baseUrl, `/companies/${me.company_id}`, { token });
  let done = 0;
  await until(
    async () => {
      for (const p of await api(baseUrl, '/parent-orders?state=ACTIVE,FILLED', { token })) {
        if (done >= trades) break;
        if (p.direction !== 'BUY' || p.quantities.tradable <= 0) continue;
        const book = await api(baseUrl, `/instruments/${p.instrument_id}/book`, { token });
        const level = book.levels.find((l) => l.sell_quantity > 0 && l.price >= book.min_tick_price && l.price <= book.max_tick_price);
        if (!level) continue;
        const body = {
          price: level.price, quantity: Math.min(level.sell_quantity, p.quantities.tradable), requesting_broker_id: company.default_broker.company_id,
          requesting_parent_order_id: p.parent_order_id, dry_run: false,
        };
        // The band may have moved since the book was read: then nothing matches (409), try again.
        const sent = await api(baseUrl, '/order-match-requests', { token, method: 'POST', body }).catch((e) => (/→ 409/.test(e.message) ? [] : Promise.reject(e)));
        done += sent.length > 0 ? 1 : 0;
      }
      return done >= trades;
    },
    { timeoutMs: 60_000, intervalMs: 500, what: `${trades} trades in the demo's moving bands` },
  );
}

/** The page's success toast must leave its primary actions (Refresh) visible. */
async function assertToastClearOf(page, text, button) {
  const toast = page.getByTestId('toast').filter({ hasText: text });
  await toast.waitFor();
  const a = await toast.boundingBox();
  const b = await page.getByRole('main').getByRole('button', { name: button }).boundingBox();
  assert.ok(a && b, 'toast and button are on screen');
  const overlap = a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  assert.equal(overlap, false, `the toast ${JSON.stringify(a)} covers '${button}' ${JSON.stringify(b)}`);
}

async function openPanel(page, name) {
  await page.getByRole('button', { name: 'Open menu' }).click();
  await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name, exact: true }).click();
}

test('the demo admin filters orders, corrects a limit price on the tick and exports billing; sales read both', async () => {
  const server = await startServer({ demo: true });
  const { context, page, errors } = await newPage(browser);
  const failed = failedCalls(page);
  try {
    await trade(server.baseUrl, 2);
    const token = await login(server.baseUrl, ADMIN, PASSWORD);

    await signIn(page, server.baseUrl, ADMIN, PASSWORD);
    await openPanel(page, 'Orders panel');
    await page.getByRole('heading', { name: 'Orders', exact: true }).waitFor();
    const table = page.getByRole('table', { name: 'Orders' });
    const all = await api(server.baseUrl, '/admin/orders?page=0&size=50', { token });
    assert.ok(all.total_items > 10, `${all.total_items} orders in the demo`);
    await page.getByText(`1–${Math.min(50, all.total_items)} of ${all.total_items}`).waitFor();
    assert.equal(await table.getByRole('row').count(), Math.min(50, all.total_items) + 1);
    // Newest first, as the server lists them: its first order is the first row.
    const first = all.items[0];
    assert.match(await table.getByRole('row').nth(1).textContent(), new RegExp(`^${first.order_id.slice(-8)}${first.created_by.email}`));
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 1440, 'nothing overflows the window');
    await shot(page, T, '01-orders-panel');

    // Filters: Kestrel's working orders, as the server counts them.
    const kestrel = (await api(server.baseUrl, '/admin/companies?page=0&size=200', { token })).items.find((c) => c.name === 'Kestrel');
    await page.getByRole('combobox', { name: 'Company' }).click();
    await page.getByRole('option', { name: 'Kestrel', exact: true }).click();
    await page.getByRole('combobox', { name: 'State' }).click();
    await page.getByRole('option', { name: 'Working', exact: true }).click();
    await page.keyboard.press('Escape');
    const working = await api(server.baseUrl, `/admin/orders?page=0&size=50&company_id=${kestrel.company_id}&state=WORKING`, { token });
    assert.ok(working.total_items > 0);
    await page.getByText(`1–${working.total_items} of ${working.total_items}`).waitFor();
    await until(async () => (await table.getByRole('row').count()) === working.total_items + 1, { what: 'the filtered rows' });
    for (const row of (await table.getByRole('row').all()).slice(1)) {
      const text = await row.textContent();
      assert.match(text, /Kestrel/);
      assert.match(text, /Working/);
    }
    await shot(page, T, '02-orders-filtered');

    // An order an RFQ reserved: no price until a quote is accepted, and no price to correct
    // (issue 28.19).
    const kTrader = await login(server.baseUrl, 'trader1@kestrel.demo', PASSWORD);
    const parent = (await api(server.baseUrl, '/parent-orders?state=ACTIVE', { token: kTrader })).find((p) => p.quantities.tradable > 0);
    const [meridian] = (await api(server.baseUrl, '/liquidity-providers', { token: kTrader })).filter((c) => c.name === 'Meridian');
    const rfq = await api(server.baseUrl, '/rfqs', {
      token: kTrader, method: 'POST', body: { parent_order_id: parent.parent_order_id, quantity: parent.quantities.tradable, liquidity_provider_ids: [meridian.company_id] },
    });
    await page.getByRole('combobox', { name: 'State' }).click();
    await page.getByRole('option', { name: 'Working', exact: true }).click();
    await page.getByRole('option', { name: 'Awaiting RFQ Acceptance', exact: true }).click();
    await page.keyboard.press('Escape');
    const rfqRow = table.getByRole('row').filter({ hasText: 'Awaiting RFQ Acceptance' });
    await rfqRow.first().waitFor();
    assert.equal(await rfqRow.count(), 1, `the RFQ's order ${rfq.rfq_id}`);
    assert.match(await rfqRow.textContent(), /RFQ, no price/);
    assert.equal(await rfqRow.getByRole('button', { name: /^Edit limit price/ }).count(), 0);
    for (const width of [1280, 1440, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      await shot(page, T, `02b-rfq-order-${width}`);
    }
    // Withdrawn again, so that its quotes do not wait for Kestrel's trader below.
    await api(server.baseUrl, `/rfqs/${rfq.rfq_id}`, { token: kTrader, method: 'PATCH', body: { state: 'CANCELLED' } });
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.getByRole('combobox', { name: 'State' }).click();
    await page.getByRole('option', { name: 'Awaiting RFQ Acceptance', exact: true }).click();
    await page.getByRole('option', { name: 'Working', exact: true }).click();
    await page.keyboard.press('Escape');
    await until(async () => (await table.getByRole('row').count()) === working.total_items + 1, { what: 'the working rows again' });

    // The limit price of Kestrel's newest working order: off the tick first, then one tick up.
    const order = working.items[0];
    const instrument = await api(server.baseUrl, `/instruments/${order.instrument.id}`, { token });
    const short = order.order_id.slice(-8);
    await page.getByRole('button', { name: `Edit limit price of order ${short}` }).click();
    const form = page.getByRole('form', { name: `Edit order ${short}` });
    const field = form.getByRole('textbox', { name: 'Limit price' });
    const save = form.getByRole('button', { name: 'Save limit price' });
    // One unit of the decimal after the tick's last one off: 0.0001 on a 0.005 tick.
    const offTick = addTicks(order.price, `0.${'0'.repeat(scaleOf(instrument.tick_size))}1`, 1);
    await field.fill(offTick);
    await form.getByText('Invalid value').waitFor();
    assert.equal(await save.isDisabled(), true);
    await shot(page, T, '03-limit-price-invalid');
    const corrected = addTicks(order.price, instrument.tick_size, 1);
    await field.fill(corrected);
    await until(async () => !(await save.isDisabled()), { what: 'save enabled' });
    assert.equal(await form.getByText('Invalid value').count(), 0);
    await save.click();
    await assertToastClearOf(page, `Limit price of order ${short} set to ${corrected}.`, 'Refresh');
    await table.getByRole('row').filter({ hasText: short }).filter({ hasText: corrected }).waitFor();
    await shot(page, T, '04-limit-price-saved');
    const after = await api(server.baseUrl, `/admin/orders?page=0&size=50&company_id=${kestrel.company_id}&state=WORKING`, { token });
    assert.equal(String(after.items.find((o) => o.order_id === order.order_id).price), corrected);
    // Its trader is told, old and new price (issue 28.8): the notice opens by itself.
    const owner = await newPage(browser);
    try {
      const ownerToken = await login(server.baseUrl, order.created_by.email, PASSWORD);
      const me = await api(server.baseUrl, '/users/me', { token: ownerToken });
      await api(server.baseUrl, `/users/${me.user_id}`, {
        token: ownerToken, method: 'PATCH', body: { ui_metadata: [{ key: 'TOOLTIPS', value: TIPS.map((key) => ({ key, read: true })) }] },
      });
      await signIn(owner.page, server.baseUrl, order.created_by.email, PASSWORD);
      const told = owner.page.getByRole('dialog', { name: 'Limit price corrected' });
      await told.getByText(`The venue corrected the limit price of your working order on ${instrument.name} from ${addTicks(order.price, instrument.tick_size, 0)} to ${corrected}.`).waitFor();
      for (const width of [1280, 1440, 1920]) {
        await owner.page.setViewportSize({ width, height: 900 });
        await shot(owner.page, T, `04b-trader-told-of-correction-${width}`);
      }
      assert.deepEqual(owner.errors.map(String), []);
    } finally {
      await owner.context.close();
    }

    // Billing: the grid, its page sizes, and the CSV against GET /api/billing.
    await openPanel(page, 'Billing');
    await page.getByRole('heading', { name: 'Billing', exact: true }).waitFor();
    const billing = (await api(server.baseUrl, '/billing', { token })).items;
    assert.equal(billing.length, 4, 'both sides of both trades');
    const grid = page.getByRole('grid', { name: 'Billing' });
    await grid.getByRole('row').nth(1).waitFor();
    assert.equal(await grid.locator('[data-rowindex]').count(), billing.length);
    // The trade reads first, in the window with no scrolling: when (as UTC), who, what,
    // which side, how much and at what price; the ids are hidden until asked for.
    const headers = await grid.getByRole('columnheader').allTextContents();
    assert.deepEqual(headers.slice(0, 6), BILLING_SHOWN_FIRST);
    assert.ok(!headers.includes('User ID') && !headers.includes('Match request ID'), `${headers}`);
    const firstRow = grid.locator('[data-rowindex="0"]');
    // The price with its tick's decimals (0.50 on a 0.01 tick); the CSV keeps it exact.
    const places = (String(billing[0].tick_size).split('.')[1] ?? '').length;
    const [whole, frac = ''] = String(billing[0].price).split('.');
    const shown = places ? `${whole}.${frac.padEnd(places, '0')}` : whole;
    for (const [field, text] of [['match_request_created_at', utc(billing[0].match_request_created_at)], ['price', shown]]) {
      const cell = firstRow.locator(`[data-field="${field}"]`);
      assert.equal(await cell.textContent(), text);
      const [box, view] = [await cell.boundingBox(), page.viewportSize()];
      assert.ok(box && box.x + box.width <= view.width, `${field} in the window: ${JSON.stringify(box)}`);
    }
    await page.getByText(`1–${billing.length} of ${billing.length}`).waitFor();
    assert.equal(await page.getByRole('combobox', { name: /Rows per page/ }).textContent(), '50');
    await shot(page, T, '05-billing');
    await page.getByRole('combobox', { name: /Rows per page/ }).click();
    assert.deepEqual(await page.getByRole('listbox').getByRole('option').allTextContents(), ['10', '25', '50', '100']);
    await page.keyboard.press('Escape');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    assert.equal(download.suggestedFilename(), 'billing.csv');
    const csv = readFileSync(await download.path(), 'utf8');
    const [header, ...rows] = parseCsv(csv, ';');
    assert.deepEqual(header, BILLING_HEADERS);
    assert.deepEqual(rows, billing.map(csvRow));
    await page.getByRole('button', { name: 'Export CSV' }).waitFor();
    assert.deepEqual(failed, [], 'no failed API call');
    assert.deepEqual(errors.map(String), [], 'no uncaught errors in the page');

    // Sales: the same lists, read only; no admin panels.
    const sales = await newPage(browser);
    const salesFailed = failedCalls(sales.page);
    try {
      await signIn(sales.page, server.baseUrl, SALES, PASSWORD);
      await sales.page.getByRole('button', { name: 'Open menu' }).click();
      const nav = sales.page.getByRole('navigation', { name: 'Main menu' });
      assert.deepEqual(await nav.getByRole('link').allTextContents(), ['Dashboard', 'Billing', 'Orders panel', 'Orders newsletter', 'Block Calculator', 'Account Info']);
      await shot(sales.page, T, '06-sales-drawer');
      await nav.getByRole('link', { name: 'Orders panel' }).click();
      const salesTable = sales.page.getByRole('table', { name: 'Orders' });
      // Read again: the RFQ above added an order since.
      const listed = await api(server.baseUrl, '/admin/orders?page=0&size=50', { token });
      await sales.page.getByText(`1–${Math.min(50, listed.total_items)} of ${listed.total_items}`).waitFor();
      assert.equal(await sales.page.getByRole('button', { name: /^Edit limit price/ }).count(), 0);
      // Sales filter by company too (waited for: the filter bar may render after the rows).
      await sales.page.getByRole('combobox', { name: 'Company' }).waitFor();
      await salesTable.getByRole('row').filter({ hasText: short }).filter({ hasText: corrected }).waitFor();
      await sales.page.getByRole('combobox', { name: 'Instrument' }).click();
      await sales.page.getByRole('option', { name: instrument.name, exact: true }).click();
      const byInstrument = await api(server.baseUrl, `/admin/orders?page=0&size=50&instrument_id=${instrument.instrument_id}`, { token });
      await sales.page.getByText(`1–${byInstrument.total_items} of ${byInstrument.total_items}`).waitFor();
      await shot(sales.page, T, '07-sales-orders');

      // The created-at filter, in the browser's days: from tomorrow on, nothing; a last day
      // before the first, refused; today alone, what the server counts for today.
      const day = (offset) => {
        const d = new Date();
        d.setDate(d.getDate() + offset);
        return `${String(d.getDate()).padStart(2, '0')}/${String(d.getMonth() + 1).padStart(2, '0')}/${d.getFullYear()}`;
      };
      // Typed and shown as DD/MM/YYYY in this en-US browser, not mm/dd/yyyy (issue 28.19).
      assert.equal(await sales.page.evaluate(() => navigator.language), 'en-US');
      await typeDate(sales.page, 'Created from', day(1));
      await sales.page.getByText('No order matches these filters.').waitFor();
      assert.equal((await sales.page.getByRole('group', { name: 'Created from' }).getByRole('spinbutton').allTextContents()).join('/'), day(1));
      await typeDate(sales.page, 'Created from', day(0));
      await typeDate(sales.page, 'Created to', day(-1));
      await sales.page.getByText('Before the start date').waitFor();
      await typeDate(sales.page, 'Created to', day(0));
      // The whole date shows in each field: no section cut off by the field's width.
      for (const label of ['Created from', 'Created to']) {
        const cut = await sales.page.getByRole('group', { name: label }).evaluate((g) => {
          const year = [...g.querySelectorAll('[role="spinbutton"]')].at(-1).getBoundingClientRect();
          for (let el = g.querySelector('[role="spinbutton"]').parentElement; el && el !== g.parentElement; el = el.parentElement) {
            if (getComputedStyle(el).overflow !== 'visible' && year.right > el.getBoundingClientRect().right + 0.5) return true;
          }
          return false;
        });
        assert.equal(cut, false, `${label} shows its whole date`);
      }
      const start = new Date();
      start.setHours(0, 0, 0, 0);
      const end = new Date(start);
      end.setDate(end.getDate() + 1);
      const range = `from=${encodeURIComponent(start.toISOString())}&until=${encodeURIComponent(end.toISOString())}`;
      const today = await api(server.baseUrl, `/admin/orders?page=0&size=50&instrument_id=${instrument.instrument_id}&${range}`, { token });
      assert.ok(today.total_items > 0, 'the demo placed orders today');
      await sales.page.getByText(`1–${Math.min(50, today.total_items)} of ${today.total_items}`).waitFor();
      await shot(sales.page, T, '07b-sales-orders-today');

      await openPanel(sales.page, 'Billing');
      await sales.page.getByRole('grid', { name: 'Billing' }).getByRole('row').nth(1).waitFor();
      await shot(sales.page, T, '08-sales-billing');

      await sales.page.goto(`${server.baseUrl}/admin/company`);
      await sales.page.getByRole('heading', { name: 'No access' }).waitFor();
      await shot(sales.page, T, '09-sales-companies-no-access');
      const salesToken = await login(server.baseUrl, SALES, PASSWORD);
      await assert.rejects(api(server.baseUrl, `/admin/orders/${order.order_id}`, { token: salesToken, method: 'PATCH', body: { limit_price: order.price } }), /→ 403/);
      assert.deepEqual(salesFailed, [], 'sales call nothing they may not');
      assert.deepEqual(sales.errors.map(String), []);
    } finally {
      await sales.context.close();
    }
  } catch (e) {
    await shot(page, T, 'failure').catch(() => {});
    console.error(server.log().slice(-4000));
    throw e;
  } finally {
    await context.close();
    await server.stop();
  }
});
