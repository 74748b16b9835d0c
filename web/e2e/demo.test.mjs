// Issue 28.1: the demo venue stays alive and in play. Its bands move around fair values,
// so the seeded orders of the README's tour never end up outside them; its trading robots
// (the liquidity providers) rest orders and take each other's, so the books keep moving
// with no one at the keyboard. An hour of it is the Rust test
// `demo::tests::an_hour_of_the_demo_keeps_its_liquidity_in_play`; here the browser sees it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { api, failedCalls, launchBrowser, login, newPage, shot, signIn, startServer, until, TIPS } from './harness.mjs';

const T = 'demo';
const PASSWORD = 'Upstairs-Demo-1';
const HALYARD = 'trader1@halyard.demo';

let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

test("the demo's robots keep its books moving and its seeded orders stay inside the band", async () => {
  const server = await startServer({ demo: true, env: { UPSTAIRS_DEMO_ROBOTS_EVERY: '1' } });
  const { page } = await newPage(browser, { width: 1440, height: 900 });
  const failed = failedCalls(page);
  try {
    const token = await login(server.baseUrl, HALYARD, PASSWORD);
    const me = await api(server.baseUrl, '/users/me', { token });
    await api(server.baseUrl, `/users/${me.user_id}`, {
      token, method: 'PATCH', body: { ui_metadata: [{ key: 'TOOLTIPS', value: TIPS.map((key) => ({ key, read: true })) }] },
    });
    await signIn(page, server.baseUrl, HALYARD, PASSWORD);
    const name = 'Euribor 3M Dec26-Mar27';
    const book = page.getByRole('region', { name: `Order book ${name}` });
    await book.getByTestId('ladder-row').first().waitFor();
    const card = page.getByRole('listitem', { name: `Buy ${name}` });
    const seeded = card.getByRole('list', { name: 'Child orders' }).getByRole('listitem').first();
    await seeded.waitFor();

    // The robots rest orders of their own: levels beyond Halyard's and Kestrel's appear
    // on the ladder, with no one at the keyboard; meanwhile the band moves and the seeded
    // order is never outside it.
    /** The ladder's rows with a quantity, as their labels read ('Price -0.035, buy 1.5k'). */
    const levels = async () => (await book.locator('[data-testid="ladder-row"][aria-label*=", "]').evaluateAll((rows) => rows.map((r) => r.getAttribute('aria-label')))).sort().join(' | ');
    const seededLevels = await levels();
    const seen = new Set();
    const robots = await login(server.baseUrl, 'quotes@ostrava.demo', PASSWORD);
    await until(
      async () => {
        assert.equal(await seeded.getByText('Outside band').count(), 0, 'the seeded order left the band');
        const instrument = (await api(server.baseUrl, '/instruments', { token })).find((i) => i.name === name);
        seen.add(`${instrument.min_tick_price}..${instrument.max_tick_price}`);
        const trades = await api(server.baseUrl, '/order-match-requests?state=ACCEPTED', { token: robots });
        return seen.size > 1 && (await levels()) !== seededLevels && trades.length > 0;
      },
      { timeoutMs: 120_000, intervalMs: 500, what: 'the band to move, a robot order on the Euribor ladder and a robot trade' },
    );
    for (const width of [1280, 1440, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      await shot(page, T, `01-robots-in-the-book-${width}`);
    }
    // Kestrel's seeded offer is still there, untaken, for the tour.
    const kestrel = await login(server.baseUrl, 'trader1@kestrel.demo', PASSWORD);
    const offers = await api(server.baseUrl, '/orders?state=WORKING', { token: kestrel });
    assert.equal(offers.length, 5, `Kestrel's five seeded offers: ${JSON.stringify(offers)}`);
    assert.deepEqual(failed, []);
  } catch (e) {
    console.error(server.log().slice(-4000));
    throw e;
  } finally {
    await page.context().close();
    await server.stop();
  }
});

// Issue 28.18: on the live demo the band moves every few seconds. The action log leaves the
// venue's own band moves out unless asked, so people's actions stand out; it filters by
// entity, operation, company and time range, and shows the time to the second.
test("the action log keeps the venue's band moves out of people's way; the instruments panel follows the band", async () => {
  const server = await startServer({ demo: true });
  const { page } = await newPage(browser, { width: 1440, height: 900 });
  const failed = failedCalls(page);
  try {
    const admin = await login(server.baseUrl, 'admin@upstairs.demo', PASSWORD);
    const bandMoves = async () => (await api(server.baseUrl, '/admin/action-logs?size=1&entity=instrument&operation=band', { token: admin })).total_items;
    await until(async () => (await bandMoves()) >= 2, { timeoutMs: 30_000, intervalMs: 500, what: 'the demo to move a band twice' });
    // A person acts: Kestrel's trader signs in.
    await login(server.baseUrl, 'trader1@kestrel.demo', PASSWORD);

    await signIn(page, server.baseUrl, 'admin@upstairs.demo', PASSWORD);
    await page.goto(`${server.baseUrl}/admin/action-logs`);
    const table = page.getByRole('table', { name: 'Action logs' });
    await table.getByRole('row').nth(1).waitFor();
    const rows = () => table.getByRole('row').filter({ hasNot: page.getByRole('columnheader') });
    const texts = async () => (await rows().allTextContents());
    assert.ok((await texts()).every((t) => !/Systeminstrumentband/.test(t)), 'no automatic band move by default');
    assert.match((await texts())[0], /^\d\d\/\d\d\/\d{4} \d\d:\d\d:\d\d/, 'times to the second');
    await shot(page, T, '02-action-log-people-1440');

    await page.getByRole('switch', { name: 'Automatic band moves' }).check();
    await page.getByRole('combobox', { name: 'Entity' }).click();
    await page.getByRole('option', { name: 'instrument', exact: true }).click();
    await until(async () => {
      const t = await texts();
      return t.every((x) => /instrument/.test(x)) && t.some((x) => /Systeminstrumentband/.test(x));
    }, { what: "the instruments' rows, the venue's band moves among them" });
    for (const width of [1280, 1440, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      await shot(page, T, `03-action-log-band-moves-${width}`);
    }
    // Kestrel's sign-in, by company and operation.
    await page.getByRole('combobox', { name: 'Entity' }).click();
    await page.getByRole('option', { name: 'All entities' }).click();
    await page.getByRole('combobox', { name: 'Company' }).click();
    await page.getByRole('option', { name: 'Kestrel', exact: true }).click();
    await page.getByRole('textbox', { name: 'Operation' }).fill('login');
    await until(async () => {
      const t = await texts();
      return t.length === 1 && t[0].includes('trader1@kestrel.demo') && t[0].includes('login');
    }, { what: "Kestrel's sign-in alone" });
    await shot(page, T, '04-action-log-company-operation');

    // Issue 28.20: the Instruments panel follows the moving band without a reload, and the
    // demo's bands are the 10 ticks the panel's form sets.
    await page.goto(`${server.baseUrl}/admin/instrument`);
    const euribor = page.getByRole('table', { name: 'Instruments' }).getByRole('row').filter({ hasText: 'Euribor 3M Dec26-Mar27' }).filter({ hasNotText: 'Sandbox' });
    await euribor.waitFor();
    const band = async () => {
      const cells = await euribor.getByRole('cell').allTextContents();
      return [cells[5], cells[6]];
    };
    const first = await band();
    assert.equal(Math.round((Number(first[1]) - Number(first[0])) / 0.005), 10, `a 10-tick band: ${first}`);
    // Every active row follows its band. Each band may rest for several 3 s steps in a row
    // (the demo's walk leans back to its fair value), so the panel is watched as a whole.
    const bands = () =>
      page.getByRole('table', { name: 'Instruments' }).evaluate((t) =>
        [...t.querySelectorAll('tbody tr')].map((r) => [...r.cells].slice(5, 7).map((c) => c.textContent).join('/')).join(' '),
      );
    const before = await bands();
    await until(async () => (await bands()) !== before, { timeoutMs: 30_000, intervalMs: 250, what: 'a band to move on the panel' });
    for (const width of [1280, 1440, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      await shot(page, T, `05-instruments-live-band-${width}`);
    }
    // Issue 30: the band's history as a chart, from the moves the demo made since it started.
    await page.setViewportSize({ width: 1440, height: 900 });
    await euribor.getByRole('button', { name: 'Band chart of Euribor 3M Dec26-Mar27' }).click();
    const chartDialog = page.getByRole('dialog', { name: 'Band of Euribor 3M Dec26-Mar27' });
    await chartDialog.getByRole('img', { name: /^Best bid and offer of Euribor 3M Dec26-Mar27 from / }).waitFor();
    // The seeded band, then the walk's moves: each choice of a period reads it to now,
    // chosen again until the walk has moved.
    const points = chartDialog.getByText(/^\d+ points?$/);
    await until(
      async () => {
        await chartDialog.getByRole('button', { name: '24 hours' }).click();
        await chartDialog.getByRole('button', { name: '1 hour' }).click();
        await points.waitFor();
        return Number((await points.textContent()).split(' ')[0]) >= 2;
      },
      { timeoutMs: 60_000, intervalMs: 1_000, what: 'the band chart to show the demo’s moves' },
    );
    await shot(page, T, '06-instrument-band-chart');
    await chartDialog.getByRole('button', { name: 'Close' }).click();
    assert.deepEqual(failed, []);
  } catch (e) {
    console.error(server.log().slice(-4000));
    throw e;
  } finally {
    await page.context().close();
    await server.stop();
  }
});
