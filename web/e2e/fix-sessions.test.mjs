// The FIX sessions screen on the demo venue with its FIX gateway on, in Chromium: the demo
// admin sees the three companies with a FIX CompID never logged on; a real FIX initiator
// (tests/peers/fix_peer.py, QuickFIX) logs on as Northgate and the screen shows it logged
// on with the sequence numbers the peer has, then logged off once the peer logs out. The
// admin gives Kestrel a CompID and a FIX password in the company form (another company's
// CompID is refused), and Kestrel's own peer logs on with them.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { api, failedCalls, freePort, launchBrowser, login, newPage, shot, signIn, startServer, until } from './harness.mjs';

const T = 'fix-sessions';
const ADMIN = 'admin@upstairs.demo';
const PASSWORD = 'Upstairs-Demo-1';
const FIX_PASSWORD = 'Upstairs-FIX-1';
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PYTHON = process.env.UPSTAIRS_TEST_PYTHON ?? join(repo, '.venv/bin/python');
const PEER = join(repo, 'tests/peers/fix_peer.py');

let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

/**
 * A FIX initiator logging on as `sender` (fix_peer.py: JSON events on stdout, JSON commands
 * on stdin); `stop()` logs it out and waits for it to exit.
 */
function startPeer({ port, sender, password }) {
  if (!existsSync(PYTHON)) throw new Error(`no Python at ${PYTHON}: run \`make .venv/.installed\` (or set UPSTAIRS_TEST_PYTHON)`);
  const store = mkdtempSync(join(tmpdir(), `upstairs-fix-${sender.toLowerCase()}-`));
  const args = [PEER, '--port', String(port), '--sender', sender, '--target', 'UPSTAIRS', '--password', password, '--store', store];
  const child = spawn(PYTHON, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const events = [];
  let pending = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    pending += d;
    for (let i = pending.indexOf('\n'); i >= 0; i = pending.indexOf('\n')) {
      const line = pending.slice(0, i).trim();
      pending = pending.slice(i + 1);
      if (line) events.push(JSON.parse(line));
    }
  });
  child.stderr.on('data', (d) => (stderr += d));
  let exited = null;
  const exit = new Promise((r) => child.once('exit', (code, signal) => r((exited = { code, signal }))));
  /** The first event from index `from` on that `match` accepts. */
  const next = (what, match, from = 0) =>
    until(
      () => {
        const found = events.slice(from).find(match);
        if (found) return found;
        if (exited) throw Object.assign(new Error(`the ${sender} FIX peer exited (${JSON.stringify(exited)}):\n${stderr}`), { fatal: true });
        return null;
      },
      { timeoutMs: 20_000, what: `${what} from the ${sender} FIX peer` },
    );
  const send = (command) => child.stdin.write(`${JSON.stringify(command)}\n`);
  return {
    logon: () => next('a logon', (e) => e.event === 'logon'),
    /** The first application message of `msgType` the peer received. */
    received: (msgType) => next(`a ${msgType}`, (e) => e.event === 'app' && e.msg_type === msgType),
    /** Sends an application message: its fields and repeating groups in order. */
    send: (msgType, fields, groups = []) => send({ cmd: 'send', msg_type: msgType, fields, groups }),
    /** The peer's own next sequence numbers. */
    async seq() {
      const from = events.length;
      send({ cmd: 'seq' });
      return next('its sequence numbers', (e) => e.event === 'seq', from);
    },
    async stop() {
      if (!exited) {
        send({ cmd: 'stop' });
        await Promise.race([exit, new Promise((r) => setTimeout(r, 10_000))]);
        if (!exited) child.kill('SIGKILL');
        await exit;
      }
      rmSync(store, { recursive: true, force: true });
      return exited;
    },
  };
}

async function openPanel(page, name) {
  await page.getByRole('button', { name: 'Open menu' }).click();
  await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name, exact: true }).click();
}

/**
 * The FIX sessions table's rows as cell texts: Company, CompID, State, Seq in, Seq out, Last message.
 * Read in one go: rows counted first and read one by one could mix two renders (the cached
 * list's count with the new list's rows, dropping the last).
 */
async function sessionRows(page) {
  return page
    .getByRole('table', { name: 'FIX sessions' })
    .evaluate((table) => [...table.tBodies[0].rows].map((r) => [...r.cells].map((c) => c.textContent)));
}

/** Clicks Refresh until the screen shows what `check` waits for (the server records a session's change just after it). */
async function refreshUntil(page, check, what) {
  return until(
    async () => {
      const rows = await sessionRows(page);
      if (check(rows)) return rows;
      await page.getByRole('button', { name: 'Refresh' }).click();
      return null;
    },
    { timeoutMs: 15_000, intervalMs: 300, what },
  );
}

