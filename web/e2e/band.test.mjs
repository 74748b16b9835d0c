// Issue 28, the band: every screen that shows it follows the band the book's frames push.
// Point 3: a parent card's 'Outside band' chip changes with the ladder when the band moves,
// with no read of the order lists (they are held here, so only the frames can change it).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { api, failedCalls, launchBrowser, newPage, seedTwoFirms, shot, signIn, startServer, TRADER_PASSWORD, TIPS } from './harness.mjs';

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
 * (-0.040 to -0.015): in the band, for now. `band(min, max)` moves it as an operator does.
 */
async function annaAtTheEdge(server) {
  const { admin, broker, instrument, traders } = await seedTwoFirms(server, { tips: TIPS });
  const id = instrument.instrument_id;
  const anna = (path, body) => api(server.baseUrl, path, { token: traders.Anna.token, method: 'POST', body });
  const parent = await anna('/parent-orders', { direction: 'BUY', instrument_id: id, quantity: 5000 });
  await anna('/orders', {
    parent_order_id: parent.parent_order_id, instrument_id: id, direction: 'BUY', quantity: 1000, limit_price: -0.04,
    residual: false, iceberg: false, broker_id: broker.company_id,
  });
  const band = (min_tick_price, max_tick_price) =>
    api(server.baseUrl, `/admin/instruments/${id}/band`, { token: admin, method: 'POST', body: { min_tick_price, max_tick_price } });
  return { instrument, traders, band };
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
