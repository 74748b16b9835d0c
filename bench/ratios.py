#!/usr/bin/env python3
"""Upstairs performance as ratios measured in one run (DESIGN.md §1).

Run through bench/run.sh, which installs wrk (and pgbench) when missing and builds the
release binary:

    bench/run.sh sqlite
    bench/run.sh postgres

What one run does, on 127.0.0.1 only and bounded in time:

1. The database's own single-row durable insert ceiling with the server's settings:
   SQLite: one thread, one row per `BEGIN IMMEDIATE … COMMIT`, WAL and synchronous=NORMAL
   as `SqliteStore::connect` sets them, on the same file system as the server's file.
   PostgreSQL: pgbench, one single-row insert per transaction from the same number of
   clients as wrk's connections, into a scratch table of a fresh schema (dropped).
2. Starts `upstairs serve` (always open; `serve`, not `demo`, so no simulator moves the
   band) on a fresh database, and creates through the API a broker, a trading firm, a
   trader (parent order limit lifted), three instruments and one BUY parent order per
   connection on each (the POSTs are spread over them; one run puts them all on one).
3. Empty book (instrument A): wrk on `/healthz`, `GET /api/users/me`,
   `GET /api/instruments/A/book`, then `POST /api/orders` on A's parent.
4. Fills instrument B's book with exactly N resting orders through the API (wrk bounded
   by count, then a top-up from one connection), and measures the same four calls with
   the book and the POSTs on B; as a control, right after B's book read, the book of
   instrument C, which has one order on every tick of the band (the same levels as B's).
5. Prints every figure (req/s, p50, p99 from wrk's latency distribution), its ratio to
   the ceiling and the derived ratios of the acceptance. It prints; it never asserts.

The load generator is wrk (bench/wrk/api.lua); this script only orchestrates.
"""

import argparse
import contextlib
import glob
import http.client
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import date

PASSWORD = "Bench-Pass-2026"
ONE_PARENT = "POST /api/orders (one parent)"
HERE = os.path.dirname(os.path.abspath(__file__))
LUA = os.path.join(HERE, "wrk", "api.lua")
# The instruments' band: 94.00 … 96.00 by 0.01 (201 valid ticks), never moved during the run.
TICK_LO, TICK_HI, DECIMALS = 9400, 9600, 2


def bench_args(doc, whole=False):
    """The arguments every bench takes: the backend, the binary and PostgreSQL's address."""
    ap = argparse.ArgumentParser(description=doc if whole else doc.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("backend", choices=["sqlite", "postgres"])
    ap.add_argument("--bin", default=os.environ.get("UPSTAIRS_BIN", "target/release/upstairs"))
    ap.add_argument("--pg-url", default=os.environ.get("UPSTAIRS_TEST_POSTGRES_URL",
                                                        "postgres://postgres@127.0.0.1:5432/test"))
    return ap


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    def __init__(self, port, token=None):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.token = token

    def call(self, method, path, body=None, address=None):
        headers = {"content-type": "application/json"}
        if address:
            # Seen as this address by a server that trusts 127.0.0.1 as its proxy.
            headers["x-forwarded-for"] = address
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        try:
            self.conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
            res = self.conn.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            # The server closed a connection left idle (a long seeding): a read is asked again.
            if method != "GET":
                raise
            self.conn.close()
            self.conn = http.client.HTTPConnection(self.conn.host, self.conn.port, timeout=30)
            self.conn.request(method, path, headers=headers)
            res = self.conn.getresponse()
        data = res.read()
        if data and res.getheader("content-type", "").split(";")[0].endswith("json"):
            return res.status, json.loads(data)
        return res.status, data.decode("utf-8", "replace")


def expect(result, want, what):
    status, body = result
    if status != want:
        sys.exit(f"setup failed ({what}): expected {want}, got {status}: {body}")
    return body


def pct(sorted_values, p):
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(round(p / 100 * (len(sorted_values) - 1))))]


