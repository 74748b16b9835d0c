// The Orders newsletter on the real server in Chromium: the venue admin creates a
// newsletter (the spec's messages first), adds a trader as recipient from the users
// list, previews the digest of resting interest in its sandboxed frame, sends it, and
// finds the digest queued in the e-mail outbox and written to the recipient.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN, api, failedCalls, launchBrowser, newPage, seedTwoFirms, shot, signIn, startServer, waitForMail } from './harness.mjs';

const T = 'newsletters';

let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

/** The two firms of the harness; Anna (Halyard) with an order resting in the book. */
async function seedVenue(server) {
  const { admin, broker, instrument, traders } = await seedTwoFirms(server);
  // The admin's match-request preference is set, so sign-in goes straight to the dashboard.
  const me = await api(server.baseUrl, '/users/me', { token: admin });
  await api(server.baseUrl, `/users/${me.user_id}`, { token: admin, method: 'PATCH', body: { auto_accept: 'INSTANT' } });
  const { token, user } = traders.Anna;
  const parent = await api(server.baseUrl, '/parent-orders', { token, method: 'POST', body: { direction: 'BUY', instrument_id: instrument.instrument_id, quantity: 5000 } });
  await api(server.baseUrl, '/orders', {
    token, method: 'POST',
    body: { parent_order_id: parent.parent_order_id, instrument_id: instrument.instrument_id, direction: 'BUY', quantity: 2000, limit_price: -0.025, residual: false, iceberg: false, broker_id: broker.company_id },
  });
  return { admin, user, instrument };
}

