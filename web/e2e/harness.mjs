// Shared setup for the browser tests: the real `upstairs` server on a fresh
// SQLite database and a free port, Debian's Chromium through playwright-core,
// e-mails read from the mail directory, and screenshots of every screen.
import { spawn, execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { simpleParser } from 'mailparser';
import { chromium } from 'playwright-core';

const webDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = resolve(webDir, process.env.UPSTAIRS_BIN ?? '../target/debug/upstairs');
export const DIST = join(webDir, 'dist');
export const SCREENSHOTS = join(webDir, 'e2e', 'screenshots');
export const ADMIN = { email: 'admin@upstairs.test', password: 'Admin-Pass-2026' };
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** A port free on 127.0.0.1 right now (the server's HTTP port, or another listener's, e.g. FIX). */
export function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
  });
}

/** Polls `check` until it returns a truthy value or the deadline passes. */
export async function until(check, { timeoutMs = 15_000, intervalMs = 100, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  let lastError;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      if (e.fatal) throw e;
      lastError = e;
    }
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}${lastError ? `: ${lastError.message}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Starts a fresh server with the bootstrap admin (and `env` on top, e.g. the calendar), or
 * with `demo` the demo venue (its data set and logins, README); call `stop()` when done.
 */
export async function startServer({ env: extraEnv = {}, demo = false } = {}) {
  // The binary may be missing for a moment while cargo relinks it.
  await until(() => existsSync(BIN), { timeoutMs: 60_000, intervalMs: 500, what: `the upstairs binary at ${BIN} (set UPSTAIRS_BIN)` });
  if (!existsSync(join(DIST, 'index.html'))) throw new Error('web/dist is missing: run `npm run build` first');
  const dir = mkdtempSync(join(tmpdir(), 'upstairs-e2e-'));
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const mailDir = join(dir, 'mail');
  mkdirSync(mailDir);
  const env = {
    ...process.env,
    UPSTAIRS_DATABASE_URL: `sqlite://${dir}/db.sqlite`,
    UPSTAIRS_MAIL_DIR: mailDir,
    UPSTAIRS_PUBLIC_URL: baseUrl,
    UPSTAIRS_WEB_DIR: DIST,
    UPSTAIRS_BIND: `127.0.0.1:${port}`,
    // No metrics address: servers run side by side, and its default (127.0.0.1:9464) is one.
    UPSTAIRS_METRICS_BIND: 'off',
    // The demo's trading robots act only where a test asks for them: nothing else moves its books.
    UPSTAIRS_DEMO_ROBOTS_EVERY: '0',
    ...extraEnv,
  };
  const createAdmin = [
    'user', 'create', '--email', ADMIN.email, '--password', ADMIN.password, '--role', 'upstairs-admin',
    '--company', 'Upstairs', '--first-name', 'Ada', '--last-name', 'Admin',
  ];
  // Retried only while the executable itself cannot be started (ETXTBSY during a relink).
  // The demo loads its data set into an empty database only: no bootstrap admin there.
  if (!demo) await until(
    async () => {
      try {
        await promisify(execFile)(BIN, createAdmin, { env });
        return true;
      } catch (e) {
        if (e.code === 'ETXTBSY' || e.code === 'ENOENT') return false;
        throw Object.assign(new Error(`upstairs user create failed: ${e.stderr || e.message}`), { fatal: true });
      }
    },
    { timeoutMs: 60_000, intervalMs: 500, what: 'upstairs user create' },
  );
  const child = spawn(BIN, [demo ? 'demo' : 'serve', '--bind', `127.0.0.1:${port}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d) => (log += d));
  child.stderr.on('data', (d) => (log += d));
  let exited = false;
  child.on('exit', () => (exited = true));
  try {
    await until(
      async () => {
        if (exited) throw new Error(`server exited:\n${log}`);
        const r = await fetch(`${baseUrl}/readyz`);
        return r.status === 200;
      },
      { timeoutMs: 30_000, what: 'GET /readyz' },
    );
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
  return {
    baseUrl,
    mailDir,
    database: join(dir, 'db.sqlite'),
    log: () => log,
    async stop() {
      if (!exited) {
        const done = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await Promise.race([done, new Promise((r) => setTimeout(r, 5_000))]);
        if (!exited) child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Calls the API as a signed-in user. */
export async function api(baseUrl, path, { token, method = 'GET', body } = {}) {
  const res = await fetch(`${baseUrl}/api${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const data = text ? JSON.parse(text) : undefined;
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${text}`);
  return data;
}

/** Creates a user as the bootstrap admin; the server e-mails an activation link. */
export async function createUserAsAdmin(baseUrl, { email, first_name = 'Tom', last_name = 'Trader', roles = ['trader'] }) {
  const { token } = await api(baseUrl, '/auth/login', { method: 'POST', body: { ...ADMIN, rememberMe: false } });
  const me = await api(baseUrl, '/users/me', { token });
  return api(baseUrl, '/users', { token, method: 'POST', body: { email, first_name, last_name, company_id: me.company_id, roles } });
}

/** Waits for an e-mail to `to` (beyond `skip` earlier ones) and returns it parsed with its first link. */
export async function waitForMail(mailDir, to, { skip = 0, pathPrefix } = {}) {
  return until(
    async () => {
      const mails = [];
      for (const f of readdirSync(mailDir).filter((n) => n.endsWith('.eml')).sort()) {
        const parsed = await simpleParser(readFileSync(join(mailDir, f)));
        const recipients = [parsed.to].flat().flatMap((a) => a?.value ?? []).map((v) => v.address?.toLowerCase());
        if (recipients.includes(to.toLowerCase())) mails.push(parsed);
      }
      const mail = mails[skip];
      if (!mail) return null;
      const body = `${mail.text ?? ''}\n${mail.html || ''}`;
      const links = [...body.matchAll(/https?:\/\/[^\s"'<>]+/g)].map((m) => m[0].replace(/&amp;/g, '&'));
      const link = links.find((l) => !pathPrefix || new URL(l).pathname.startsWith(pathPrefix));
      return link ? { mail, link } : null;
    },
    { timeoutMs: 15_000, what: `an e-mail to ${to}` },
  );
}

/** Launches Debian's Chromium headless. */
export async function launchBrowser() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Pages opened so far, to name each in the log of API calls refused or lost. */
let pages = 0;

/** A fresh page at 1440×900 (or another size) with the cookie choice already made unless asked otherwise. */
export async function newPage(browser, { width = 1440, height = 900, cookieConsent = true } = {}) {
  const context = await browser.newContext({ viewport: { width, height } });
  if (cookieConsent) {
    await context.addInitScript(() => {
      localStorage.setItem('upstairs.cookie-consent', JSON.stringify({ essential: true, functional: true, performance: true }));
    });
  }
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  // For the record when a test fails: every API call refused or lost, with its time.
  const who = `page ${++pages}`;
  page.on('response', (r) => {
    if (r.status() >= 400 && r.url().includes('/api/')) console.log(`${new Date().toISOString()} ${who}: ${r.status()} ${r.request().method()} ${r.url()}`);
  });
  page.on('requestfailed', (r) => {
    if (r.url().includes('/api/')) console.log(`${new Date().toISOString()} ${who}: failed ${r.method()} ${r.url()} (${r.failure()?.errorText})`);
  });
  return { context, page, errors };
}

/** Saves a full-page screenshot under e2e/screenshots/<test>/<name>.png. */
export async function shot(page, test, name) {
  const dir = join(SCREENSHOTS, test);
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true, animations: 'disabled' });
}

/** A session token for `email`. */
export async function login(baseUrl, email, password) {
  const { token } = await api(baseUrl, '/auth/login', { method: 'POST', body: { email, password, rememberMe: false } });
  return token;
}

/** Signs `page` in through the sign-in screen and waits for the dashboard. */
export async function signIn(page, baseUrl, email, password) {
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
}

/** A server always open whose clock stands at the start until `clock.move(seconds)`. */
export async function frozenServer() {
  const dir = mkdtempSync(join(tmpdir(), 'upstairs-clock-'));
  const file = join(dir, 'clock');
  const start = Date.now();
  const set = (ms) => writeFileSync(file, new Date(ms).toISOString());
  set(start);
  const server = await startServer({ env: { UPSTAIRS_ALWAYS_OPEN: 'true', UPSTAIRS_CLOCK_FILE: file } });
  let at = start;
  const pinned = [];
  return {
    server,
    clock: {
      async move(seconds) {
        at += seconds * 1000;
        set(at);
        for (const page of pinned) await page.clock.setFixedTime(at);
      },
      /**
       * The page's Date reads this clock from now on (its timers still run), so that its
       * countdowns count from the server's time: a 15 s preference never runs out in the
       * browser while the server's clock stands still, however slow the machine.
       */
      async pin(page) {
        pinned.push(page);
        await page.clock.setFixedTime(at);
      },
      /** Where it stands, in ms since the epoch. */
      now: () => at,
    },
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Every failed API response a page gets (none is expected in the flows that use it). */
export function failedCalls(page) {
  const failed = [];
  page.on('response', (r) => {
    if (r.url().includes('/api/') && r.status() >= 400) failed.push(`${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`);
  });
  return failed;
}

/**
 * Clears a user's match-request preference in the server's database (the API only sets
 * one): a responder without a preference is the only one whose requests wait the full
 * five minutes and time out, since the delayed preferences answer after 15 seconds.
 */
export async function clearPreference(server, email) {
  const script = 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("update app_user set auto_accept = null where email = ?", (sys.argv[2],)); c.commit()';
  await promisify(execFile)('python3', ['-c', script, server.database, email]);
}

/** The password of the traders `seedTwoFirms` makes. */
export const TRADER_PASSWORD = 'Trader-Pass-2026';
/** Every onboarding tip: a trader who has read them all sees none. */
export const TIPS = ['FIRST_PARENT_ORDER', 'INTERACT_WITH_ORDERBOOK', 'LEAVING_LIQUIDITY_IN_ORDERBOOK', 'TAKING_LIQUIDITY_IN_ORDERBOOK', 'FIRST_ICEBERG_ORDER'];

/**
 * A broker (Northgate, confirming by e-mail at `ops@northgate.test` when `byEmail`), two
 * trading firms using it (Halyard, Kestrel), an instrument (the Euribor spread on a 0.005
 * tick, band -0.04 to -0.015, block 500), and one activated trader per firm (Anna, Ben)
 * who answers match requests as `answers` says (at once unless told), with the tooltips
 * `tips` (a list, or a list per first name) read.
 */
export async function seedTwoFirms(server, { tips = [], answers = {}, byEmail = false } = {}) {
  const admin = await login(server.baseUrl, ADMIN.email, ADMIN.password);
  const post = (path, body) => api(server.baseUrl, path, { token: admin, method: 'POST', body });
  const broker = await post('/admin/companies', {
    name: 'Northgate', full_name: 'Northgate Clearing LLP', roles: ['broker'], trade_confirmation_email: 'ops@northgate.test',
    ...(byEmail ? { trade_confirmation_via_email_enabled: true } : {}),
  });
  const brokers = [{ company_id: broker.company_id }];
  const firms = {};
  for (const name of ['Halyard', 'Kestrel']) {
    firms[name] = await post('/admin/companies', { name, full_name: `${name} Capital LLP`, brokers, default_broker: brokers[0] });
  }
  const instrument = await post('/admin/instruments', {
    name: 'Euribor 3M Dec26-Mar27', term: 'Dec26-Mar27', min_quantity: 500, tick_size: 0.005, exchange_id: 'I', currency: 'EUR',
    min_tick_price: -0.04, max_tick_price: -0.015,
  });
  const traders = {};
  for (const [firm, email, first_name] of [['Halyard', 'anna@halyard.test', 'Anna'], ['Kestrel', 'ben@kestrel.test', 'Ben']]) {
    const user = await post('/users', { email, first_name, last_name: 'Trader', company_id: firms[firm].company_id, roles: ['trader'] });
    const { link } = await waitForMail(server.mailDir, email, { pathPrefix: '/account-activate' });
    await api(server.baseUrl, `/users/password-reset/${new URL(link).searchParams.get('hash')}`, { method: 'POST', body: { password: TRADER_PASSWORD } });
    const token = await login(server.baseUrl, email, TRADER_PASSWORD);
    const read = typeof tips === 'function' ? tips(first_name) : tips;
    const ui_metadata = read.length > 0 ? [{ key: 'TOOLTIPS', value: read.map((key) => ({ key, read: true })) }] : undefined;
    const auto_accept = answers[first_name] ?? 'INSTANT';
    await api(server.baseUrl, `/users/${user.user_id}`, { token, method: 'PATCH', body: { auto_accept, ...(ui_metadata ? { ui_metadata } : {}) } });
    traders[first_name] = { email, token, user, firm: firms[firm] };
  }
  return { admin, broker, instrument, traders };
}

/**
 * Types a date (DD/MM/YYYY, and HH:mm:ss after it when the field takes a time) into a
 * picker field, replacing what it held, as a keyboard user does: its sections take digits.
 */
export async function typeDate(page, label, text) {
  const field = page.getByRole('group', { name: label });
  await field.getByRole('spinbutton').first().click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Backspace');
  await page.keyboard.type(text.replace(/\D/g, ''));
}
