// One-off: the README's tour after an hour of `upstairs demo` (not part of make test).
import { api, launchBrowser, login, newPage, signIn, until, TIPS } from './harness.mjs';
const B = 'http://127.0.0.1:18080';
const PW = 'Upstairs-Demo-1';
const halyard = await login(B, 'trader1@halyard.demo', PW);
const kestrel = await login(B, 'trader1@kestrel.demo', PW);
const instruments = await api(B, '/instruments', { token: halyard });
const byId = new Map(instruments.map((i) => [i.instrument_id, i]));
// 1. The seeded orders are inside their bands.
for (const [who, token] of [['Halyard', halyard], ['Kestrel', kestrel]]) {
  const orders = (await api(B, '/orders', { token })).filter((o) => o.state === 'WORKING');
  for (const o of orders) {
    const i = byId.get(o.instrument_id);
    const inBand = Number(o.price) >= Number(i.min_tick_price) && Number(o.price) <= Number(i.max_tick_price);
    console.log(`${who} ${o.direction} ${o.quantity} @ ${o.price} on ${i.name} band ${i.min_tick_price}..${i.max_tick_price} ${inBand ? 'in band' : 'OUTSIDE'}`);
  }
}
// 2. Halyard takes Kestrel's Euribor offer (Kestrel answers at once).
const euribor = instruments.find((i) => i.name.startsWith('Euribor'));
const offer = (await api(B, '/orders', { token: kestrel })).find((o) => o.state === 'WORKING' && o.direction === 'SELL' && o.instrument_id === euribor.instrument_id);
const parent = (await api(B, '/parent-orders?state=ACTIVE', { token: halyard })).find((p) => p.direction === 'BUY' && p.instrument_id === euribor.instrument_id);
const me = await api(B, '/users/me', { token: halyard });
const company = await api(B, `/companies/${me.company_id}`, { token: halyard });
const sent = await api(B, '/order-match-requests', {
  token: halyard, method: 'POST',
  body: { requesting_parent_order_id: parent.parent_order_id, price: offer.price, quantity: Math.min(offer.quantity, parent.quantities.tradable), requesting_broker_id: company.default_broker.company_id, dry_run: false },
});
console.log('take:', sent.map((m) => `${m.state} ${m.quantity} @ ${m.price}`).join(', '));
// 3. Kestrel's one-way RFQ to both providers; the best quote accepted.
const providers = await api(B, '/liquidity-providers', { token: kestrel });
const kParent = (await api(B, '/parent-orders?state=ACTIVE', { token: kestrel })).find((p) => p.quantities.tradable > 0);
const rfq = await api(B, '/rfqs', { token: kestrel, method: 'POST', body: { parent_order_id: kParent.parent_order_id, quantity: kParent.quantities.tradable, liquidity_provider_ids: providers.map((p) => p.company_id) } });
let quoted;
await until(async () => {
  const open = await api(B, '/rfqs?state=OPEN', { token: kestrel });
  quoted = open.find((r) => r.rfq_id === rfq.rfq_id)?.responses.find((r) => r.state === 'QUOTED' || (r.buy_price ?? r.sell_price) != null);
  return Boolean(quoted);
}, { timeoutMs: 30_000, what: 'a quote' });
const side = rfq.direction === 'BUY' ? 'sell' : 'buy';
const accepted = await api(B, `/rfqs/${rfq.rfq_id}/responses/${quoted.rfq_response_id}`, {
  token: kestrel, method: 'PATCH', body: { state: 'ACCEPTED', price: quoted[`${side}_price`], quantity: quoted[`${side}_quantity`] },
});
console.log(`rfq ${rfq.direction} ${rfq.quantity}: quote by ${quoted.company_name} ${quoted[`${side}_quantity`]} @ ${quoted[`${side}_price`]} → ${accepted.state}`);
// 4. The dashboard as Halyard sees it.
const browser = await launchBrowser();
try {
  const { page } = await newPage(browser, { width: 1440, height: 900 });
  await api(B, `/users/${me.user_id}`, { token: halyard, method: 'PATCH', body: { ui_metadata: [{ key: 'TOOLTIPS', value: TIPS.map((key) => ({ key, read: true })) }] } });
  await signIn(page, B, 'trader1@halyard.demo', PW);
  await page.getByTestId('ladder-row').first().waitFor();
  await page.waitForTimeout(1000);
  await page.screenshot({ path: '/tmp/hour/dashboard-after-an-hour.png' });
  console.log('Outside band chips on Halyard cards:', await page.getByText('Outside band').count());
} finally {
  await browser.close();
}
