// Scorecards on the real server in Chromium (issue 29): after a trade between Halyard and
// Kestrel, Anna (Halyard, the taker) reads her firm's scorecard from the profile menu, Ben
// (Kestrel, who answered at once) his, and the venue admin the venue's and one firm's.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN, api, launchBrowser, newPage, seedTwoFirms, shot, signIn, startServer, TIPS, TRADER_PASSWORD as PASSWORD } from './harness.mjs';

const T = 'scorecard';

let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

test("each firm reads its own scorecard, and the venue's staff the venue's", async () => {
  const server = await startServer({ env: { UPSTAIRS_ALWAYS_OPEN: 'true' } });
  try {
    const { admin, broker, instrument, traders } = await seedTwoFirms(server, { tips: TIPS });
    const { Anna, Ben } = traders;
    const body = (parent, extra) => ({ instrument_id: instrument.instrument_id, ...extra, parent_order_id: parent.parent_order_id });
    const sell = await api(server.baseUrl, '/parent-orders', { token: Ben.token, method: 'POST', body: { direction: 'SELL', instrument_id: instrument.instrument_id, quantity: 2000 } });
    await api(server.baseUrl, '/orders', {
      token: Ben.token, method: 'POST',
      body: body(sell, { direction: 'SELL', quantity: 2000, limit_price: -0.025, residual: false, iceberg: false, broker_id: broker.company_id }),
    });
    const buy = await api(server.baseUrl, '/parent-orders', { token: Anna.token, method: 'POST', body: { direction: 'BUY', instrument_id: instrument.instrument_id, quantity: 2000 } });
    const sent = await api(server.baseUrl, '/order-match-requests', {
      token: Anna.token, method: 'POST',
      body: { requesting_parent_order_id: buy.parent_order_id, quantity: 2000, price: -0.025, requesting_broker_id: broker.company_id, dry_run: false, residual: false },
    });
    assert.equal(sent.length, 1);

    // Anna: from the profile menu; her firm sent one request, accepted.
    const anna = await newPage(browser);
    await signIn(anna.page, server.baseUrl, Anna.email, PASSWORD);
    await anna.page.getByRole('button', { name: 'Profile menu' }).click();
    await anna.page.getByRole('menuitem', { name: 'Scorecard' }).click();
    await anna.page.getByRole('heading', { name: 'Scorecard' }).waitFor();
    const requests = anna.page.getByRole('region', { name: 'Match requests' });
    await requests.getByRole('img', { name: 'Sent: 1 (Accepted 1)' }).waitFor();
    await requests.getByRole('img', { name: 'Received: 0' }).waitFor();
    await anna.page.getByRole('region', { name: 'Prices' }).getByText('1 trade.', { exact: false }).waitFor();
    await shot(anna.page, T, '01-taker');
    // The notice of her trade, opened by itself, is closed first: it lies over the buttons.
    await anna.page.getByRole('dialog', { name: 'Match request accepted' }).getByRole('button', { name: 'Close' }).click();
    const download = anna.page.waitForEvent('download');
    await anna.page.getByRole('button', { name: 'Download CSV' }).click();
    const csv = await (await download).createReadStream();
    let text = '';
    for await (const chunk of csv) text += chunk;
    assert.match(text, /^scorecard,Your firm\n/);
    assert.match(text, /\nmatch_requests_sent_accepted,1\n/);
    assert.deepEqual(anna.errors, []);
    await anna.context.close();

    // Ben: his firm received it and answered (his preference, at once).
    const ben = await newPage(browser);
    await signIn(ben.page, server.baseUrl, Ben.email, PASSWORD);
    await ben.page.goto(`${server.baseUrl}/scorecard`);
    await ben.page.getByRole('region', { name: 'Match requests' }).getByRole('img', { name: 'Received: 1 (Accepted 1)' }).waitFor();
    await ben.page.getByRole('region', { name: 'Response times' }).getByText('1 answer', { exact: true }).waitFor();
    await shot(ben.page, T, '02-responder');
    await ben.context.close();

    // The venue admin: the whole venue, then Kestrel's.
    const me = await api(server.baseUrl, '/users/me', { token: admin });
    await api(server.baseUrl, `/users/${me.user_id}`, { token: admin, method: 'PATCH', body: { auto_accept: 'INSTANT' } });
    const ops = await newPage(browser);
    await signIn(ops.page, server.baseUrl, ADMIN.email, ADMIN.password);
    await ops.page.goto(`${server.baseUrl}/scorecard`);
    await ops.page.getByText(/^The whole venue:/).waitFor();
    await ops.page.getByRole('region', { name: 'Match requests' }).getByRole('img', { name: 'Every request: 1 (Accepted 1)' }).waitFor();
    await shot(ops.page, T, '03-venue');
    await ops.page.getByRole('combobox', { name: 'Firm' }).click();
    await ops.page.getByRole('option', { name: 'Kestrel' }).click();
    await ops.page.getByRole('region', { name: 'Match requests' }).getByRole('img', { name: 'Received: 1 (Accepted 1)' }).waitFor();
    await shot(ops.page, T, '04-venue-one-firm');
    await ops.context.close();
  } finally {
    await server.stop();
  }
});