test('an admin creates a newsletter, adds a recipient, previews and sends the digest', async () => {
  const server = await startServer({ env: { UPSTAIRS_ALWAYS_OPEN: 'true' } });
  const { context, page, errors } = await newPage(browser);
  const failed = failedCalls(page);
  try {
    const { admin, user } = await seedVenue(server);
    await signIn(page, server.baseUrl, ADMIN.email, ADMIN.password);
    await page.getByRole('button', { name: 'Open menu' }).click();
    await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: 'Orders newsletter' }).click();
    await page.getByRole('heading', { name: 'Orders newsletter' }).waitFor();
    await page.getByText('No newsletters yet. Create one, then choose its recipients.').waitFor();
    assert.equal(new URL(page.url()).pathname, '/admin/orders-newsletter');
    await shot(page, T, '01-empty');

    // Create: the spec's messages, submit disabled until valid.
    await page.getByRole('button', { name: 'Create newsletter' }).click();
    const form = page.getByRole('form', { name: 'Create newsletter' });
    await form.getByRole('textbox', { name: 'Name' }).fill('E');
    await form.getByRole('textbox', { name: 'Description' }).fill('R');
    await form.getByRole('textbox', { name: 'Description' }).blur();
    await form.getByText('Name must be at least 2 characters long').waitFor();
    await form.getByText('Full name must be at least 4 characters long').waitFor();
    assert.equal(await form.getByRole('button', { name: 'Create newsletter' }).isDisabled(), true);
    await shot(page, T, '02-create-invalid');
    await form.getByRole('textbox', { name: 'Name' }).fill('Euribor desk');
    await form.getByRole('textbox', { name: 'Description' }).fill('Resting interest in Euribor spreads, for the rates desks');
    await form.getByRole('button', { name: 'Create newsletter' }).click();
    await page.getByTestId('toast').filter({ hasText: 'Euribor desk created.' }).waitFor();
    const list = page.getByRole('table', { name: 'Newsletters' });
    await list.getByRole('row', { name: /^Euribor desk Resting interest in Euribor spreads, for the rates desks 0 Never/ }).waitFor();

    // Recipients: the trader from the users list (page 0 of 200).
    const usersCall = page.waitForRequest((r) => r.url().includes('/api/admin/users'));
    await list.getByRole('button', { name: 'Recipients of Euribor desk' }).click();
    assert.match((await usersCall).url(), /\/api\/admin\/users\?page=0&size=200$/);
    const drawer = page.getByRole('region', { name: 'Recipients of Euribor desk' });
    await drawer.getByText('No recipients yet. Choose users above to add them.').waitFor();
    await drawer.getByRole('combobox', { name: 'Users to add' }).fill('anna');
    await page.getByRole('option', { name: /Anna Trader/ }).click();
    await shot(page, T, '03-recipients-choose');
    await drawer.getByRole('button', { name: 'Add recipient' }).click();
    await page.getByTestId('toast').filter({ hasText: '1 recipient added to Euribor desk.' }).waitFor();
    await drawer.getByRole('listitem').filter({ hasText: 'anna@halyard.test · Halyard' }).waitFor();
    await drawer.getByRole('heading', { name: '1 recipient' }).waitFor();
    await shot(page, T, '04-recipients');
    await drawer.getByRole('button', { name: 'Done' }).click();
    await list.getByRole('row', { name: /^Euribor desk .* 1 Never/ }).waitFor();

    // Preview: the digest in a frame with no rights; Anna's resting order, no firm named.
    await list.getByRole('button', { name: 'Preview Euribor desk' }).click();
    const preview = page.getByRole('dialog', { name: 'Preview of Euribor desk' });
    await preview.getByTestId('preview-subject').filter({ hasText: 'Upstairs orders digest: Euribor desk' }).waitFor();
    const frame = preview.locator('iframe');
    assert.equal(await frame.getAttribute('sandbox'), '');
    const body = preview.frameLocator('iframe').locator('body');
    await body.getByText('Euribor 3M Dec26-Mar27').first().waitFor();
    const text = await body.innerText();
    assert.match(text, /Bids: 2,000 @ -0\.025/);
    assert.doesNotMatch(text, /Halyard|Northgate/);
    await shot(page, T, '05-preview');

    // Send, after a confirmation that says to how many.
    await preview.getByRole('button', { name: 'Send…' }).click();
    const confirm = page.getByRole('dialog', { name: 'Send Euribor desk?' });
    await confirm.getByText('The digest of resting interest goes out now to 1 recipient, one e-mail each. It cannot be recalled.').waitFor();
    await shot(page, T, '06-send-confirm');
    await confirm.getByRole('button', { name: 'Send to 1 recipient' }).click();
    await page.getByTestId('toast').filter({ hasText: 'Euribor desk sent: 1 e-mail queued.' }).waitFor();
    await list.getByRole('row', { name: /^Euribor desk .* 1 \d{2}\/\d{2}\/\d{4} \d{2}:\d{2}/ }).waitFor();
    await shot(page, T, '07-sent');

    // The outbox has the digest to Anna, and it reaches her.
    const outbox = await api(server.baseUrl, '/admin/outbox?page=0&size=50', { token: admin });
    const digest = outbox.items.find((m) => m.kind === 'ORDERS_DIGEST');
    assert.ok(digest, `no digest in ${JSON.stringify(outbox.items.map((m) => m.kind))}`);
    assert.equal(digest.to, user.email);
    assert.equal(digest.summary, "Orders digest 'Euribor desk': 1 instrument with resting interest");
    const { mail } = await waitForMail(server.mailDir, user.email, { skip: 1 });
    assert.equal(mail.subject, 'Upstairs orders digest: Euribor desk');
    assert.match(mail.text, /Bids: 2,000 @ -0\.025/);

    assert.deepEqual(failed, []);
    // The harness's init script (the cookie choice in localStorage) also runs in the preview's
    // frame, where the sandbox denies storage: proof the frame has no same-origin rights.
    const sandboxed = (e) => /The document is sandboxed and lacks the 'allow-same-origin' flag/.test(e.message);
    assert.deepEqual(errors.filter((e) => !sandboxed(e)), []);
  } finally {
    await context.close();
    await server.stop();
  }
});