# ---------------------------------------------------------------- ceilings


def sqlite_ceiling(path, seconds):
    """Single-row durable inserts per second into SQLite with the server's pragmas, one writer."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("pragma journal_mode=WAL")
    db.execute("pragma synchronous=NORMAL")
    db.execute("pragma busy_timeout=10000")
    db.execute("pragma foreign_keys=ON")
    db.execute("create table scratch (id text primary key, n integer not null, payload text not null, "
               "created_at text not null)")
    lat = []
    n = 0
    start = time.perf_counter()
    end = start + seconds
    now = start
    while now < end:
        n += 1
        db.execute("begin immediate")
        db.execute("insert into scratch (id, n, payload, created_at) values (?, ?, ?, ?)",
                   (str(uuid.uuid4()), n, '{"bench":true}', "2026-01-01T00:00:00Z"))
        db.execute("commit")
        t = time.perf_counter()
        lat.append(t - now)
        now = t
    elapsed = now - start
    db.close()
    lat.sort()
    return {"rate": n / elapsed, "p50_ms": pct(lat, 50) * 1e3, "p99_ms": pct(lat, 99) * 1e3, "count": n,
            "label": f"SQLite {sqlite3.sqlite_version}, WAL, synchronous=NORMAL, 1 row per BEGIN IMMEDIATE…COMMIT, "
                     f"1 writer (Python sqlite3), {seconds:g} s"}


def psql(url, sql):
    subprocess.run(["psql", url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql], check=True,
                   stdout=subprocess.DEVNULL, env=dict(os.environ, PGOPTIONS="-c client_min_messages=warning"))


def pg_ceiling(url, seconds, clients, threads, workdir):
    """Single-row inserts per second into PostgreSQL (default synchronous_commit) from pgbench."""
    schema = f"bench_ceiling_{int(time.time())}_{os.getpid()}"
    psql(url, f"create schema {schema}; create table {schema}.scratch (id uuid primary key, n int not null, "
              f"payload text not null, created_at timestamptz not null default now())")
    try:
        script = os.path.join(workdir, "insert.sql")
        with open(script, "w") as f:
            f.write(f"insert into {schema}.scratch (id, n, payload) values (gen_random_uuid(), :client_id, "
                    f"'bench row');\n")
        prefix = os.path.join(workdir, "pgbench_log")
        out = subprocess.run(
            ["pgbench", "-n", "-M", "prepared", "-c", str(clients), "-j", str(threads), "-T", str(int(seconds)),
             "-f", script, "-l", f"--log-prefix={prefix}", url],
            capture_output=True, text=True, timeout=seconds + 60)
        if out.returncode != 0:
            sys.exit(f"pgbench failed:\n{out.stderr}")
        out = out.stdout
        with open(os.path.join(workdir, "pgbench.out"), "w") as f:
            f.write(out)
        m = re.search(r"tps = ([\d.]+) \(without initial connection time\)", out)
        lat = []
        for name in glob.glob(prefix + ".*"):
            with open(name) as f:
                lat.extend(int(line.split()[2]) for line in f if line.strip())
        lat.sort()
        sync = subprocess.run(["psql", url, "-X", "-Atc", "show synchronous_commit"], capture_output=True,
                              text=True).stdout.strip()
        version = subprocess.run(["psql", url, "-X", "-Atc", "show server_version"], capture_output=True,
                                 text=True).stdout.strip().split()[0]
        return {"rate": float(m.group(1)) if m else len(lat) / seconds, "p50_ms": pct(lat, 50) / 1e3,
                "p99_ms": pct(lat, 99) / 1e3, "count": len(lat),
                "label": f"PostgreSQL {version}, synchronous_commit={sync}, 1 row per transaction, pgbench "
                         f"-M prepared -c {clients} -j {threads}, {seconds:g} s"}
    finally:
        psql(url, f"drop schema {schema} cascade")


# ---------------------------------------------------------------- wrk


def wrk(args, port, path, script_args, duration, log_name, stop_when=None):
    """Runs wrk; with `stop_when`, a callable polled every 0.2 s, ends it early (SIGINT) once that is true.

    (A wrk thread that stops itself in Lua does not end wrk before -d has elapsed.)"""
    cmd = ["wrk", "-t", str(args.threads), "-c", str(args.connections), "-d", f"{duration}s", "--timeout", "10s",
           "--latency", "-s", LUA, f"http://127.0.0.1:{port}{path}", "--", *script_args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        if stop_when is not None:
            while proc.poll() is None:
                time.sleep(0.2)
                if stop_when():
                    proc.send_signal(signal.SIGINT)
                    break
        out, _ = proc.communicate(timeout=duration + 60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    shown = " ".join("token=…" if a.startswith("token=") else a for a in cmd)
    with open(os.path.join(args.workdir, log_name), "w") as f:
        f.write(shown + "\n" + out)
    m = re.search(r"^WRK_JSON (.*)$", out, re.M)
    if proc.returncode != 0 or not m:
        sys.exit(f"wrk failed ({proc.returncode}):\n{out}")
    r = json.loads(m.group(1))
    r["rate"] = r["requests"] / (r["duration_us"] / 1e6)
    r["errors_total"] = sum(r["errors"].values())
    return r


ADMIN = "admin@bench.test"


@contextlib.contextmanager
def fresh_database(binary, backend, pg_url, workdir, throttle=False, keep=False):
    """A fresh database (a new SQLite file in `workdir`, or a new schema of `pg_url`) with a
    venue admin (ADMIN); yields (env, schema) to run `upstairs` on it with. The per-user
    write throttle is off unless `throttle`: most figures measure capacity, not it.
    Drops the schema afterwards, unless `keep` (it says which, to read it with psql)."""
    schema = None
    if backend == "postgres":
        schema = f"bench_{int(time.time())}_{os.getpid()}"
        psql(pg_url, f"create schema {schema}")
        db = f"{pg_url}{'&' if '?' in pg_url else '?'}options%5Bsearch_path%5D={schema}"
    else:
        db = f"sqlite://{workdir}/upstairs.db"
    env = dict(os.environ, UPSTAIRS_DATABASE_URL=db, UPSTAIRS_MAIL_DIR=f"{workdir}/mail",
               UPSTAIRS_WEB_DIR=f"{workdir}/web", UPSTAIRS_ALWAYS_OPEN="true", RUST_LOG="warn")
    if not throttle:
        env["UPSTAIRS_WRITES_PER_SECOND"] = "0"
    try:
        subprocess.run([binary, "user", "create", "--email", ADMIN, "--password", PASSWORD, "--role",
                        "upstairs-admin"], env=env, check=True, stdout=subprocess.DEVNULL)
        yield env, schema
    finally:
        if schema and keep:
            print(f"kept the PostgreSQL schema {schema} (drop schema {schema} cascade)", flush=True)
        elif schema:
            psql(pg_url, f"drop schema {schema} cascade")


def start_node(binary, env, log_path):
    """`upstairs serve --always-open` on a free port of 127.0.0.1, its /metrics on another
    (`proc.metrics_port`); returns (process, port) once its /readyz answers 200 (exits,
    pointing at the log, if it does not within 30 s)."""
    port, metrics_port = free_port(), free_port()
    proc = subprocess.Popen([binary, "serve", "--bind", f"127.0.0.1:{port}", "--always-open",
                             "--metrics-bind", f"127.0.0.1:{metrics_port}"], env=env,
                            stdout=open(log_path, "w"), stderr=subprocess.STDOUT)
    proc.metrics_port = metrics_port
    deadline = time.time() + 30
    while True:
        try:
            if Client(port).call("GET", "/readyz")[0] == 200:
                return proc, port
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            sys.exit(f"a node did not start; see {log_path}")
        time.sleep(0.05)


def stop_node(proc):
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()


@contextlib.contextmanager
def serving(binary, backend, pg_url, workdir, keep=False):
    """One node on a fresh database (`fresh_database`); yields (port, env). Stops it afterwards."""
    with fresh_database(binary, backend, pg_url, workdir, keep=keep) as (env, _):
        server, port = start_node(binary, env, os.path.join(workdir, "server.log"))
        # For benchmarks that read the server's own figures (/proc/PID/status, /metrics).
        env["UPSTAIRS_BENCH_SERVER_PID"] = str(server.pid)
        env["UPSTAIRS_BENCH_METRICS_PORT"] = str(server.metrics_port)
        try:
            yield port, env
        finally:
            stop_node(server)


# ---------------------------------------------------------------- the venue


def sign_in(port, email, address=None):
    client = Client(port)
    body = {"email": email, "password": PASSWORD, "rememberMe": True}
    client.token = expect(client.call("POST", "/api/auth/login", body, address), 200, f"{email} sign-in")["token"]
    return client


def create_broker(admin, **fields):
    return expect(admin.call("POST", "/api/admin/companies", {
        "name": "Broker", "full_name": "Bench Broker", "roles": ["broker"], **fields}), 201, "broker")


def create_firm(admin, name, broker_id, full_name=None):
    ref = {"company_id": broker_id}
    return expect(admin.call("POST", "/api/admin/companies", {
        "name": name, "full_name": full_name or f"Bench {name}", "brokers": [ref], "default_broker": ref}), 201, name)


def create_instrument(admin, name, term):
    """An instrument of the bench's band: 94.00 … 96.00 by 0.01, one lot at the least."""
    return expect(admin.call("POST", "/api/admin/instruments", {
        "name": name, "term": term, "min_quantity": 1, "tick_size": 0.01, "exchange_id": "B", "currency": "EUR",
        "min_tick_price": TICK_LO / 10 ** DECIMALS, "max_tick_price": TICK_HI / 10 ** DECIMALS}), 201,
        "instrument")["instrument_id"]


