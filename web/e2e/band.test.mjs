// Issue 28, the band: every screen that shows it follows the band the book's frames push.
// Point 3: a parent card's 'Outside band' chip changes with the ladder when the band moves,
// with no read of the order lists (they are held here, so only the frames can change it).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { api, failedCalls, until, launchBrowser, newPage, seedTwoFirms, shot, signIn, startServer, TRADER_PASSWORD, TIPS } from './harness.mjs';

const T = 'band';
const WIDTHS = [1280, 1440, 1920];

let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

/** Holds every read of the order lists until released: the screen can only learn from frames meanwhile. */
async function holdListReads(page) {
  const held = [];
  let holding = true;
  await page.route(/\/api\/(parent-)?orders(\?.*)?$/, (route) => {
    if (holding && route.request().method() === 'GET') held.push(route);
    else void route.fallback();
  });
  return {
    get count() {
      return held.length;
    },
    async release() {
      holding = false;
      for (const r of held.splice(0)) await r.fallback();
    },
  };
}

/**
 * Two firms; Anna's buy parent of 5,000 works 1,000 at -0.040, the band's lower edge
 * (-0.040 to -0.015): in the band, for now. `band(min, max)` moves it as an operator does;
 * `work(trader, direction, price)` rests 1,000 of a new parent of 5,000 for a trader.
 */
async function annaAtTheEdge(server) {
  const { admin, broker, instrument, traders } = await seedTwoFirms(server, { tips: TIPS });
  const id = instrument.instrument_id;
  const work = async (trader, direction, limit_price) => {
    const post = (path, body) => api(server.baseUrl, path, { token: trader.token, method: 'POST', body });
    const parent = await post('/parent-orders', { direction, instrument_id: id, quantity: 5000 });
    await post('/orders', {
      parent_order_id: parent.parent_order_id, instrument_id: id, direction, quantity: 1000, limit_price,
      residual: false, iceberg: false, broker_id: broker.company_id,
    });
  };
  await work(traders.Anna, 'BUY', -0.04);
  const band = (min_tick_price, max_tick_price) =>
    api(server.baseUrl, `/admin/instruments/${id}/band`, { token: admin, method: 'POST', body: { min_tick_price, max_tick_price } });
  return { instrument, traders, band, work };
}

test("the card's 'Outside band' chip moves with the ladder's band, from the frames alone", async () => {
  const server = await startServer({ env: { UPSTAIRS_ALWAYS_OPEN: 'true' } });
  const { page } = await newPage(browser);
  const failed = failedCalls(page);
  try {
    const { instrument, traders, band } = await annaAtTheEdge(server);

    await signIn(page, server.baseUrl, traders.Anna.email, TRADER_PASSWORD);
    const card = page.getByRole('listitem', { name: `Buy ${instrument.name}` });
    const row = card.getByRole('list', { name: 'Child orders' }).getByRole('listitem').filter({ hasText: '1,000 @ -0.040' });
    const book = page.getByRole('region', { name: `Order book ${instrument.name}` });
    const level = book.locator('[data-price="-0.040"]');
    await row.waitFor();
    await level.waitFor();
    await page.waitForLoadState('networkidle');
    assert.equal(await row.getByText('Outside band').count(), 0, 'in the band at first');
    assert.equal(await level.getAttribute('aria-disabled'), null);

    const lists = await holdListReads(page);
    // The band moves up a tick: the order is left under it, on the ladder and on the card.
    await band(-0.035, -0.01);
    await row.getByText('Outside band').waitFor({ timeout: 10_000 });
    assert.equal(await level.getAttribute('aria-disabled'), 'true', 'the ladder greys the same price');
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await shot(page, T, `01-outside-band-${width}`);
    }
    // And back: the chip goes as the level comes back into the band.
    await band(-0.04, -0.015);
    await row.getByText('Outside band').waitFor({ state: 'detached', timeout: 10_000 });
    assert.equal(await level.getAttribute('aria-disabled'), null);
    await shot(page, T, '02-back-in-band');
    console.log(`list reads held while the band moved twice: ${lists.count}`);
    await lists.release();
    assert.deepEqual(failed, []);
  } finally {
    await page.context().close();
    await server.stop();
  }
});

test('the Work and Edit drawers check the price against the band of now; a kept price is not checked again', async () => {
  const server = await startServer({ env: { UPSTAIRS_ALWAYS_OPEN: 'true' } });
  const { page } = await newPage(browser);
  const failed = failedCalls(page);
  try {
    const { instrument, traders, band } = await annaAtTheEdge(server);
    await signIn(page, server.baseUrl, traders.Anna.email, TRADER_PASSWORD);
    const card = page.getByRole('listitem', { name: `Buy ${instrument.name}` });
    const book = page.getByRole('region', { name: `Order book ${instrument.name}` });

    // Work order at the band's lower edge; the band moves up a tick while the drawer is open.
    await book.getByRole('button', { name: 'Price -0.035' }).click();
    let drawer = page.locator('form').filter({ has: page.getByRole('heading', { name: 'Work order' }) });
    await drawer.getByText('Band -0.040 – -0.015').waitFor();
    assert.equal(await drawer.getByText('Must be between electronic price').count(), 0);
    await band(-0.03, -0.005);
    await drawer.getByText('Band -0.030 – -0.005').waitFor({ timeout: 10_000 });
    await drawer.getByText('Must be between electronic price').waitFor();
    assert.ok(await drawer.getByRole('button', { name: 'Place order' }).isDisabled(), 'nothing sent the server would refuse');
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await shot(page, T, `03-work-drawer-after-band-move-${width}`);
    }
    await drawer.getByRole('button', { name: 'Cancel' }).click();
    await drawer.waitFor({ state: 'detached' });

    // The order at -0.040 is now outside the band: its quantity still goes down, at its price.
    await card.getByRole('button', { name: 'Edit order 1,000 @ -0.040' }).click();
    drawer = page.locator('form').filter({ has: page.getByRole('heading', { name: 'Edit order' }) });
    await drawer.getByText('Band -0.030 – -0.005').waitFor();
    assert.equal(await drawer.getByText('Must be between electronic price').count(), 0, 'a kept price is not checked again');
    await drawer.getByRole('textbox', { name: 'Quantity' }).fill('500');
    await shot(page, T, '04-edit-outside-band');
    await drawer.getByRole('button', { name: 'Apply changes' }).click();
    await page.getByText('Order quantity updated to 500.').waitFor();
    const row = card.getByRole('list', { name: 'Child orders' }).getByRole('listitem').filter({ hasText: '500 @ -0.040' });
    await row.getByText('Outside band').waitFor();
    await shot(page, T, '05-edited-outside-band');
    assert.deepEqual(failed, []);
  } finally {
    await page.context().close();
    await server.stop();
  }
});

