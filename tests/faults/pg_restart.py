#!/usr/bin/env python3
"""PostgreSQL stops and comes back under load: 503 while it is gone, then 200 again, nothing lost.

    tests/faults/pg_restart.py                 # one outage of 5 s
    tests/faults/pg_restart.py --outage 3 --rounds 2

It stops the machine's PostgreSQL cluster (`pg_ctlcluster --skip-systemctl-redirect <v> main
stop -m fast`) and starts it again: every other client of that server loses its
connections too. Run it only where that is acceptable; the outage is capped at 9 s and the
cluster is started again whatever happens (also on Ctrl-C).

What one run does, on 127.0.0.1 only and bounded in time:

1. Starts `upstairs serve --always-open` on a new PostgreSQL database (dropped at the end),
   creates through the API a broker, a firm, a trader, an instrument and a parent order.
2. Load: reader threads (`GET /api/users/me`, the book, the trader's orders; each
   authenticated) and writer threads (`POST /api/orders`, a distinct quantity and an
   `Idempotency-Key` each), plus a `/readyz` probe every 100 ms. Every answer is recorded
   with its status and time.
3. After a few seconds: PostgreSQL stops for `--outage` seconds, then starts; the load goes
   on until the server has answered `/readyz` 200 for a few seconds. The server is never
   restarted.
4. Prints the answers per status and phase (before, outage, recovery, after), the
   longest answer, how long the server took to be ready again, and checks that every
   acknowledged order is there (read back by id and in the parent's list); orders present
   whose answer was not a 201 are counted apart.
   Exits 1 when an answer was 500 (or any 5xx other than 503), when /readyz never said
   503 during the outage, when an answer took longer than --bound, when the server did not
   answer 200 again without a restart, or when an acknowledged order is missing.
"""

import argparse
import collections
import itertools
import os
import subprocess
import sys
import threading
import time
import traceback

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (AnswerLost, Database, NotSent, Server, call, default_bin, expect, login, new_key,  # noqa: E402
                    poll, rmtree, workdir)

MAX_OUTAGE = 9.0


def cluster():
    versions = sorted(os.listdir("/etc/postgresql"))
    if not versions:
        sys.exit("no PostgreSQL cluster in /etc/postgresql")
    return versions[-1], "main"