def create_trader(binary, env, port, admin, email, company, address=None):
    """A trader of `company` made by the CLI (as an operator would), signed in, with the parent
    order limit lifted: the default (100,000 lots) would stop a long run."""
    subprocess.run([binary, "user", "create", "--email", email, "--password", PASSWORD, "--role", "trader",
                    "--company", company], env=env, check=True, stdout=subprocess.DEVNULL)
    trader = sign_in(port, email, address)
    me = expect(trader.call("GET", "/api/users/me"), 200, "users/me")
    expect(admin.call("PATCH", f"/api/users/{me['user_id']}", {"parent_order_limit_multiplier": 1_000_000_000}), 200,
           "parent order limit")
    return trader


def resting(trader, instrument_id):
    """Resting lots in an instrument's book (every order here is one lot, so it is the order count)."""
    book = expect(trader.call("GET", f"/api/instruments/{instrument_id}/book"), 200, "book")
    return sum(level["buy_quantity"] + level["sell_quantity"] for level in book["levels"])


def setup_venue(port, env, args):
    admin = sign_in(port, ADMIN)
    broker = create_broker(admin)
    create_firm(admin, "Firm", broker["company_id"])
    instruments = [create_instrument(admin, name, term) for name, term in (
        ("Bench A Dec26-Mar27", "Dec26-Mar27"), ("Bench B Mar27-Jun27", "Mar27-Jun27"),
        ("Bench C Jun27-Sep27", "Jun27-Sep27"))]
    trader = create_trader(args.bin, env, port, admin, "trader@bench.test", "Firm")
    # One parent per connection on each instrument: 16 connections are 16 order flows, as
    # 16 traders working their own parents would be (a parent's writes are serialised).
    parents = [[expect(trader.call("POST", "/api/parent-orders",
                                   {"direction": "BUY", "instrument_id": i, "quantity": 1_000_000_000}), 201,
                       "parent order")["parent_order_id"] for _ in range(args.connections)] for i in instruments]
    return trader, broker["company_id"], instruments, parents


