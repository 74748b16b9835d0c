import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  ADMIN,
  api,
  createUserAsAdmin,
  launchBrowser,
  newPage,
  shot,
  startServer,
  waitForMail,
} from './harness.mjs';

let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

/** Runs a test against its own fresh server and closes everything afterwards. */
function withServer(name, fn) {
  test(name, async () => {
    const server = await startServer();
    const { context, page, errors } = await newPage(browser);
    try {
      await fn({ server, page, context });
      assert.deepEqual(errors.map(String), [], 'no uncaught errors in the page');
    } catch (e) {
      console.error(server.log().slice(-4000));
      throw e;
    } finally {
      await context.close();
      await server.stop();
    }
  });
}

async function signIn(page, email, password) {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

async function storedToken(page) {
  return page.evaluate(() => localStorage.getItem('upstairs.token') ?? sessionStorage.getItem('upstairs.token'));
}

withServer('sign in, first-time settings, dashboard, account, logout', async ({ server, page }) => {
  const T = 'sign-in';
  await page.goto(`${server.baseUrl}/login`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await shot(page, T, '01-login');

  await signIn(page, ADMIN.email, 'Wrong-Pass-2026');
  await page.getByRole('alert').filter({ hasText: 'Invalid email or password.' }).waitFor();
  await shot(page, T, '02-login-failed');

  await signIn(page, ADMIN.email, ADMIN.password);
  await page.waitForURL('**/settings');
  await page.getByRole('heading', { name: 'Welcome to Upstairs' }).waitFor();
  assert.equal(await page.getByRole('navigation', { name: 'breadcrumb' }).count(), 0);
  await shot(page, T, '03-first-time-settings');

  await page.getByRole('button', { name: 'Submit' }).click();
  await page.getByText('Required field. Please select one').waitFor();
  await shot(page, T, '04-settings-required');

  await page.getByRole('radio', { name: /Accept with delay/ }).check();
  await page.getByRole('button', { name: 'Submit' }).click();
  await page.waitForURL('**/dashboard');
  await page.getByText('Your preferences have been set successfully').waitFor();
  // A venue admin does not trade: its dashboard leads to the admin areas, never to
  // the trader's Getting started (issue 28.17).
  await page.getByRole('navigation', { name: 'Admin areas' }).getByRole('link', { name: 'Orders panel' }).waitFor();
  assert.equal(await page.getByRole('heading', { name: 'Getting started' }).count(), 0);
  for (const width of [1280, 1440, 1920]) {
    await page.setViewportSize({ width, height: 900 });
    await shot(page, T, `05-dashboard-${width}`);
  }

  const token = await storedToken(page);
  const me = await api(server.baseUrl, '/users/me', { token });
  assert.equal(me.auto_accept, 'ACCEPT_WITH_DELAY');

  await page.getByRole('button', { name: 'Profile menu' }).click();
  await page.getByRole('menu').getByText(ADMIN.email).waitFor();
  await shot(page, T, '06-profile-menu');
  await page.getByRole('menuitem', { name: 'Settings' }).click();
  await page.waitForURL('**/settings');
  await page.getByRole('heading', { name: 'Settings' }).waitFor();
  assert.equal(await page.getByRole('radio', { name: /Accept with delay/ }).isChecked(), true);
  await page.getByRole('radio', { name: /Instant/ }).check();
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Your preferences have been updated successfully').waitFor();
  await shot(page, T, '07-settings');

  await page.getByRole('button', { name: 'Profile menu' }).click();
  await page.getByRole('menuitem', { name: 'Account' }).click();
  await page.getByRole('heading', { name: 'Account information' }).waitFor();
  await page.getByText('Ada Admin').waitFor();
  await shot(page, T, '08-account');

  await page.getByRole('button', { name: 'Profile menu' }).click();
  await page.getByRole('menuitem', { name: 'Logout' }).click();
  await page.waitForURL('**/login');
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  assert.equal(await storedToken(page), null);
  await assert.rejects(api(server.baseUrl, '/users/me', { token }), /401/, 'logout revokes the session on the server');
});

withServer('forgot password, e-mailed link, new password, sign in', async ({ server, page }) => {
  const T = 'forgot-password';
  await page.goto(`${server.baseUrl}/login`);
  await page.getByRole('link', { name: 'Forgot password?' }).click();
  await page.waitForURL('**/reset-password');
  const send = page.getByRole('button', { name: 'Send link' });
  assert.equal(await send.isDisabled(), true);
  await shot(page, T, '01-request');
  await page.getByLabel('Email').fill(ADMIN.email);
  await send.click();
  await page.getByRole('heading', { name: 'All done!' }).waitFor();
  await shot(page, T, '02-all-done');

  const { link } = await waitForMail(server.mailDir, ADMIN.email, { pathPrefix: '/reset-password' });
  assert.match(link, /\/reset-password\?hash=/);
  await page.goto(link);
  await page.getByRole('heading', { name: 'Create Your New Password' }).waitFor();
  await page.getByLabel('Create Password', { exact: true }).fill('short');
  await shot(page, T, '03-rules');
  await page.getByLabel('Create Password', { exact: true }).fill('Fresh-Start-2026');
  await page.getByLabel('Repeat Password', { exact: true }).fill('Fresh-Start-2027');
  await page.getByText('Passwords do not match. Please try again').waitFor();
  await page.getByLabel('Repeat Password', { exact: true }).fill('Fresh-Start-2026');
  await shot(page, T, '04-ready');
  await page.getByRole('button', { name: 'Save password' }).click();
  await page.getByText('Your password has been updated successfully. You can now log in.').waitFor();
  await shot(page, T, '05-updated');
  await page.waitForURL('**/login');

  await signIn(page, ADMIN.email, ADMIN.password);
  await page.getByRole('alert').filter({ hasText: 'Invalid email or password.' }).waitFor();
  await shot(page, T, '06-login-old-password');
  await signIn(page, ADMIN.email, 'Fresh-Start-2026');
  await page.waitForURL('**/settings');
  await page.getByRole('heading', { name: 'Welcome to Upstairs' }).waitFor();
  await shot(page, T, '07-signed-in');

  // The link is spent now.
  await page.evaluate(() => sessionStorage.clear());
  await page.goto(link);
  await page.getByRole('heading', { name: 'Oops! Your link has expired' }).waitFor();
  await shot(page, T, '08-used-link');
});

withServer('activation of an admin-created user, a used link and a new link', async ({ server, page }) => {
  const T = 'activation';
  const email = 'tom.trader@upstairs.test';
  await createUserAsAdmin(server.baseUrl, { email });
  const { link } = await waitForMail(server.mailDir, email, { pathPrefix: '/account-activate' });

  await page.goto(link);
  await page.getByRole('heading', { name: 'Welcome to Upstairs!' }).waitFor();
  await page.getByText('Create a password to activate your account').waitFor();
  await shot(page, T, '01-welcome');
  await page.getByRole('button', { name: 'Create' }).click();
  await page.waitForURL('**/password?hash=*');
  await page.getByRole('heading', { name: 'Create Your New Password' }).waitFor();
  await page.getByLabel('Create Password', { exact: true }).fill('Tom-Trades-2026');
  await page.getByLabel('Repeat Password', { exact: true }).fill('Tom-Trades-2026');
  await shot(page, T, '02-password');
  await page.getByRole('button', { name: 'Save password' }).click();
  await page.getByText('Your password has been updated successfully. You can now log in.').waitFor();
  await page.waitForURL('**/login');
  await shot(page, T, '03-login-after-activation');

  await page.goto(link);
  await page.getByRole('heading', { name: 'Oops! Your link has expired' }).waitFor();
  await shot(page, T, '04-expired');
  await page.getByRole('button', { name: 'Request new link' }).click();
  await page.getByRole('heading', { name: "Let's get you started" }).waitFor();
  await page.getByLabel('Email').fill(email);
  await shot(page, T, '05-request-new-link');
  await page.getByRole('button', { name: 'Send link' }).click();
  await page.getByRole('heading', { name: 'All done!' }).waitFor();
  await shot(page, T, '06-all-done');

  const second = await waitForMail(server.mailDir, email, { skip: 1 });
  assert.notEqual(second.link, link);
  await page.goto(second.link);
  await page.getByRole('heading', { name: /^Welcome to Upstairs|Create Your New Password$/ }).waitFor();
  await shot(page, T, '07-new-link');

  await page.goto(`${server.baseUrl}/login`);
  await signIn(page, email, 'Tom-Trades-2026');
  await page.waitForURL('**/settings');
  await page.getByRole('heading', { name: 'Welcome to Upstairs' }).waitFor();
  await shot(page, T, '08-first-sign-in');
});

withServer('protected route redirect and return, keyboard sign-in, 404', async ({ server, page }) => {
  const T = 'protected';
  const { token } = await api(server.baseUrl, '/auth/login', { method: 'POST', body: { ...ADMIN, rememberMe: false } });
  const me = await api(server.baseUrl, '/users/me', { token });
  await api(server.baseUrl, `/users/${me.user_id}`, { token, method: 'PATCH', body: { auto_accept: 'INSTANT' } });

  await page.goto(`${server.baseUrl}/user/account`);
  await page.waitForURL('**/login');
  await page.getByLabel('Email').waitFor();
  await shot(page, T, '01-redirected-to-login');
  await page.keyboard.type(ADMIN.email);
  await page.keyboard.press('Tab');
  await page.keyboard.type(ADMIN.password);
  await page.keyboard.press('Enter');
  await page.waitForURL('**/user/account');
  await page.getByRole('heading', { name: 'Account information' }).waitFor();
  await shot(page, T, '02-returned-to-account');
  await page.getByRole('link', { name: 'Return to Dashboard' }).click();
  await page.waitForURL('**/dashboard');
  await page.getByRole('navigation', { name: 'Admin areas' }).waitFor();
  await shot(page, T, '03-dashboard');

  await page.goto(`${server.baseUrl}/login`);
  await page.waitForURL('**/dashboard');

  // A session revoked elsewhere: the next call answers 401, which logs out.
  await page.getByRole('button', { name: 'Profile menu' }).click();
  await page.getByRole('menuitem', { name: 'Settings' }).click();
  await page.getByRole('heading', { name: 'Settings' }).waitFor();
  await shot(page, T, '04-settings');
  const browserToken = await storedToken(page);
  await api(server.baseUrl, '/auth/session', { token: browserToken, method: 'DELETE' });
  await page.getByRole('radio', { name: /Reject with delay/ }).check();
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.waitForURL('**/login');
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  assert.equal(await storedToken(page), null);
  await shot(page, T, '05-logged-out-after-401');

  await page.goto(`${server.baseUrl}/no/such/page`);
  await page.getByRole('heading', { name: 'Oops! Page Not Found (404)' }).waitFor();
  await page.getByRole('link', { name: '+44 20 7946 0000' }).waitFor();
  await shot(page, T, '06-not-found');
  await page.getByRole('link', { name: 'Go to the homepage' }).click();
  await page.waitForURL('**/login');

  // The policy links of the sign-in page are served as static pages.
  for (const [path, title] of [['/privacy-policy.html', 'Privacy policy'], ['/cookie-policy.html', 'Cookie policy']]) {
    const res = await fetch(`${server.baseUrl}${path}`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), new RegExp(`<h1>${title}</h1>`));
  }
});

test('cookie banner and screens at 1280×720', async () => {
  const server = await startServer();
  const { context, page } = await newPage(browser, { width: 1280, height: 720, cookieConsent: false });
  try {
    const T = 'small-screen';
    await page.goto(`${server.baseUrl}/login`);
    await page.getByRole('region', { name: 'Cookie consent' }).waitFor();
    // Trader spec section 1: sales support by e-mail and by phone, from the server's configuration.
    const config = await (await fetch(`${server.baseUrl}/api/config`)).json();
    const sales = page.getByTestId('sales-contact');
    assert.equal(await sales.getByRole('link', { name: config.support_email }).getAttribute('href'), `mailto:${config.support_email}`);
    assert.equal(await sales.getByRole('link', { name: config.support_phone }).getAttribute('href'), `tel:${config.support_phone.replace(/\s+/g, '')}`);
    await shot(page, T, '01-login-cookie-banner');
    await page.getByRole('button', { name: 'Manage' }).click();
    await shot(page, T, '02-cookie-manage');
    await page.getByRole('button', { name: 'Save Preferences' }).click();
    assert.equal(await page.getByRole('region', { name: 'Cookie consent' }).count(), 0);
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Welcome to Upstairs' }).waitFor();
    await shot(page, T, '03-first-time-settings');
    // Keyboard only: into the radio group, choose with the arrows, tab to Submit, Enter.
    // Past the top bar (menu button, logo, profile menu) to the first radio.
    for (let i = 0; i < 6 && !(await page.evaluate(() => document.activeElement?.getAttribute('type') === 'radio')); i++) {
      await page.keyboard.press('Tab');
    }
    await page.keyboard.press('Space');
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.getByRole('radio', { name: /Accept with delay/ }).isChecked(), true);
    for (let i = 0; i < 6 && !(await page.evaluate(() => document.activeElement?.textContent === 'Submit')); i++) {
      await page.keyboard.press('Tab');
    }
    await page.keyboard.press('Enter');
    await page.getByRole('navigation', { name: 'Admin areas' }).waitFor();
    await shot(page, T, '04-dashboard');
    await page.reload();
    assert.equal(await page.getByRole('region', { name: 'Cookie consent' }).count(), 0, 'the choice is remembered');
    await page.goto(`${server.baseUrl}/user/account`);
    await page.getByRole('heading', { name: 'Account information' }).waitFor();
    await shot(page, T, '05-account');
    await page.goto(`${server.baseUrl}/settings`);
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    await shot(page, T, '06-settings');
    await page.goto(`${server.baseUrl}/reset-password?hash=not-a-real-link`);
    await page.getByRole('heading', { name: 'Oops! Your link has expired' }).waitFor();
    await shot(page, T, '07-expired-link');
    await page.getByRole('button', { name: 'Request new link' }).click();
    await page.getByRole('heading', { name: 'Forgot password?' }).waitFor();
    await shot(page, T, '08-forgot-password');
    await page.goto(`${server.baseUrl}/nowhere`);
    await page.getByRole('heading', { name: 'Oops! Page Not Found (404)' }).waitFor();
    await shot(page, T, '09-not-found');
  } finally {
    await context.close();
    await server.stop();
  }
});
