// Requests for quote end to end, a trader and a liquidity provider of different firms in
// two browser contexts on the real server: the trader sends an RFQ from a parent card,
// the provider sees it arrive without a reload and quotes, the quote shows live in the
// trader's Active RFQ's panel, the trader accepts ('RFQ trade completed!'), both sides
// see the match and the broker is e-mailed both accept links; then an RFQ that nobody
// answers ends at its deadline when the test moves the server's clock.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN, api, failedCalls, frozenServer, launchBrowser, login, newPage, shot, signIn, until, waitForMail } from './harness.mjs';

const PASSWORD = 'Trader-Pass-2026';
const T = 'rfqs';
const DESK = 'ops@northgate.test';
const TIPS = ['FIRST_PARENT_ORDER', 'INTERACT_WITH_ORDERBOOK', 'LEAVING_LIQUIDITY_IN_ORDERBOOK', 'TAKING_LIQUIDITY_IN_ORDERBOOK', 'FIRST_ICEBERG_ORDER'];

let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

/** A broker confirming by e-mail, a trading firm and a liquidity provider using it, an instrument, a trader in each. */
async function seedVenue(server) {
  const admin = await login(server.baseUrl, ADMIN.email, ADMIN.password);
  const post = (path, body) => api(server.baseUrl, path, { token: admin, method: 'POST', body });
  const broker = await post('/admin/companies', {
    name: 'Northgate', full_name: 'Northgate Clearing LLP', roles: ['broker'], trade_confirmation_email: DESK, trade_confirmation_via_email_enabled: true,
  });
  const brokers = [{ company_id: broker.company_id }];
  const firms = {
    Kestrel: await post('/admin/companies', { name: 'Kestrel', full_name: 'Kestrel Capital LLP', brokers, default_broker: brokers[0] }),
    Fathom: await post('/admin/companies', { name: 'Fathom', full_name: 'Fathom Markets LLP', roles: ['liquidity-provider'], brokers, default_broker: brokers[0] }),
  };
  const instrument = await post('/admin/instruments', {
    name: 'Euribor 3M Dec26-Mar27', term: 'Dec26-Mar27', min_quantity: 500, tick_size: 0.005, exchange_id: 'I', currency: 'EUR',
    min_tick_price: -0.04, max_tick_price: -0.015,
  });
  const users = {};
  for (const [firm, email, first_name] of [['Kestrel', 'ben@kestrel.test', 'Ben'], ['Fathom', 'lena@fathom.test', 'Lena']]) {
    const user = await post('/users', { email, first_name, last_name: 'Trader', company_id: firms[firm].company_id, roles: ['trader'] });
    const { link } = await waitForMail(server.mailDir, email, { pathPrefix: '/account-activate' });
    await api(server.baseUrl, `/users/password-reset/${new URL(link).searchParams.get('hash')}`, { method: 'POST', body: { password: PASSWORD } });
    const token = await login(server.baseUrl, email, PASSWORD);
    await api(server.baseUrl, `/users/${user.user_id}`, {
      token, method: 'PATCH', body: { auto_accept: 'INSTANT', ui_metadata: [{ key: 'TOOLTIPS', value: TIPS.map((key) => ({ key, read: true })) }] },
    });
    users[first_name] = { email, token, user, firm: firms[firm] };
  }
  const parent = await api(server.baseUrl, '/parent-orders', {
    token: users.Ben.token, method: 'POST', body: { direction: 'BUY', instrument_id: instrument.instrument_id, quantity: 3000 },
  });
  return { instrument, users, parent };
}

/** The trader sends an RFQ through the Create RFQ drawer of the parent's card. */
async function sendRfq(page, { quantity, minutes }) {
  await page.getByRole('listitem', { name: /^Buy Euribor/ }).getByRole('button', { name: 'Request quotes' }).click();
  const drawer = page.locator('form', { has: page.getByRole('heading', { name: 'Create RFQ' }) });
  await drawer.getByRole('textbox', { name: 'Deadline (minutes)' }).fill(String(minutes));
  await drawer.getByRole('textbox', { name: 'Quantity' }).fill(String(quantity));
  await drawer.getByRole('combobox', { name: 'Liquidity providers' }).click();
  await page.getByRole('option', { name: 'Fathom' }).click();
  await drawer.getByRole('switch', { name: 'Hide identity' }).check();
  return drawer;
}