// Point 11: a ladder never cuts a row unsaid. A 15-row book (a 10-tick band) shows whole
// at every width; a longer one says on its edge how many rows are out of view and whether
// your orders or a best price are among them, and brings them in; prices with no orders
// left out between rows far apart are marked, with how many ticks.
test('the ladder shows a 15-row book whole, marks the prices it leaves out and says what is out of view', async () => {
  const server = await startServer({ env: { UPSTAIRS_ALWAYS_OPEN: 'true' } });
  const { page } = await newPage(browser, { width: 1280, height: 900 });
  const failed = failedCalls(page);
  try {
    const { instrument, traders, band, work } = await annaAtTheEdge(server);
    await work(traders.Ben, 'SELL', -0.015);
    // A 10-tick band: 15 rows, from -0.005 down to -0.075.
    await band(-0.065, -0.015);

    await signIn(page, server.baseUrl, traders.Anna.email, TRADER_PASSWORD);
    const book = page.getByRole('region', { name: `Order book ${instrument.name}` });
    const ladder = book.getByTestId('price-ladder');
    const rows = ladder.getByTestId('ladder-row');
    await book.locator('[data-price="-0.075"]').waitFor();
    /** Whether a row is wholly inside the ladder's visible area and not under a cue. */
    const wholeInView = async (price) => {
      const [box, row] = [await ladder.boundingBox(), await ladder.locator(`[data-price="${price}"]`).boundingBox()];
      const cues = await book.locator('[data-testid^="ladder-more-"]').evaluateAll((els) => els.map((e) => e.getBoundingClientRect()).map((r) => ({ top: r.top, bottom: r.bottom })));
      const covered = cues.some((c) => row.y < c.bottom && row.y + row.height > c.top);
      return row.y >= box.y - 0.5 && row.y + row.height <= box.y + box.height + 0.5 && !covered;
    };
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      assert.equal(await rows.count(), 15);
      for (const price of ['-0.005', '-0.040', '-0.075']) assert.ok(await wholeInView(price), `${price} whole at ${width}`);
      assert.equal(await book.locator('[data-testid^="ladder-more-"]').count(), 0, `no cue at ${width}`);
      await shot(page, T, `06-fifteen-rows-whole-${width}`);
    }

    // The band leaves both orders far below it: 25 rows of band, a marker for the 20 ticks
    // with no orders, then Ben's offer and Anna's bid out of view under a cue that names them.
    await page.setViewportSize({ width: 1280, height: 900 });
    await band(0.1, 0.2);
    await book.locator('[data-price="0.210"]').waitFor({ timeout: 10_000 });
    const gaps = book.getByTestId('ladder-gap');
    await until(async () => (await gaps.count()) === 2, { what: 'two gap markers' });
    assert.equal(await gaps.nth(0).getAttribute('aria-label'), 'No orders from 0.090 to -0.015: 20 ticks left out');
    assert.equal(await gaps.nth(0).textContent(), '⋯ 20 ticks ⋯');
    assert.equal(await gaps.nth(1).getAttribute('aria-label'), 'No orders from -0.015 to -0.040: 4 ticks left out');
    const below = book.getByTestId('ladder-more-below');
    await until(async () => /your orders · best sell · best buy$/.test(await below.textContent()), { what: 'the cue naming both orders' });
    assert.match(await below.textContent(), /^\d+ more rows · /);
    assert.ok(!(await wholeInView('-0.040')), 'Anna\'s order is out of view');
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await shot(page, T, `07-orders-out-of-view-${width}`);
    }

    // The cue brings the nearest of them into view (Ben's offer, the best sell); the best
    // buy in the column heads brings Anna's bid.
    await page.setViewportSize({ width: 1280, height: 900 });
    await below.click();
    await until(() => wholeInView('-0.015'), { what: 'the best sell in view' });
    await book.getByRole('button', { name: 'Best buy -0.040: show it on the ladder' }).click();
    await until(() => wholeInView('-0.040'), { what: "Anna's bid in view" });
    await until(async () => (await below.count()) === 0, { what: 'nothing left below' });
    const above = book.getByTestId('ladder-more-above');
    assert.match(await above.textContent(), /^\d+ more rows$/);
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await shot(page, T, `08-best-buy-brought-in-${width}`);
    }
    // Back up a page at a time with the cue above, by keyboard too.
    await above.focus();
    await page.keyboard.press('Enter');
    await until(async () => (await book.getByTestId('ladder-more-below').count()) === 1, { what: 'a cue below again' });
    assert.deepEqual(failed, []);
  } finally {
    await page.context().close();
    await server.stop();
  }
});