def pg_ctl(action, version, name):
    cmd = ["pg_ctlcluster", "--skip-systemctl-redirect", version, name, action]
    if action == "stop":
        cmd += ["-m", "fast"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def pg_ready():
    return subprocess.run(["pg_isready", "-q", "-h", "127.0.0.1", "-p", "5432"], timeout=10).returncode == 0


class Recorder:
    def __init__(self):
        self.lock = threading.Lock()
        self.answers = []  # (start, end, kind, status or exception name, detail)
        self.marks = {}
        self.spawned = []

    def add(self, *row):
        with self.lock:
            self.answers.append(row)

    def mark(self, name):
        self.marks[name] = time.time()
        return self.marks[name]


def loader(kind, port, token, rec, stop, work, timeout, rate, cap):
    """Open loop: starts `rate` requests a second, each on its own thread (at most `cap` in
    flight), so that a request arrives at every moment of the outage even while earlier
    ones hang."""
    inflight = threading.Semaphore(cap)

    def one():
        try:
            path, method, body, key = work()
            start = time.time()
            try:
                a = call(port, method, path, body, token=token, key=key, timeout=timeout)
                if a.status >= 400:
                    detail = f"{method} {path.split('?')[0]}: {a.detail()}"
                else:
                    detail = a.body if kind == "write" else None
                rec.add(start, time.time(), kind, a.status, detail)
            except (NotSent, AnswerLost) as e:
                rec.add(start, time.time(), kind, type(e).__name__, f"{method} {path.split('?')[0]}: {e}")
        finally:
            inflight.release()

    interval = 1.0 / rate
    next_at = time.monotonic()
    while not stop.is_set():
        if inflight.acquire(timeout=0.5):
            t = threading.Thread(target=one, daemon=True)
            rec.spawned.append(t)
            t.start()
        else:
            rec.add(time.time(), time.time(), kind, "client cap", f"{cap} requests in flight")
        next_at += interval
        stop.wait(max(0.0, next_at - time.monotonic()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=default_bin())
    ap.add_argument("--pg-url", default=os.environ.get("UPSTAIRS_FAULTS_PG_URL", "postgres://postgres@127.0.0.1:5432"))
    ap.add_argument("--outage", type=float, default=5.0, help=f"seconds PostgreSQL stays down (≤ {MAX_OUTAGE:g})")
    ap.add_argument("--rounds", type=int, default=1, help="outages, one after the other (1)")
    ap.add_argument("--read-rate", type=float, default=40, help="authenticated reads started a second (40)")
    ap.add_argument("--write-rate", type=float, default=20, help="POST /api/orders started a second (20)")
    ap.add_argument("--request-timeout", type=float, default=60.0,
                    help="the client gives up on an answer after this long (reported as a hang)")
    ap.add_argument("--bound", type=float, default=20.0,
                    help="an answer slower than this fails the run (20 s; the pool's acquire timeout is 15 s)")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    if args.outage > MAX_OUTAGE:
        sys.exit(f"--outage is capped at {MAX_OUTAGE:g} s (the PostgreSQL server is shared)")
    version, name = cluster()
    if not pg_ready():
        sys.exit("PostgreSQL is not running at 127.0.0.1:5432")
    wd = workdir("faults-pg-restart-")
    t0 = time.monotonic()

    def log(msg):
        print(f"[{time.monotonic() - t0:6.1f}s] {msg}", flush=True)

    log(f"pg_restart: {args.bin}, PostgreSQL {version}/{name}, {args.rounds} outage(s) of {args.outage:g} s, "
        f"{args.read_rate:g} reads/s + {args.write_rate:g} orders/s, work folder {wd}")
    db = server = None
    failed = True
    stop = threading.Event()
    pg_stopped = False
    try:
        db = Database("postgres", wd, args.pg_url, tag="faults_pgrestart")
        server = Server(args.bin, db, wd)
        server.create_user("admin@faults.test", "upstairs-admin", "Upstairs", "Ada", "Admin")
        server.create_user("trader@faults.test", "trader", "Halyard", "Tia", "Trader")
        server.start()
        pid = server.proc.pid
        p = server.port
        admin = login(p, "admin@faults.test")
        broker = expect(call(p, "POST", "/api/admin/companies", {"name": "Baltic", "full_name": "Baltic Ltd",
                                                                 "roles": ["broker"]}, token=admin, key=new_key()),
                        201, "broker")["company_id"]
        ref = {"company_id": broker}
        expect(call(p, "PATCH", f"/api/admin/companies/{company_id(p, admin, 'Halyard')}",
                    {"brokers": [ref], "default_broker": ref}, token=admin, key=new_key()), 200, "firm's broker")
        instrument = expect(call(p, "POST", "/api/admin/instruments", {
            "name": "Fault PG Dec26-Mar27", "term": "Dec26-Mar27", "min_quantity": 1, "tick_size": 0.01,
            "exchange_id": "F", "currency": "EUR", "min_tick_price": 90.0, "max_tick_price": 100.0},
            token=admin, key=new_key()), 201, "instrument")["instrument_id"]
        trader = login(p, "trader@faults.test")
        me = expect(call(p, "GET", "/api/users/me", token=trader), 200, "me")
        expect(call(p, "PATCH", f"/api/users/{me['user_id']}", {"parent_order_limit_multiplier": 1_000_000_000},
                    token=admin, key=new_key()), 200, "limit")
        parent = expect(call(p, "POST", "/api/parent-orders", {"direction": "SELL", "instrument_id": instrument,
                                                               "quantity": 900_000_000}, token=trader, key=new_key()),
                        201, "parent")["parent_order_id"]

        rec = Recorder()
        tags = itertools.count(1000)
        tag_lock = threading.Lock()
        sent = {}  # quantity → key

        def write():
            with tag_lock:
                q = next(tags)
            key = new_key()
            sent[q] = key
            return ("/api/orders", "POST", {"parent_order_id": parent, "quantity": q, "limit_price": 95.0,
                                            "broker_id": broker, "residual": True, "iceberg": False}, key)

        reads = itertools.cycle(["/api/users/me", f"/api/instruments/{instrument}/book",
                                 f"/api/orders?parent_order_id={parent}&state=WORKING", "/api/platform/status"])
        read_lock = threading.Lock()

        def read():
            with read_lock:
                return next(reads), "GET", None, None

        threads = [
            threading.Thread(target=loader, daemon=True,
                             args=("read", p, trader, rec, stop, read, args.request_timeout, args.read_rate, 400)),
            threading.Thread(target=loader, daemon=True,
                             args=("write", p, trader, rec, stop, write, args.request_timeout, args.write_rate, 200)),
            threading.Thread(target=loader, daemon=True,
                             args=("probe", p, None, rec, stop, lambda: ("/readyz", "GET", None, None),
                                   args.request_timeout, 10, 100)),
        ]
        for t in threads:
            t.start()
        rec.mark("load")
        stop.wait(3)  # load before the outage (the run's shape, not a wait for the server)
        outages = []
        for r in range(args.rounds):
            # A checkpoint first, so that the shutdown's own checkpoint is short and the
            # outage is what --outage says.
            subprocess.run(["psql", db.admin_url, "-X", "-q", "-c", "checkpoint"], capture_output=True, timeout=120)
            down_at = rec.mark(f"stop{r}")
            res = pg_ctl("stop", version, name)
            pg_stopped = True
            stopped_at = rec.mark(f"stopped{r}")
            log(f"PostgreSQL stopped ({res.returncode}, {stopped_at - down_at:.1f} s)")
            stop.wait(args.outage)
            start_at = rec.mark(f"start{r}")
            res = pg_ctl("start", version, name)
            if res.returncode != 0:
                log(f"pg_ctlcluster start: {res.stdout} {res.stderr}")
            poll("PostgreSQL up", pg_ready, 60, 0.05)
            pg_stopped = False
            up_at = rec.mark(f"up{r}")
            log(f"PostgreSQL started ({up_at - start_at:.1f} s); down for {up_at - down_at:.1f} s")
            ready_at = poll("the server ready again", lambda: server.ready() and time.time(), 120, 0.05)
            rec.mark(f"ready{r}")
            log(f"the server answers /readyz 200 again {ready_at - up_at:.2f} s after PostgreSQL is up "
                f"(pid {server.proc.pid}, {'the same process' if server.proc.pid == pid else 'RESTARTED'})")
            outages.append((down_at, stopped_at, up_at, ready_at))
            stop.wait(3)
        stop.set()
        for t in threads:
            t.join(timeout=10)
        # Requests still in flight finish within the client's timeout.
        for t in list(rec.spawned):
            t.join(timeout=args.request_timeout + 10)
        rec.mark("end")
        alive = server.proc.poll() is None and server.proc.pid == pid
        failed = report(args, rec, outages, server, trader, parent, sent, alive, log)
    except BaseException:
        traceback.print_exc()
        failed = True
    finally:
        stop.set()
        if pg_stopped or not pg_ready():
            for _ in range(5):
                if pg_ctl("start", version, name).returncode == 0 or pg_ready():
                    break
            with_deadline = time.monotonic() + 60
            while not pg_ready() and time.monotonic() < with_deadline:
                time.sleep(0.1)
            print("PostgreSQL started again in cleanup:", pg_ready())
        if server:
            server.stop()
        if db:
            db.close()
        if args.keep:
            print(f"work folder kept: {wd}")
        else:
            rmtree(wd)
    sys.exit(1 if failed else 0)


def company_id(port, admin, name):
    page = expect(call(port, "GET", "/api/admin/companies?size=200", token=admin), 200, "companies")
    items = page["items"] if isinstance(page, dict) else page
    return next(c["company_id"] for c in items if c["name"] == name)


def phase_of(start, outages):
    """before: PostgreSQL up; outage: from the stop command until PostgreSQL accepts
    connections again; recovery: until the server's /readyz says 200; after."""
    for i, (down_at, stopped_at, up_at, ready_at) in enumerate(outages):
        if start < down_at:
            return "before" if i == 0 else "after"
        if start < up_at:
            return "outage"
        if start < ready_at:
            return "recovery"
    return "after"


def report(args, rec, outages, server, trader, parent, sent, alive, log):
    by_phase = collections.defaultdict(collections.Counter)
    times = collections.defaultdict(list)
    details = collections.Counter()
    for start, end, kind, status, detail in rec.answers:
        ph = phase_of(start, outages)
        by_phase[(ph, kind)][status] += 1
        times[(ph, kind)].append(end - start)
        if status != 200 and status != 201:
            d = detail.get("detail") if isinstance(detail, dict) else detail
            details[(ph, kind, status, str(d)[:120])] += 1
    phases = ["before", "outage", "recovery", "after"]
    print()
    print(f"## PostgreSQL restarted under load: {len(outages)} outage(s) of {args.outage:g} s")
    print()
    print("Each request counts in the phase it was sent in; 'outage' runs from the stop command "
          "until PostgreSQL accepts connections again.")
    print()
    print("| phase | traffic | answers by status | p50 | p99 | longest |")
    print("|---|---|---|---:|---:|---:|")
    for ph in phases:
        for kind in ("read", "write", "probe"):
            c = by_phase.get((ph, kind))
            if not c:
                continue
            ts = sorted(times[(ph, kind)])
            what = {"read": "authenticated reads", "write": "POST /api/orders", "probe": "GET /readyz"}[kind]
            print(f"| {ph} | {what} | {', '.join(f'{k}: {n}' for k, n in sorted(c.items(), key=str))} | "
                  f"{ts[len(ts) // 2] * 1000:.0f} ms | {ts[min(len(ts) - 1, int(len(ts) * 0.99))] * 1000:.0f} ms | "
                  f"{ts[-1] * 1000:.0f} ms |")
    print()
    for i, (down_at, stopped_at, up_at, ready_at) in enumerate(outages):
        # The first answer 200 to a request sent after PostgreSQL was up again.
        first_ok = min((end for start, end, kind, status, _ in rec.answers
                        if start >= up_at and status in (200, 201)), default=None)
        print(f"outage {i + 1}: PostgreSQL refused connections for {up_at - down_at:.1f} s (the stop command "
              f"took {stopped_at - down_at:.1f} s); first 2xx to a request sent after it was back: "
              f"{(first_ok - up_at) * 1000:.0f} ms later" if first_ok else "none")
    if details:
        print("answers other than 200/201:")
        for (ph, kind, status, d), n in sorted(details.items(), key=lambda x: -x[1])[:15]:
            print(f"  - {n} × {ph} {kind} {status}: {d}")
    # Every acknowledged order is there; orders there without a 201 are counted apart.
    acked = {}
    for start, end, kind, status, body in rec.answers:
        if kind == "write" and status == 201:
            acked[body["quantity"]] = body["order_id"]
    orders = call(server.port, "GET", f"/api/orders?parent_order_id={parent}", token=trader, timeout=60)
    present = collections.Counter(o["quantity"] for o in (orders.body if isinstance(orders.body, list)
                                                          else orders.body.get("items", [])))
    missing = [q for q in acked if present[q] == 0]
    unreadable = [oid for oid in acked.values()
                  if call(server.port, "GET", f"/api/orders/{oid}", token=trader, timeout=60).status != 200]
    unacked_present = [q for q in sent if q not in acked and present[q] > 0]
    doubled = [q for q, n in present.items() if n > 1]
    five_hundreds = sum(n for (ph, kind), c in by_phase.items() for s, n in c.items()
                        if isinstance(s, int) and s >= 500 and s != 503)
    outage_503 = sum(c.get(503, 0) for (ph, kind), c in by_phase.items() if ph == "outage")
    longest = max((end - start for start, end, *_ in rec.answers), default=0)
    slow = sum(1 for start, end, *_ in rec.answers if end - start > 1)
    ready_503 = sum(c.get(503, 0) for (ph, kind), c in by_phase.items() if ph == "outage" and kind == "probe")
    ready_200 = sum(c.get(200, 0) for (ph, kind), c in by_phase.items() if ph == "outage" and kind == "probe")
    errors = server.log_lines(r"ERROR|panicked")
    print()
    print("| figure | value |")
    print("|---|---:|")
    print(f"| orders acknowledged (201) | {len(acked)} |")
    print(f"| acknowledged but missing (list / by id) | {len(missing)} / {len(unreadable)} |")
    print(f"| present without a 201 (the answer was an error) | {len(unacked_present)} |")
    print(f"| quantities present twice | {len(doubled)} |")
    print(f"| 503 answers while PostgreSQL was down | {outage_503} |")
    print(f"| 5xx answers other than 503 (any phase) | {five_hundreds} |")
    print(f"| longest answer (any phase) | {longest:.1f} s |")
    print(f"| answers slower than 1 s | {slow} |")
    print(f"| /readyz sent during the outage: 503 / 200 | {ready_503} / {ready_200} |")
    print(f"| the server answered 200 again without a restart | {alive and bool(outages)} |")
    print(f"| server log ERROR/panic lines | {len(errors)} |")
    for line in errors[:6]:
        print(f"    {line[:300]}")
    failed = bool(missing or unreadable or five_hundreds or not alive or not outages or not ready_503
                  or longest > args.bound)
    print()
    print("RESULT:", "FAIL" if failed else "PASS")
    return failed


if __name__ == "__main__":
    main()
