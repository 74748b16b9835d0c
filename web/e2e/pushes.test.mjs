// Pushes carry the state (ADR 0029): a trader watches a book on the dashboard while
// another firm rests 100 orders and the band moves 20 times; the ladder follows every
// change with no read of the book, market data or instrument. Then the socket drops: the
// screen reads them again once it is back, and shows a change made while it was away.
// And the trader's own orders follow another firm's takes from their frames, with no read
// of the order lists beyond their 15 s poll.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { api, launchBrowser, newPage, seedTwoFirms, shot, signIn, startServer, TRADER_PASSWORD, until, TIPS } from './harness.mjs';

const T = 'pushes';
const ORDERS = 100;
const BAND_MOVES = 20;

let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

test('a watched book follows 100 orders and 20 band moves with no read, and reads again after the socket drops', async () => {
  // 100 orders in a few seconds: above the default burst of writes per user.
  const server = await startServer({ env: { UPSTAIRS_ALWAYS_OPEN: 'true', UPSTAIRS_WRITE_BURST: '1000', UPSTAIRS_WRITES_PER_SECOND: '1000' } });
  const { page } = await newPage(browser);
  try {
    const { admin, broker, instrument, traders } = await seedTwoFirms(server, { tips: TIPS });
    const id = instrument.instrument_id;
    const as = (t) => (path, body, method = 'POST') => api(server.baseUrl, path, { token: traders[t].token, method, body });
    const order = (t, parent, direction, quantity, price) =>
      as(t)('/orders', { parent_order_id: parent.parent_order_id, instrument_id: id, direction, quantity, limit_price: price, residual: false, iceberg: false, broker_id: broker.company_id });

    // Anna's buy parent puts the book on her dashboard; one of her orders rests in it.
    const annaParent = await as('Anna')('/parent-orders', { direction: 'BUY', instrument_id: id, quantity: 5000 });
    await order('Anna', annaParent, 'BUY', 1000, -0.04);

    // Every read of the book, its market data or its instrument the page makes.
    const watched = new RegExp(`^/api/instruments/${id}(/book|/market-data)?$`);
    const reads = [];
    page.on('request', (r) => {
      const path = new URL(r.url()).pathname;
      if (r.method() === 'GET' && watched.test(path)) reads.push(path);
    });
    // The socket, routed so the test can drop it; its STOMP frames counted.
    const sockets = [];
    let connects = 0;
    await page.routeWebSocket(/\/ws$/, (ws) => {
      const upstream = ws.connectToServer();
      ws.onMessage((m) => upstream.send(m));
      upstream.onMessage((m) => {
        if (String(m).startsWith('CONNECTED')) connects += 1;
        ws.send(m);
      });
      sockets.push({ ws, upstream });
    });

    await signIn(page, server.baseUrl, traders.Anna.email, TRADER_PASSWORD);
    const book = page.getByRole('region', { name: `Order book ${instrument.name}` });
    await book.getByRole('button', { name: 'Price -0.040, buy 1k' }).waitFor();
    await until(() => connects === 1, { what: 'the STOMP session' });
    // The first load (and the reads its connect asks for) settles.
    let settled = -1;
    await until(
      () => {
        const done = reads.length === settled;
        settled = reads.length;
        return done;
      },
      { intervalMs: 1500, what: 'the first load to settle' },
    );
    const firstLoad = reads.length;
    reads.length = 0;

    // Ben rests 100 sell orders over three prices, then 20 band moves end on [-0.055, -0.015].
    const benParent = await as('Ben')('/parent-orders', { direction: 'SELL', instrument_id: id, quantity: 500 * ORDERS + 10_000 });
    const prices = ['-0.025', '-0.020', '-0.015'];
    const totals = new Map(prices.map((p) => [p, 0]));
    for (let n = 0; n < ORDERS; n++) {
      const price = prices[n % prices.length];
      // The last one large, to find its level on screen.
      const quantity = n === ORDERS - 1 ? 7000 : 500;
      await order('Ben', benParent, 'SELL', quantity, Number(price));
      totals.set(price, totals.get(price) + quantity);
    }
    for (let k = 1; k <= BAND_MOVES; k++) {
      const band = k === BAND_MOVES ? [-0.055, -0.015] : k % 2 ? [-0.045, -0.01] : [-0.05, -0.015];
      await api(server.baseUrl, `/admin/instruments/${id}/band`, { token: admin, method: 'POST', body: { min_tick_price: band[0], max_tick_price: band[1] } });
    }

    // The ladder shows every level's total, the new band's edge rows and the best offer.
    const k = (q) => `${q / 1000}k`;
    for (const [price, total] of totals) {
      await book.getByRole('button', { name: `Price ${price}, sell ${k(total)}` }).waitFor({ timeout: 15_000 });
    }
    await book.locator('[data-price="-0.065"]').waitFor();
    assert.equal(await book.locator('[data-price="-0.070"]').count(), 0, 'the ladder ends two ticks under the band');
    await until(async () => (await book.getByTestId('best-sell').textContent()) === '-0.025', { what: 'the best offer' });
    // Anna's own level is still marked as hers.
    await book.getByRole('button', { name: 'Price -0.040, buy 1k' }).getByLabel('Includes your orders').waitFor();
    await shot(page, T, '01-after-100-orders-and-20-band-moves');
    console.log(`reads of the book, market data and instrument: ${firstLoad} at the first load, ${reads.length} during ${ORDERS} orders and ${BAND_MOVES} band moves`);
    assert.deepEqual(reads, [], 'no read while the frames carry the state');

    // The socket drops; Ben rests one more order meanwhile; the page reconnects (5 s) and reads again.
    for (const { ws, upstream } of sockets) {
      await ws.close();
      await upstream.close();
    }
    await order('Ben', benParent, 'SELL', 3000, -0.035);
    await until(() => connects === 2, { timeoutMs: 20_000, what: 'the reconnect' });
    await book.getByRole('button', { name: 'Price -0.035, sell 3k' }).waitFor({ timeout: 15_000 });
    const after = [...reads];
    console.log(`reads after the reconnect: ${after.length} (${after.join(', ')})`);
    for (const path of [`/api/instruments/${id}/book`, `/api/instruments/${id}/market-data`, `/api/instruments/${id}`]) {
      assert.ok(after.includes(path), `${path} read again after the reconnect: ${after}`);
    }
    await shot(page, T, '02-after-reconnect');
  } finally {
    await page.context().close();
    await server.stop();
  }
});

