#!/usr/bin/env node
// From a provider's price to the changed ladder in another firm's browser session, beside a
// STOMP-over-WebSocket round trip from the same page, in the same run (issue 30's acceptance).
//
// Run through bench/run.sh (it builds the release binary and web/dist, and makes the venv):
//
//     bench/run.sh md-browser sqlite
//     bench/run.sh md-browser postgres
//     UPSTAIRS_BIN=target/debug/upstairs bench/run.sh md-browser sqlite --samples 10
//
// What one run does, on 127.0.0.1 only and bounded in time (--max-seconds):
//
// 1. As bench/md_latency.py: starts the market-data provider, a real QuickFIX acceptor
//    (tests/peers/md_provider.py, run by the project's venv Python, password checked), on a
//    free port, then `upstairs serve --always-open` on a fresh database (a SQLite file in a
//    temporary folder, or a new schema of --pg-url) with its --md-* settings pointed at the
//    provider and UPSTAIRS_WEB_DIR=web/dist. Through the API: a broker, a firm ("Watchers"),
//    a trader of it (made by the CLI; preferences set and every tip read, as
//    web/e2e/harness.mjs seedTwoFirms does, so no dialog opens), one instrument on a
//    10-tick band (tick 0.01, 94.70–94.80) whose exchange instrument id is SYM0, and a buy
//    parent order of the trader on it. The provider is given SYM0's price at that band (a
//    quiet snapshot); the run waits (at most 40 s) for the venue's subscription.
// 2. Chromium (Debian's, through playwright-core, launched as the browser tests do) signs
//    the trader in through the sign-in screen; the dashboard shows the instrument's book
//    (region "Order book …") and the run waits for its ladder rows. A MutationObserver,
//    installed before the app loads, reads on every DOM change the band the ladder shows:
//    the tradable rows ([data-testid="ladder-row"] without aria-disabled; the ladder
//    renders every row, max + 2 ticks down to min − 2, no virtualization) and, when it
//    differs from the last one seen, records it with performance.timeOrigin +
//    performance.now(), and the next animation frame's stamp. A listener added to the
//    app's own WebSocket (the constructor wrapped, the app's handlers untouched) stamps
//    each book MESSAGE frame's band as it reaches the page.
// 3. `--samples` times, `--spacing` ms apart (150: more than the server's 50 ms book-push
//    window), the provider is told a new band for SYM0, one tick up or down from the last
//    (from 94.70–94.80 up to 94.90–95.00 and back; never the same twice in a row): one 35=X.
//    Measured: from the provider's `sent` event for that X (stamped when this process
//    reads it from the provider's stdout) to the page's record of that band; from the
//    command's write to it; and the parts (X sent → frame in the page, frame → ladder,
//    ladder → next animation frame). Interleaved, after each sample, the ceiling: the
//    page's own STOMP 1.2 session over WebSocket at /ws (CONNECT with the trader's bearer
//    token and the app's sub-protocols), SUBSCRIBE /user/topic/notifications with a
//    `receipt` → RECEIPT, timed in the page with performance.now(), then UNSUBSCRIBE.
// 4. Prints the table; it never asserts.
//
// The stamps of the price path cross processes: the `sent` and command stamps are this
// Node process's performance.timeOrigin + performance.now(), the ladder's and the frame's
// Chromium's renderer's; both clocks are the machine's wall clock. Node's reads at
// sub-microsecond resolution, Chromium's at 100 µs (it coarsens performance.now() for a
// page not cross-origin isolated). The run checks the two clocks against each other
// (a page read bracketed by two Node reads, the tightest of 20) before and after, and prints
// the offset; it corrects nothing. The ceiling's stamps are both the page's.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, rmSync, closeSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort, newPage, TIPS } from '../web/e2e/harness.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..');
const PROVIDER = join(ROOT, 'tests', 'peers', 'md_provider.py');
const PYTHON = join(ROOT, '.venv', 'bin', 'python');
const DIST = join(ROOT, 'web', 'dist');
const ADMIN = 'admin@bench.test';
const PASSWORD = 'Bench-Pass-2026';
const TRADER = 'watcher@bench.test';
const MD_PASSWORD = 'Bench-MD-pass';
const SENDER = 'UPSTAIRS-MD';
const TARGET = 'PROVIDER';
const SYMBOL = 'SYM0';
const NAME = 'Bench MD Browser Dec26-Mar27';
// The band in ticks of 0.01: 94.70–94.80 (10 ticks) at first, then one tick up or down a sample.
const LO = 9470;
const WIDTH = 10;
const SWING = 20;
const CEILING_DEST = '/user/topic/notifications';
const { chromium } = createRequire(join(ROOT, 'web', 'package.json'))('playwright-core');