def fill(args, port, trader, broker, instrument, parents, target):
    """Brings the instrument's book to exactly `target` resting one-lot orders through the API."""
    post = [f"token={trader.token}", f"post={','.join(parents)}", f"broker={broker}",
            f"ticks={TICK_LO}:{TICK_HI}:{DECIMALS}"]
    parent = parents[0]
    have = resting(trader, instrument)
    # wrk, bounded by count per thread, stops a little short (answers in flight); one connection tops up.
    bulk = target - have - 4 * args.connections
    started = time.perf_counter()
    if bulk > 0:
        per_thread = max(1, bulk // args.threads)
        goal = have + per_thread * args.threads
        r = wrk(args, port, "/api/orders", post + [f"limit={per_thread}"], 600, "fill.txt",
                stop_when=lambda: resting(trader, instrument) >= goal)
        if r["errors"]["status"]:
            sys.exit(f"fill: {r['errors']['status']} orders were refused; see fill.txt (--keep)")
        have = resting(trader, instrument)
    rng_ticks = list(range(TICK_LO, TICK_HI + 1))
    i = 0
    while have < target:
        t = rng_ticks[(i * 37) % len(rng_ticks)]
        i += 1
        expect(trader.call("POST", "/api/orders", {
            "parent_order_id": parent, "quantity": 1, "limit_price": t / 10**DECIMALS, "broker_id": broker,
            "residual": True, "iceberg": False}), 201, "top-up order")
        have += 1
    have = resting(trader, instrument)
    print(f"  filled the book to {have} resting orders in {time.perf_counter() - started:.1f} s", flush=True)
    return have


# ---------------------------------------------------------------- report


HZ = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pick):
    """User + system CPU seconds of the processes `pick(pid, name)` chooses."""
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        if pick(int(pid), name):
            total += int(fields[11]) + int(fields[12])
    return total / HZ