test("a trader's own orders follow another firm's takes with no read of the order lists", async () => {
  const server = await startServer({ env: { UPSTAIRS_ALWAYS_OPEN: 'true' } });
  const { page } = await newPage(browser);
  try {
    // Anna answers every request at once (INSTANT): each take of Ben's ends matched.
    const { broker, instrument, traders } = await seedTwoFirms(server, { tips: TIPS });
    const id = instrument.instrument_id;
    const as = (t) => (path, body, method = 'POST') => api(server.baseUrl, path, { token: traders[t].token, method, body });
    const annaParent = await as('Anna')('/parent-orders', { direction: 'SELL', instrument_id: id, quantity: 3000 });
    await as('Anna')('/orders', {
      parent_order_id: annaParent.parent_order_id, instrument_id: id, direction: 'SELL', quantity: 3000, limit_price: -0.03,
      residual: false, iceberg: false, broker_id: broker.company_id,
    });
    const benParent = await as('Ben')('/parent-orders', { direction: 'BUY', instrument_id: id, quantity: 3000 });

    const lists = [];
    page.on('request', (r) => {
      const path = new URL(r.url()).pathname;
      if (r.method() === 'GET' && (path === '/api/orders' || path === '/api/parent-orders')) lists.push(path);
    });
    await signIn(page, server.baseUrl, traders.Anna.email, TRADER_PASSWORD);
    const card = page.getByRole('listitem', { name: `Sell ${instrument.name}` });
    await card.getByTestId('parent-working').filter({ hasText: '3,000' }).waitFor();
    // The screen is up and its socket subscribed once the bell has read its list.
    await until(() => lists.length >= 2, { what: 'the first reads of the lists' });
    await page.waitForLoadState('networkidle');
    lists.length = 0;
    const started = Date.now();

    for (let k = 1; k <= 3; k++) {
      await as('Ben')('/order-match-requests', {
        requesting_parent_order_id: benParent.parent_order_id, quantity: 500, price: -0.03, requesting_broker_id: broker.company_id, dry_run: false, residual: false,
      });
      await card.getByTestId('parent-matched').filter({ hasText: (500 * k).toLocaleString('en-US') }).waitFor({ timeout: 15_000 });
      await card.getByTestId('parent-working').filter({ hasText: (3000 - 500 * k).toLocaleString('en-US') }).waitFor();
    }
    await card.getByRole('list', { name: 'Child orders' }).getByText('Matched').first().waitFor();
    await shot(page, T, '03-own-orders-after-three-takes');
    // The lists poll every 15 s (a colleague's changes reach only them): only those reads may come.
    const polls = Math.ceil((Date.now() - started) / 15_000);
    const count = (path) => lists.filter((p) => p === path).length;
    console.log(`list reads during three takes and their accepts: ${lists.length} (${lists.join(', ')}) in ${Date.now() - started} ms`);
    assert.ok(count('/api/orders') <= polls && count('/api/parent-orders') <= polls, `only polls read the lists: ${lists}`);
  } finally {
    await page.context().close();
    await server.stop();
  }
});