test('a trader sends an RFQ, the provider quotes, the trader accepts; an unanswered RFQ expires', async () => {
  const { server, clock, stop } = await frozenServer();
  const trader = await newPage(browser);
  const lp = await newPage(browser);
  const failed = [trader, lp].map((p) => failedCalls(p.page));
  try {
    const { users, parent } = await seedVenue(server);
    await signIn(trader.page, server.baseUrl, users.Ben.email, PASSWORD);
    await signIn(lp.page, server.baseUrl, users.Lena.email, PASSWORD);

    const drawer = await sendRfq(trader.page, { quantity: 2000, minutes: 5 });
    await shot(trader.page, T, '01-create-rfq-drawer');
    await drawer.getByRole('button', { name: 'Send RFQ' }).click();
    await trader.page.getByText('Your RFQ has been sent').waitFor();
    const panel = trader.page.getByRole('region', { name: 'Active RFQs' });
    await panel.getByText('Pending').waitFor();
    await shot(trader.page, T, '02-active-rfq-pending');

    // The provider: the RFQ arrives without a reload, anonymous, with its countdown.
    const incoming = lp.page.getByRole('region', { name: 'RFQs for you' });
    await incoming.getByText('Anonymous').waitFor();
    const lpText = await lp.page.locator('body').textContent();
    for (const secret of ['Kestrel', 'Ben']) assert.ok(!lpText.includes(secret), `the provider's screen shows ${secret}`);
    const offer = incoming.getByRole('textbox', { name: 'Offer price' });
    await offer.fill('-0.030');
    await incoming.getByRole('button', { name: 'Increase the offer price by one tick' }).click();
    assert.equal(await offer.inputValue(), '-0.025');
    await incoming.getByRole('textbox', { name: 'Offer quantity' }).fill('1500');
    await shot(lp.page, T, '03-provider-quote-form');
    await incoming.getByRole('button', { name: 'Send quote' }).click();
    await incoming.getByText('Received').waitFor();

    // The trader: the quote shows at once; accepting makes the trade.
    await panel.getByText('Received').waitFor();
    const accept = panel.getByRole('button', { name: 'Accept the quote of Fathom' });
    await until(async () => accept.isEnabled(), { what: 'Accept to be enabled' });
    await shot(trader.page, T, '04-quote-received');
    await accept.click();
    await trader.page.getByText('RFQ trade completed!').waitFor();
    await trader.page.getByText('You just completed your RFQ on the Euribor 3M Dec26-Mar27. Matched at -0.025 for 1,500').waitFor();
    await shot(trader.page, T, '05-rfq-trade-completed');

    // Both sides see the match; the broker is asked to accept each side.
    await trader.page.getByRole('listitem', { name: /^Buy Euribor/ }).getByRole('list', { name: 'Child orders' }).getByText('Matched', { exact: true }).waitFor();
    await lp.page.getByRole('listitem', { name: /^Sell Euribor/ }).getByRole('list', { name: 'Child orders' }).getByText('Matched', { exact: true }).waitFor();
    await shot(lp.page, T, '06-provider-matched');
    for (const token of [users.Ben.token, users.Lena.token]) {
      const matches = await api(server.baseUrl, '/order-match-requests?state=ACCEPTED', { token });
      assert.deepEqual(matches.map((m) => [m.price, m.quantity]), [[-0.025, 1500]]);
    }
    await waitForMail(server.mailDir, DESK, { skip: 0, pathPrefix: '/accept-order' });
    await waitForMail(server.mailDir, DESK, { skip: 1, pathPrefix: '/accept-order' });

    // An RFQ nobody answers ends at its deadline; its quantity goes back to the parent.
    await (await sendRfq(trader.page, { quantity: 1000, minutes: 1 })).getByRole('button', { name: 'Send RFQ' }).click();
    await panel.getByText('Pending').waitFor();
    await incoming.getByText('Anonymous').waitFor();
    clock.move(61);
    await until(async () => (await api(server.baseUrl, '/rfqs?state=EXPIRED', { token: users.Ben.token })).length === 1, { what: 'the RFQ to expire' });
    await panel.waitFor({ state: 'detached' });
    await incoming.waitFor({ state: 'detached' });
    await shot(trader.page, T, '07-after-expiry');
    const view = await api(server.baseUrl, `/parent-orders/${parent.parent_order_id}`, { token: users.Ben.token });
    assert.deepEqual(view.quantities, { tradable: 1500, working: 0, matched: 1500 });
    assert.deepEqual(failed, [[], []]);
  } finally {
    await trader.context.close();
    await lp.context.close();
    await stop();
  }
});