def ms(us):
    return f"{us / 1000:.2f} ms"


def main():
    ap = bench_args(__doc__)
    ap.add_argument("--duration", type=float, default=10, help="seconds per measured call (default 10)")
    ap.add_argument("--connections", type=int, default=16, help="wrk connections and pgbench clients (16)")
    ap.add_argument("--threads", type=int, default=2, help="wrk and pgbench threads (2)")
    ap.add_argument("--resting", type=int, default=10_000, help="resting orders in the full book (10000)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="rounds of every call, interleaved; the median round is reported (3)")
    ap.add_argument("--keep", action="store_true", help="keep the work folder (wrk outputs, database file)")
    args = ap.parse_args()
    if not os.path.exists(args.bin):
        sys.exit(f"{args.bin} is missing: cargo build --release -p upstairs (or set UPSTAIRS_BIN)")
    for tool in ("wrk",) + (("pgbench", "psql") if args.backend == "postgres" else ()):
        if not shutil.which(tool):
            sys.exit(f"{tool} is missing: use bench/run.sh, which installs it")
    args.workdir = tempfile.mkdtemp(prefix="upstairs-bench-")
    duration = int(args.duration)
    version = subprocess.run([args.bin, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{version} ({args.bin}), {args.backend}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f}, {date.today()}; wrk {args.threads} threads × {args.connections} connections, "
          f"{duration} s per call, 127.0.0.1; work folder {args.workdir}", flush=True)

    # 1. The database's own ceiling, before the server starts.
    print("measuring the database's single-row insert ceiling…", flush=True)
    if args.backend == "sqlite":
        ceiling = sqlite_ceiling(os.path.join(args.workdir, "ceiling.db"), duration)
    else:
        ceiling = pg_ceiling(args.pg_url, duration, args.connections, args.threads, args.workdir)

    # 2. The server on a fresh database.
    results = []
    try:
        with serving(args.bin, args.backend, args.pg_url, args.workdir) as (port, env):
            run_measures(args, port, env, duration, results)
    finally:
        if not args.keep:
            shutil.rmtree(args.workdir, ignore_errors=True)
    report(args, version, duration, ceiling, results)


def run_measures(args, port, env, duration, results):
    """Steps 3 and 4: wrk on the empty book, then on the full one."""
    trader, broker, instruments, parents = setup_venue(port, env, args)
    token = f"token={trader.token}"
    wrk(args, port, "/healthz", [], 2, "warmup.txt")

    def measure(phase, instrument, parents, control=None):
        book = "GET /api/instruments/{id}/book"
        runs = [("GET /healthz", "/healthz", [], phase, instrument),
                ("GET /api/users/me", "/api/users/me", [token], phase, instrument),
                (book, f"/api/instruments/{instrument}/book", [token], phase, instrument)]
        if control:
            runs.append((book, f"/api/instruments/{control}/book", [token], "levels", control))
        ticks = f"ticks={TICK_LO}:{TICK_HI}:{DECIMALS}"
        runs.append(("POST /api/orders", "/api/orders",
                     [token, f"post={','.join(parents)}", f"broker={broker}", ticks], phase, instrument))
        # What one parent's serialised writes allow (every connection on the same parent).
        runs.append((ONE_PARENT, "/api/orders", [token, f"post={parents[0]}", f"broker={broker}", ticks],
                     phase, instrument))
        # Each call `--repeat` times, the rounds interleaved (a noisy neighbour hits every
        # call alike); the figure kept is the round with the median rate. The reads' rounds
        # come first, so that the POSTs' orders never sit in a book a read measures.
        rounds = {(n, ph, path): [] for n, path, _, ph, _ in runs}
        reads = [r for r in runs if not r[0].startswith("POST")]
        writes = [r for r in runs if r[0].startswith("POST")]
        order = [(k, r) for k in range(args.repeat) for r in reads] + [(k, r) for k in range(args.repeat) for r in writes]
        for k, (name, path, script_args, phase, instrument) in order:
            start_book = resting(trader, instrument)
            r = wrk(args, port, path, script_args, duration,
                    f"{phase}-{name.split()[0].lower()}-{path.strip('/').split('/')[-1]}-{k}.txt")
            r.update(call=name, phase=phase, book_start=start_book, book_end=resting(trader, instrument))
            rounds[(name, phase, path)].append(r)
            print(f"  {phase:<6} {name:<31} {r['rate']:9.0f} req/s  p50 {ms(r['p50_us']):>9}  "
                  f"p99 {ms(r['p99_us']):>9}  errors {r['errors_total']}  book {r['book_start']}→{r['book_end']}"
                  f"  (round {k + 1}/{args.repeat})", flush=True)
        for rs in rounds.values():
            median = sorted(rs, key=lambda r: r["rate"])[len(rs) // 2]
            median["rounds"] = [round(r["rate"]) for r in rs]
            median["errors_total"] = sum(r["errors_total"] for r in rs)
            results.append(median)

    print("empty book (instrument A):", flush=True)
    measure("empty", instruments[0], parents[0])
    print(f"book with {args.resting} resting orders (instrument B):", flush=True)
    fill(args, port, trader, broker, instruments[1], parents[1], args.resting)
    # The control: the same levels as the full book (one per tick of the band), one
    # order each, read right after the full book. Against it, the full book shows what
    # the number of orders costs beyond the number of levels.
    for t in range(TICK_LO, TICK_HI + 1):
        expect(trader.call("POST", "/api/orders", {
            "parent_order_id": parents[2][0], "quantity": 1, "limit_price": t / 10**DECIMALS, "broker_id": broker,
            "residual": True, "iceberg": False}), 201, "control order")
    measure("full", instruments[1], parents[1], control=instruments[2])


def report(args, version, duration, ceiling, results):
    # 3. The table.
    full = f"{args.resting // 1000}k" if args.resting % 1000 == 0 else str(args.resting)
    by = {(r["phase"], r["call"]): r for r in results}
    print()
    print(f"Upstairs on {args.backend}, {date.today()}: {version}, {os.cpu_count()} cores, wrk -t{args.threads} "
          f"-c{args.connections} -d{duration}s --latency, 127.0.0.1")
    print(f"DB ceiling: {ceiling['rate']:.0f} rows/s, p50 {ceiling['p50_ms']:.2f} ms, p99 {ceiling['p99_ms']:.2f} ms "
          f"({ceiling['label']})")
    print()
    print(f"Each figure is the median of {args.repeat} interleaved rounds (req/s of every round in brackets).")
    print()
    print("| call | book | req/s | rounds | p50 | p99 | errors | ÷ DB ceiling |")
    print("|---|---|---:|---|---:|---:|---:|---:|")
    for r in results:
        book = {"empty": "empty", "levels": f"{r['book_start']:,} resting, one per tick"}.get(
            r["phase"], f"{r['book_start']:,} resting")
        if r["call"] in ("POST /api/orders", ONE_PARENT):
            book += f" (→ {r['book_end']:,})"
        rounds = " / ".join(str(x) for x in r["rounds"])
        print(f"| `{r['call']}` | {book} | {r['rate']:.0f} | {rounds} | {ms(r['p50_us'])} | {ms(r['p99_us'])} | "
              f"{r['errors_total']} | {r['rate'] / ceiling['rate']:.3f} |")
    print()

    def ratio(a, b):
        return by[a]["rate"] / by[b]["rate"]

    post_e, post_f = by[("empty", "POST /api/orders")], by[("full", "POST /api/orders")]
    derived = [
        ("`POST /api/orders` / DB ceiling (empty book)", post_e["rate"] / ceiling["rate"], "≥ 0.2",
         f"p99 {ms(post_e['p99_us'])} (target ≤ 50 ms)"),
        (f"`POST /api/orders` / DB ceiling ({full} book)", post_f["rate"] / ceiling["rate"], "≥ 0.2",
         f"p99 {ms(post_f['p99_us'])} (target ≤ 50 ms)"),
        (f"`POST /api/orders`, every connection on one parent / DB ceiling ({full} book)",
         by[("full", ONE_PARENT)]["rate"] / ceiling["rate"], "(no target)",
         f"p99 {ms(by[('full', ONE_PARENT)]['p99_us'])}: one parent's writes are serialised"),
        (f"`POST /api/orders` {full} book / empty book", ratio(("full", "POST /api/orders"),
                                                             ("empty", "POST /api/orders")), "≥ 0.8", ""),
        (f"`GET book` {full} book / empty book", ratio(("full", "GET /api/instruments/{id}/book"),
                                                     ("empty", "GET /api/instruments/{id}/book")), "≥ 0.8", ""),
        (f"`GET book` {full} book / the same levels with one order each",
         ratio(("full", "GET /api/instruments/{id}/book"), ("levels", "GET /api/instruments/{id}/book")),
         "(control)", "orders cost nothing beyond their levels when ≈ 1"),
        ("`GET book` / `GET users/me` (empty book)", ratio(("empty", "GET /api/instruments/{id}/book"),
                                                          ("empty", "GET /api/users/me")), "≥ 0.3", ""),
        (f"`GET book` / `GET users/me` ({full} book)", ratio(("full", "GET /api/instruments/{id}/book"),
                                                           ("full", "GET /api/users/me")), "≥ 0.3", ""),
    ]
    print("| derived ratio | value | target | |")
    print("|---|---:|---|---|")
    for name, value, target, note in derived:
        print(f"| {name} | {value:.3f} | {target} | {note} |")
    errors = sum(r["errors_total"] for r in results)
    if errors:
        print(f"\nnote: {errors} requests failed (non-2xx or socket errors); see the wrk outputs (--keep)")


if __name__ == "__main__":
    main()