const row = (rows, company) => rows.find((r) => r[0] === company);
const DATE_TIME = /^\d\d\/\d\d\/\d{4} \d\d:\d\d$/;

test('the demo admin watches FIX sessions log on and off, and gives a company its FIX CompID and password', async () => {
  const fixPort = await freePort();
  const server = await startServer({ demo: true, env: { UPSTAIRS_FIX_BIND: `127.0.0.1:${fixPort}` } });
  const { context, page, errors } = await newPage(browser);
  const failed = failedCalls(page);
  const peers = [];
  try {
    await signIn(page, server.baseUrl, ADMIN, PASSWORD);
    await openPanel(page, 'FIX sessions');
    await page.getByRole('heading', { name: 'FIX sessions', level: 1 }).waitFor();
    await page.getByRole('table', { name: 'FIX sessions' }).waitFor();
    // Where this node takes sessions (issue 28.20).
    await page.getByTestId('fix-acceptor').filter({ hasText: `This node accepts FIX 4.4 sessions on 127.0.0.1:${fixPort}, TargetCompID UPSTAIRS.` }).waitFor();
    assert.deepEqual(
      (await page.getByRole('table', { name: 'FIX sessions' }).getByRole('columnheader').allTextContents()),
      ['Company', 'CompID', 'State', 'Seq in', 'Seq out', 'Last message'],
    );
    // By company name; none has logged on yet.
    assert.deepEqual(await sessionRows(page), [
      ['Baltic', 'BALTIC', 'Never', '1', '1', '—'],
      ['Halyard', 'HALYARD', 'Never', '1', '1', '—'],
      ['Northgate', 'NORTHGATE', 'Never', '1', '1', '—'],
    ]);
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 1440, 'nothing overflows the window');
    // The demo's market-data session, to its own FIX provider (ADR 0049): logged on, its six symbols, prices coming.
    const md = page.getByRole('table', { name: 'Market-data session' });
    const mdRow = async () => (await md.getByRole('row').nth(1).getByRole('cell').allTextContents());
    await until(async () => {
      const r = await mdRow();
      return r[2] === 'Logged on' && r[4] === '6' && r[5] !== '—';
    }, { timeoutMs: 20_000, what: 'the market-data session logged on with six symbols and a price' });
    const [provider, compIds, , , , , stale] = await mdRow();
    assert.match(provider, /^127\.0\.0\.1:\d+$/);
    assert.deepEqual([compIds, stale], ['UPSTAIRS-MD → DEMO-PROVIDER', '0']);
    await shot(page, T, '01-never-logged-on');

    // Northgate's FIX client logs on: the screen follows without a click (5 s poll).
    const northgate = startPeer({ port: fixPort, sender: 'NORTHGATE', password: FIX_PASSWORD });
    peers.push(northgate);
    await northgate.logon();
    await until(async () => row(await sessionRows(page), 'Northgate')?.[2] === 'Logged on', { timeoutMs: 10_000, what: 'Northgate logged on, by the 5 s refresh' });
    // Seq in is what the venue expects next, i.e. what the peer sends next; Seq out the other way.
    const peerSeq = await northgate.seq();
    const on = row(await refreshUntil(page, (rows) => {
      const r = row(rows, 'Northgate');
      return r[3] === String(peerSeq.next_sender) && r[4] === String(peerSeq.next_target);
    }, `Northgate's sequence numbers as the peer has them (${JSON.stringify(peerSeq)})`), 'Northgate');
    assert.ok(Number(on[3]) > 1 && Number(on[4]) > 1, `both sequences moved: ${on}`);
    assert.match(on[5], DATE_TIME);
    const others = (await sessionRows(page)).filter((r) => r[0] !== 'Northgate');
    assert.deepEqual(others.map((r) => r[2]), ['Never', 'Never']);
    await shot(page, T, '02-northgate-logged-on');

    // It logs out: Logged off on Refresh, its sequence numbers kept (the Logouts counted).
    assert.equal((await northgate.stop()).code, 0);
    const off = row(await refreshUntil(page, (rows) => row(rows, 'Northgate')[2] === 'Logged off', 'Northgate logged off'), 'Northgate');
    assert.ok(Number(off[3]) >= Number(on[3]) && Number(off[4]) >= Number(on[4]), `sequences kept: ${on} then ${off}`);
    assert.match(off[5], DATE_TIME);
    await shot(page, T, '03-northgate-logged-off');

    // Kestrel gets a CompID and a FIX password in the company form.
    await openPanel(page, 'Companies panel');
    const companies = page.getByRole('table', { name: 'Companies' });
    await companies.getByRole('row', { name: /^Northgate / }).getByRole('cell', { name: 'NORTHGATE', exact: true }).waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 1440, 'the CompID column fits');
    await shot(page, T, '04-companies-panel');
    await page.getByRole('button', { name: 'Edit Kestrel' }).click();
    let form = page.getByRole('form', { name: 'Edit Kestrel' });
    await form.getByText('No FIX password is set; leave blank for none').waitFor();
    const compId = form.getByRole('textbox', { name: 'FIX CompID' });
    await compId.fill('KES TREL');
    await compId.blur();
    await form.getByText("A FIX CompID is 1 to 32 letters, digits, '.', '_' or '-'").waitFor();
    await compId.fill('KESTREL');
    const fixPassword = form.getByLabel('FIX password', { exact: true });
    await fixPassword.fill('short');
    await fixPassword.blur();
    await form.getByText('A FIX password has at least 8 characters').waitFor();
    assert.equal(await form.getByRole('button', { name: 'Save changes' }).isDisabled(), true);
    await fixPassword.fill('Kestrel-FIX-1');
    await form.getByText('A FIX password has at least 8 characters').waitFor({ state: 'detached' });
    assert.equal(await form.getByRole('switch', { name: 'Allow sequence resets (141=Y) on FIX Logon' }).isChecked(), false);
    await form.getByRole('switch', { name: 'Allow sequence resets (141=Y) on FIX Logon' }).scrollIntoViewIfNeeded();
    await shot(page, T, '05-company-form');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Kestrel updated.').waitFor();
    await companies.getByRole('row', { name: /^Kestrel / }).getByRole('cell', { name: 'KESTREL', exact: true }).waitFor();

    // Editing again: the password is never shown, only that it is set.
    await page.getByRole('button', { name: 'Edit Kestrel' }).click();
    form = page.getByRole('form', { name: 'Edit Kestrel' });
    await form.getByText('A FIX password is set; leave blank to keep it').waitFor();
    assert.equal(await form.getByLabel('FIX password', { exact: true }).inputValue(), '');
    await form.getByRole('switch', { name: 'Remove FIX password' }).waitFor();
    await form.getByRole('switch', { name: 'Allow sequence resets (141=Y) on FIX Logon' }).scrollIntoViewIfNeeded();
    await shot(page, T, '06-company-form-password-set');
    await form.getByRole('button', { name: 'Cancel' }).click();

    // Another company's CompID is refused by the server, under the field.
    await page.getByRole('button', { name: 'Edit Baltic' }).click();
    form = page.getByRole('form', { name: 'Edit Baltic' });
    const balticCompId = form.getByRole('textbox', { name: 'FIX CompID' });
    await balticCompId.fill('NORTHGATE');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await form.getByRole('alert').getByText('Another company has this FIX CompID.').waitFor();
    assert.equal(await balticCompId.getAttribute('aria-invalid'), 'true');
    const helper = await balticCompId.getAttribute('aria-describedby');
    assert.equal(await page.locator(`[id="${helper}"]`).textContent(), 'Another company has this FIX CompID.');
    await form.getByRole('button', { name: 'Cancel' }).click();

    // Kestrel is on the FIX sessions screen, never logged on, and its peer logs on with the new password.
    await openPanel(page, 'FIX sessions');
    await page.getByRole('table', { name: 'FIX sessions' }).waitFor();
    // The panel shows the list it had while it reads it again on opening.
    const withKestrel = await until(async () => {
      const rows = await sessionRows(page);
      return row(rows, 'Kestrel') ? rows : null;
    }, { timeoutMs: 10_000, what: 'Kestrel on the FIX sessions screen once it is read again' });
    assert.deepEqual(
      withKestrel.map((r) => r.slice(0, 3)),
      [['Baltic', 'BALTIC', 'Never'], ['Halyard', 'HALYARD', 'Never'], ['Kestrel', 'KESTREL', 'Never'], ['Northgate', 'NORTHGATE', 'Logged off']],
    );
    assert.deepEqual(row(await sessionRows(page), 'Kestrel'), ['Kestrel', 'KESTREL', 'Never', '1', '1', '—']);
    await shot(page, T, '07-kestrel-never');
    const kestrel = startPeer({ port: fixPort, sender: 'KESTREL', password: 'Kestrel-FIX-1' });
    peers.push(kestrel);
    await kestrel.logon();
    await refreshUntil(page, (rows) => row(rows, 'Kestrel')[2] === 'Logged on', 'Kestrel logged on');
    await shot(page, T, '08-kestrel-logged-on');
    assert.equal((await kestrel.stop()).code, 0);

    const token = await login(server.baseUrl, ADMIN, PASSWORD);
    const saved = (await api(server.baseUrl, '/admin/companies?page=0&size=200', { token })).items.find((c) => c.name === 'Kestrel');
    assert.deepEqual([saved.fix_comp_id, saved.fix_password_set, saved.fix_reset_on_logon], ['KESTREL', true, false]);
    const baltic = (await api(server.baseUrl, '/admin/companies?page=0&size=200', { token })).items.find((c) => c.name === 'Baltic');
    assert.equal(baltic.fix_comp_id, 'BALTIC');
    assert.deepEqual(failed, [`PATCH /api/admin/companies/${baltic.company_id} 409`]);
    assert.deepEqual(errors, []);
  } finally {
    await Promise.all(peers.map((p) => p.stop()));
    await context.close();
    await server.stop();
  }
});