/**
 * Debian's Chromium headless with web/e2e/harness.mjs launchBrowser's flags; Playwright's
 * own signal handlers off, so that Ctrl-C runs this script's cleanup (Playwright's exits at once).
 */
function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

const { values: opt, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    bin: { type: 'string', default: process.env.UPSTAIRS_BIN ?? join(ROOT, 'target', 'release', 'upstairs') },
    'pg-url': { type: 'string', default: process.env.UPSTAIRS_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test' },
    samples: { type: 'string', default: '200' },
    spacing: { type: 'string', default: '150' },
    'wait-ms': { type: 'string', default: '5000' },
    'max-seconds': { type: 'string', default: '600' },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
const USAGE = 'usage: node bench/md_browser.mjs sqlite|postgres [--bin PATH] [--pg-url URL] [--samples 200] [--spacing 150 (ms)] [--wait-ms 5000] [--max-seconds 600] [--keep]';
if (opt.help) {
  console.log(USAGE);
  process.exit(0);
}
const backend = positionals[0];
if (!['sqlite', 'postgres'].includes(backend)) {
  console.error(USAGE);
  process.exit(2);
}
const samples = Number(opt.samples);
const spacing = Number(opt.spacing);
const waitMs = Number(opt['wait-ms']);
const bin = resolve(opt.bin);
if (!(samples > 0) || !(spacing > 0) || !(waitMs > 0)) {
  console.error('--samples, --spacing and --wait-ms: positive numbers');
  process.exit(2);
}

/** Wall-clock milliseconds, sub-microsecond resolution (the same scale as the page's stamps). */
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const price = (t) => `${Math.floor(t / 100)}.${String(t % 100).padStart(2, '0')}`;
/** The k-th band's lower edge (k = 0 is the created band): a triangle, one tick a step. */
const bandLo = (k) => LO + (k % (2 * SWING) <= SWING ? k % (2 * SWING) : 2 * SWING - (k % (2 * SWING)));

// ---------------------------------------------------------------- cleanup

const cleanups = [];
// What must not outlive the run even if it exits without its cleanup: killed, removed, dropped at exit.
const lastResort = [];
process.on('exit', () => {
  for (const f of lastResort.reverse()) {
    try {
      f();
    } catch {
      // best effort
    }
  }
});
let interrupted = false;
let cleaning = null;
function cleanup() {
  cleaning ??= (async () => {
    for (const f of cleanups.splice(0).reverse()) {
      try {
        await f();
      } catch (e) {
        console.error(`cleanup: ${e.message}`);
      }
    }
  })();
  return cleaning;
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${sig}: cleaning up`);
    void cleanup().then(() => process.exit(130));
  });
}
const watchdog = setTimeout(() => {
  console.error(`the run took more than ${opt['max-seconds']} s: stopping`);
  void cleanup().then(() => process.exit(1));
}, Number(opt['max-seconds']) * 1000);
watchdog.unref();

function fail(message) {
  throw Object.assign(new Error(message), { bench: true });
}

/** Waits for a child to exit, at most `ms`; true when it did. */
function exited(child, ms) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return Promise.race([new Promise((r) => child.once('exit', () => r(true))), sleep(ms).then(() => false)]);
}

// ---------------------------------------------------------------- the database and the venue

function psql(url, sql) {
  execFileSync('psql', [url, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', sql], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, PGOPTIONS: '-c client_min_messages=warning' },
  });
}

/** A fresh database with the venue admin: SQLite in `dir`, or a new schema of --pg-url (dropped afterwards unless --keep). */
function freshDatabase(dir) {
  let url = `sqlite://${dir}/upstairs.db`;
  if (backend === 'postgres') {
    const pg = opt['pg-url'];
    const schema = `bench_browser_${Math.floor(Date.now() / 1000)}_${process.pid}`;
    psql(pg, `create schema ${schema}`);
    let dropped = false;
    lastResort.push(() => dropped || opt.keep || psql(pg, `drop schema ${schema} cascade`));
    cleanups.push(() => {
      dropped = true;
      if (opt.keep) console.log(`kept the PostgreSQL schema ${schema} (drop schema ${schema} cascade)`);
      else psql(pg, `drop schema ${schema} cascade`);
    });
    url = `${pg}${pg.includes('?') ? '&' : '?'}options%5Bsearch_path%5D=${schema}`;
  }
  return url;
}

async function api(base, path, { token, method = 'GET', body } = {}) {
  const res = await fetch(`${base}/api${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) fail(`setup failed: ${method} ${path} → ${res.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const signInApi = async (base, email) =>
  (await api(base, '/auth/login', { method: 'POST', body: { email, password: PASSWORD, rememberMe: true } })).token;

async function startServer(dir, env, mdPort) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const log = openSync(join(dir, 'server.log'), 'w');
  const child = spawn(bin, ['serve', '--bind', `127.0.0.1:${port}`, '--always-open'], {
    env: {
      ...env,
      UPSTAIRS_PUBLIC_URL: base,
      UPSTAIRS_MD_CONNECT: `127.0.0.1:${mdPort}`,
      UPSTAIRS_MD_SENDER_COMP_ID: SENDER,
      UPSTAIRS_MD_TARGET_COMP_ID: TARGET,
      UPSTAIRS_MD_PASSWORD: MD_PASSWORD,
    },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  lastResort.push(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
  cleanups.push(async () => {
    child.kill('SIGTERM');
    if (!(await exited(child, 15_000))) child.kill('SIGKILL');
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/readyz`)).status === 200) return { base, pid: child.pid };
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) fail(`the server did not start; see ${dir}/server.log (--keep)`);
    await sleep(50);
  }
}

// ---------------------------------------------------------------- the provider

/** The provider and its events: every X it sent for SYM0 stamped on arrival (by its bid). */
async function startProvider(dir, port) {
  const child = spawn(PYTHON, [PROVIDER, '--port', String(port), '--sender', TARGET, '--target', SENDER,
    '--password', MD_PASSWORD, '--store', join(dir, 'provider')], { stdio: ['pipe', 'pipe', 'inherit'] });
  lastResort.push(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
  cleanups.push(async () => {
    child.stdin.end(); // "stop": logs out and exits
    if (!(await exited(child, 15_000))) child.kill('SIGKILL');
  });
  const feed = { child, listening: false, symbols: new Set(), errors: [], logouts: 0, logon: false, onSent: null, closed: false };
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    const at = now();
    let ev;
    try {
      ev = JSON.parse(line);
    } catch {
      return;
    }
    switch (ev.event) {
      case 'sent':
        if (ev.msg_type === 'X') {
          const symbol = ev.fields.find(([tag]) => tag === 55)?.[1];
          const bid = ev.fields.find(([tag]) => tag === 270)?.[1]; // the first entry is the bid
          if (symbol === SYMBOL && bid !== undefined) feed.onSent?.(Math.round(Number(bid) * 100), at);
        }
        break;
      case 'listening':
        feed.listening = true;
        break;
      case 'logon':
        feed.logon = true;
        break;
      case 'logout':
        feed.logouts += 1;
        break;
      case 'subscribed':
        for (const s of ev.symbols ?? []) feed.symbols.add(s);
        break;
      case 'error':
      case 'logon_refused':
        feed.errors.push(ev.text);
        break;
    }
  });
  child.on('exit', () => (feed.closed = true));
  feed.send = (cmd) => child.stdin.write(`${JSON.stringify(cmd)}\n`);
  const deadline = Date.now() + 30_000;
  while (!feed.listening) {
    if (feed.closed || Date.now() > deadline) fail(`the provider did not start: ${feed.errors.join('; ')}`);
    await sleep(20);
  }
  return feed;
}

// ---------------------------------------------------------------- the page

/** Installed before the app loads: the ladder's band as the DOM shows it, the book frames as they arrive, the ceiling. */
function pageProbe({ name, dest }) {
  const bench = (window.__bench = { records: [], frames: [], waiters: [], last: '' });
  const stamp = () => performance.timeOrigin + performance.now();
  const ticks = (v) => Math.round(Number(v) * 100);
  const selector = `section[aria-label="${CSS.escape(`Order book ${name}`)}"] [data-testid="ladder-row"]:not([aria-disabled])`;
  const notify = () => {
    for (const w of bench.waiters.slice()) w();
  };
  const look = () => {
    const rows = document.querySelectorAll(selector);
    if (rows.length === 0) return;
    const a = ticks(rows[0].dataset.price);
    const b = ticks(rows[rows.length - 1].dataset.price);
    const key = `${Math.min(a, b)}-${Math.max(a, b)}`;
    if (key === bench.last) return;
    bench.last = key;
    const rec = { min: Math.min(a, b), max: Math.max(a, b), t: stamp(), raf: null, rows: rows.length };
    bench.records.push(rec);
    requestAnimationFrame(() => (rec.raf = stamp()));
    notify();
  };
  new MutationObserver(look).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['aria-disabled', 'data-price'] });

  // The app's socket: one more listener stamps each book frame's band (the app's own handlers are untouched).
  const Native = window.WebSocket;
  bench.Native = Native;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => {
        const t = stamp();
        if (typeof e.data !== 'string' || !e.data.startsWith('MESSAGE') || !e.data.includes('/book\n')) return;
        try {
          const head = e.data.indexOf('\n\n');
          const body = JSON.parse(e.data.slice(head + 2).replace(/\0[\s\S]*$/, ''));
          if (body.min_tick_price === undefined) return;
          bench.frames.push({ min: ticks(body.min_tick_price), max: ticks(body.max_tick_price), t, bytes: e.data.length });
          notify();
        } catch {
          // not a book frame
        }
      });
    }
  };

  /** The first record of band min–max from index `from` on, and the first frame of it from `fromFrame` on (or null). */
  bench.wait = (min, max, from, fromFrame, timeoutMs) =>
    new Promise((res) => {
      const find = () => {
        const rec = bench.records.slice(from).find((r) => r.min === min && r.max === max);
        if (!rec) return false;
        const frame = bench.frames.slice(fromFrame).find((f) => f.min === min && f.max === max) ?? null;
        // The next animation frame's stamp comes a little later.
        const done = () => res({ t: rec.t, raf: rec.raf, rows: rec.rows, frame: frame && frame.t, bytes: frame && frame.bytes });
        if (rec.raf !== null) done();
        else requestAnimationFrame(() => setTimeout(done, 0));
        return true;
      };
      if (find()) return;
      const waiter = () => {
        if (find()) {
          bench.waiters.splice(bench.waiters.indexOf(waiter), 1);
          clearTimeout(timer);
        }
      };
      const timer = setTimeout(() => {
        bench.waiters.splice(bench.waiters.indexOf(waiter), 1);
        res(null);
      }, timeoutMs);
      bench.waiters.push(waiter);
    });

  /** The ceiling's session: STOMP 1.2 over WebSocket at /ws with the app's token, as the app connects. */
  bench.connect = () =>
    new Promise((res, rej) => {
      const token = localStorage.getItem('upstairs.token') ?? sessionStorage.getItem('upstairs.token');
      const ws = new Native(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`, ['v12.stomp', 'v11.stomp', 'v10.stomp']);
      bench.ceiling = { ws, pending: null, n: 0 };
      ws.onopen = () =>
        ws.send(`CONNECT\naccept-version:1.2\nhost:${location.hostname}\nheart-beat:0,0\nAuthorization:Bearer ${token}\n\n\0`);
      ws.onerror = () => rej(new Error('the ceiling socket failed'));
      ws.onmessage = (e) => {
        const t = performance.now();
        const data = String(e.data);
        if (data.startsWith('CONNECTED')) return res(ws.protocol);
        if (data.startsWith('ERROR')) return rej(new Error(data.replace(/\0/g, '')));
        const p = bench.ceiling.pending;
        if (p && data.startsWith('RECEIPT') && data.includes(`receipt-id:${p.id}\n`)) {
          bench.ceiling.pending = null;
          p.res(t - p.t0);
        }
      };
    });
  /** One SUBSCRIBE with a receipt → RECEIPT (ms, page clock), then UNSUBSCRIBE. */
  bench.roundTrip = () =>
    new Promise((res) => {
      const c = bench.ceiling;
      const id = `rt${++c.n}`;
      const timer = setTimeout(() => {
        c.pending = null;
        res(null);
      }, 5000);
      c.pending = {
        id,
        res: (ms) => {
          clearTimeout(timer);
          c.ws.send(`UNSUBSCRIBE\nid:${id}\n\n\0`);
          res(ms);
        },
      };
      c.pending.t0 = performance.now();
      c.ws.send(`SUBSCRIBE\nid:${id}\ndestination:${dest}\nreceipt:${id}\n\n\0`);
    });
}

/** The page's clock minus this process's (ms), from the tightest of `n` bracketed reads, and that bracket's half-width. */
async function clockOffset(page, n = 20) {
  let best = null;
  for (let i = 0; i < n; i++) {
    const a = now();
    const p = await page.evaluate(() => performance.timeOrigin + performance.now());
    const b = now();
    if (!best || b - a < best.rtt) best = { rtt: b - a, offset: p - (a + b) / 2 };
  }
  return { offset: best.offset, within: best.rtt / 2 };
}

// ---------------------------------------------------------------- report

function pct(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.round((p / 100) * (sorted.length - 1)))];
}
const ms = (v) => (Number.isFinite(v) ? `${v.toFixed(2)} ms` : '–');

// ---------------------------------------------------------------- the run

async function main() {
  if (!existsSync(bin)) fail(`${bin} is missing: cargo build --release -p upstairs (or set UPSTAIRS_BIN)`);
  if (!existsSync(join(DIST, 'index.html'))) fail('web/dist is missing: cd web && npm run build');
  if (!existsSync(PYTHON)) fail(`${PYTHON} is missing: make -s .venv/.installed`);
  const dir = mkdtempSync(join(tmpdir(), 'upstairs-md-browser-'));
  cleanups.push(() => (opt.keep ? console.log(`kept ${dir}`) : rmSync(dir, { recursive: true, force: true })));
  lastResort.push(() => opt.keep || rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'mail'));
  const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
  console.log(`${version} (${bin}), ${backend}, ${cpus().length} cores, load average ${loadavg()[0].toFixed(2)}, `
    + `${new Date().toISOString().slice(0, 10)}; ${samples} samples ${spacing} ms apart, 127.0.0.1${opt.keep ? `; work folder ${dir}` : ''}`);

  // 1. The provider, the venue, the firm, the trader, the instrument, the parent order.
  const mdPort = await freePort();
  const feed = await startProvider(dir, mdPort);
  const env = {
    ...process.env,
    UPSTAIRS_DATABASE_URL: freshDatabase(dir),
    UPSTAIRS_MAIL_DIR: join(dir, 'mail'),
    UPSTAIRS_WEB_DIR: DIST,
    UPSTAIRS_ALWAYS_OPEN: 'true',
    UPSTAIRS_METRICS_BIND: 'off',
    UPSTAIRS_WRITES_PER_SECOND: '0',
    RUST_LOG: 'warn',
  };
  execFileSync(bin, ['user', 'create', '--email', ADMIN, '--password', PASSWORD, '--role', 'upstairs-admin'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const { base } = await startServer(dir, env, mdPort);
  const admin = await signInApi(base, ADMIN);
  const post = (path, body, token = admin) => api(base, path, { token, method: 'POST', body });
  const broker = await post('/admin/companies', { name: 'Broker', full_name: 'Bench Broker', roles: ['broker'] });
  const ref = { company_id: broker.company_id };
  await post('/admin/companies', { name: 'Watchers', full_name: 'Bench Watchers', brokers: [ref], default_broker: ref });
  execFileSync(bin, ['user', 'create', '--email', TRADER, '--password', PASSWORD, '--role', 'trader', '--company', 'Watchers',
    '--first-name', 'Wanda', '--last-name', 'Watcher'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const trader = await signInApi(base, TRADER);
  const me = await api(base, '/users/me', { token: trader });
  // The first sign-in's preferences step done, every tip read: no dialog covers the book.
  await api(base, `/users/${me.user_id}`, { token: trader, method: 'PATCH', body: {
    auto_accept: 'INSTANT', ui_metadata: [{ key: 'TOOLTIPS', value: TIPS.map((key) => ({ key, read: true })) }],
  } });
  const instrument = await post('/admin/instruments', {
    name: NAME, term: 'Dec26-Mar27', min_quantity: 1, tick_size: 0.01, exchange_id: 'B', currency: 'EUR',
    min_tick_price: LO / 100, max_tick_price: (LO + WIDTH) / 100,
  });
  const iid = instrument.instrument_id;
  await api(base, `/admin/instruments/${iid}`, { token: admin, method: 'PATCH', body: { exchange_instrument_id: SYMBOL } });
  await post('/parent-orders', { direction: 'BUY', instrument_id: iid, quantity: 1000 }, trader);
  // The provider's price at the created band: the subscription's snapshot moves nothing.
  feed.send({ cmd: 'price', symbol: SYMBOL, bid: price(LO), offer: price(LO + WIDTH) });
  const t0 = Date.now();
  while (!feed.symbols.has(SYMBOL)) {
    if (Date.now() - t0 > 40_000) fail(`the venue did not subscribe to ${SYMBOL} within 40 s: logged on ${feed.logon}; provider errors ${feed.errors.slice(0, 3)}`);
    await sleep(50);
  }
  console.log(`setup: ${SYMBOL} subscribed ${((Date.now() - t0) / 1000).toFixed(1)} s after its price was set`);

  // 2. The browser: the trader signed in, the book's ladder on the dashboard.
  const browser = await launchBrowser();
  cleanups.push(() => browser.close());
  const chromium = browser.version();
  const { page, errors } = await newPage(browser);
  await page.addInitScript(pageProbe, { name: NAME, dest: CEILING_DEST });
  await page.goto(`${base}/login`);
  await page.getByLabel('Email').fill(TRADER);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor({ timeout: 30_000 });
  const book = page.getByRole('region', { name: `Order book ${NAME}` });
  await book.locator('[data-testid="ladder-row"]:not([aria-disabled])').first().waitFor({ timeout: 30_000 });
  await page.waitForLoadState('networkidle');
  await sleep(1000); // the subscription's snapshot, taken quietly; the app settled
  const first = await page.evaluate(() => window.__bench.records.at(-1));
  if (!first || first.min !== LO || first.max !== LO + WIDTH) fail(`the ladder shows ${JSON.stringify(first)}, not ${price(LO)}–${price(LO + WIDTH)}`);
  const box = await book.locator('[data-testid="price-ladder"]').evaluate((el) => {
    const rows = [...el.querySelectorAll('[data-testid="ladder-row"]')];
    const view = el.getBoundingClientRect();
    const seen = rows.filter((r) => {
      const b = r.getBoundingClientRect();
      return b.top >= view.top - 1 && b.bottom <= view.bottom + 1;
    });
    return { rows: rows.length, inView: seen.length };
  });
  const protocol = await page.evaluate(() => window.__bench.connect());
  console.log(`browser: Chromium ${chromium}, the ladder shows ${price(LO)}–${price(LO + WIDTH)} (${first.rows} tradable rows of ${box.rows}, ${box.inView} in view); `
    + `ceiling session CONNECTED (sub-protocol ${protocol})`);
  const before = await clockOffset(page);

  // 3. The samples, each followed by a ceiling round trip.
  let current = null;
  feed.onSent = (bid, at) => {
    if (current && current.sent === null && bid === current.lo) current.sent = at;
  };
  const logoutsBefore = feed.logouts;
  const rows = [];
  const ceiling = [];
  let misses = 0;
  let noSent = 0;
  const started = now();
  for (let k = 1; k <= samples; k++) {
    const start = now();
    const lo = bandLo(k);
    const [fromRec, fromFrame] = await page.evaluate(() => [window.__bench.records.length, window.__bench.frames.length]);
    current = { lo, sent: null, cmd: now() };
    feed.send({ cmd: 'price', symbol: SYMBOL, bid: price(lo), offer: price(lo + WIDTH) });
    const seen = await page.evaluate(([a, b, c, d, e]) => window.__bench.wait(a, b, c, d, e), [lo, lo + WIDTH, fromRec, fromFrame, waitMs]);
    for (let i = 0; current.sent === null && i < 50; i++) await sleep(10);
    if (!seen) misses += 1;
    else if (current.sent === null) noSent += 1;
    rows.push({ ...current, seen });
    const rt = await page.evaluate(() => window.__bench.roundTrip());
    if (rt !== null) ceiling.push(rt);
    current = null;
    await sleep(start + spacing - now());
  }
  const took = (now() - started) / 1000;
  const after = await clockOffset(page);
  const pageErrors = errors.length;

  // 4. The table.
  const sorted = (f) => rows.filter((r) => r.seen && f(r) !== null && Number.isFinite(f(r))).map(f).sort((a, b) => a - b);
  const fromSent = sorted((r) => (r.sent === null ? null : r.seen.t - r.sent));
  const fromCmd = sorted((r) => r.seen.t - r.cmd);
  const lag = sorted((r) => (r.sent === null ? null : r.sent - r.cmd));
  const toFrame = sorted((r) => (r.sent === null || r.seen.frame === null ? null : r.seen.frame - r.sent));
  const frameToLadder = sorted((r) => (r.seen.frame === null ? null : r.seen.t - r.seen.frame));
  const toPaint = sorted((r) => (r.seen.raf === null ? null : r.seen.raf - r.seen.t));
  const ceil = ceiling.sort((a, b) => a - b);
  const bytes = rows.map((r) => r.seen?.bytes).filter(Boolean).sort((a, b) => a - b);
  console.log();
  console.log(`## Price → ladder in Chromium, one instrument, ${samples} bands ${spacing} ms apart (${took.toFixed(1)} s; book frame median ${pct(bytes, 50) ?? '?'} characters)`);
  console.log();
  console.log('| measure | samples | misses | p50 | p99 | max |');
  console.log('|---|---:|---:|---:|---:|---:|');
  const line = (name, v, miss) => console.log(`| ${name} | ${v.length} | ${miss} | ${ms(pct(v, 50))} | ${ms(pct(v, 99))} | ${ms(v.at(-1))} |`);
  line(`STOMP round trip from the page: SUBSCRIBE ${CEILING_DEST} with receipt → RECEIPT (ceiling)`, ceil, samples - ceil.length);
  line("provider's X sent → ladder changed in the page (DOM)", fromSent, misses + noSent);
  line('price command to the provider → ladder changed', fromCmd, misses);
  line("  of which: price command → provider's X sent (the feed's own lag)", lag, samples - lag.length);
  line("  of which: provider's X sent → book frame reaches the page's WebSocket", toFrame, samples - toFrame.length);
  line('  of which: book frame in the page → ladder changed (STOMP client, React Query, React)', frameToLadder, samples - frameToLadder.length);
  line('ladder changed → next animation frame (the paint that shows it)', toPaint, samples - toPaint.length);
  console.log();
  const p99 = pct(fromSent, 99);
  const p50 = pct(fromSent, 50);
  console.log(`p50 ${ms(p50)}, p99 ${ms(p99)}; ratio to the page's STOMP round trip: p50 ${(p50 / pct(ceil, 50)).toFixed(2)}, p99 ${(p99 / pct(ceil, 99)).toFixed(2)}; `
    + `bands never shown (${waitMs} ms): ${misses}; shown without the provider's sent event: ${noSent}; `
    + `market-data session ended: ${feed.logouts - logoutsBefore} time(s); page errors: ${pageErrors}; provider errors: ${feed.errors.length}`);
  console.log(`clocks: the price path's stamps cross processes (this Node process: performance.timeOrigin + now(), sub-µs; `
    + `Chromium's renderer: the same, coarsened to 100 µs); the page's clock minus Node's: ${before.offset.toFixed(3)} ms (± ${before.within.toFixed(3)}) before, `
    + `${after.offset.toFixed(3)} ms (± ${after.within.toFixed(3)}) after; not corrected. The ceiling is timed on the page's clock alone.`);
}

try {
  await main();
  await cleanup();
  process.exit(0);
} catch (e) {
  if (!interrupted) console.error(e.bench ? e.message : e);
  await cleanup();
  if (interrupted) await new Promise(() => {}); // the signal's handler exits
  process.exit(1);
}