test("a trader loads parent orders from the firm's execution system over its FIX session", async () => {
  const fixPort = await freePort();
  const server = await startServer({ demo: true, env: { UPSTAIRS_FIX_BIND: `127.0.0.1:${fixPort}` } });
  const { context, page, errors } = await newPage(browser);
  const failed = failedCalls(page);
  let halyard;
  try {
    // Hugo Hart (Halyard) is the execution system's trader HHART.
    const admin = await login(server.baseUrl, ADMIN, PASSWORD);
    const hugo = (await api(server.baseUrl, '/admin/users?email=trader2@halyard.demo', { token: admin })).items[0];
    await api(server.baseUrl, `/users/${hugo.user_id}`, { token: admin, method: 'PATCH', body: { ems_trader_id: 'HHART', fix_integration: true } });
    // Hugo has not chosen how to answer match requests: the welcome screen asks first.
    await page.goto(`${server.baseUrl}/login`);
    await page.getByLabel('Email').fill('trader2@halyard.demo');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('radio', { name: /Reject with delay/ }).check();
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    const token = await login(server.baseUrl, 'trader2@halyard.demo', PASSWORD);
    const before = await api(server.baseUrl, '/parent-orders', { token });
    const euribor = page.getByRole('list', { name: 'Parent orders' }).getByRole('listitem').filter({ hasText: 'Euribor 3M Dec26-Mar27' });
    await euribor.first().waitFor();
    const cards = await euribor.count();
    const load = page.getByRole('button', { name: 'Load from your execution system' });

    // No live session: the button says so, and nothing else changes.
    await load.click();
    await page.getByRole('alert').filter({ hasText: 'Your execution system is not connected: its FIX session is not logged on. Try again once it is.' }).waitFor();
    await shot(page, T, '09-execution-system-not-connected');

    // Halyard's execution system logs on; the pull asks it for its working orders.
    halyard = startPeer({ port: fixPort, sender: 'HALYARD', password: FIX_PASSWORD });
    await halyard.logon();
    await until(
      async () => (await api(server.baseUrl, '/admin/fix-sessions', { token: admin })).items.find((s) => s.fix_comp_id === 'HALYARD')?.state === 'LOGGED_ON',
      { what: 'Halyard logged on' },
    );
    await load.click();
    await page.getByRole('status').filter({ hasText: 'Asked your execution system for its working orders: they appear here as they arrive.' }).waitFor();
    const asked = await halyard.received('AF');
    const request = asked.fields.find(([tag]) => tag === 584)[1];

    // Its answer: one working order for HHART, 2,000 left of 2,500. It appears on Hugo's dashboard.
    halyard.send('8', [
      [37, 'EMS-1'], [11, 'HH-1'], [584, request], [911, '1'], [912, 'Y'], [17, 'X-1'], [150, 'I'], [39, '1'],
      [55, 'Euribor 3M Dec26-Mar27'], [54, '1'], [38, '2500'], [151, '2000'], [14, '500'], [6, '0.005'],
    ], [{ count: 453, delim: 448, entries: [[[448, 'HHART'], [447, 'D'], [452, '11']]] }]);
    await until(async () => (await euribor.count()) === cards + 1, { what: 'a new Euribor parent card, pushed' });
    await shot(page, T, '10-loaded-from-execution-system');
    const after = await api(server.baseUrl, '/parent-orders', { token });
    const added = after.filter((p) => !before.some((b) => b.parent_order_id === p.parent_order_id));
    assert.deepEqual(added.map((p) => [p.direction, p.quantity]), [['BUY', 2000]]);
    assert.deepEqual(failed, ['POST /api/parent-orders/execution-system-pulls 409']);
    assert.deepEqual(errors, []);
  } finally {
    await halyard?.stop();
    await context.close();
    await server.stop();
  }
});
