#!/usr/bin/env python3
"""A SQLite file that becomes read-only, a disk that fills up: clear errors, reads go on, no corruption.

    tests/faults/sqlite_disk.py                    # both cases
    tests/faults/sqlite_disk.py --case read-only   # the short run's case
    tests/faults/sqlite_disk.py --case full --fs ext4

Needs root (chattr, mount). What one run does, on 127.0.0.1 only and bounded in time, for
each case:

- read-only: the database file and its WAL (`upstairs.db`, `upstairs.db-wal`) get the
  immutable attribute (`chattr +i`) while the server runs: every write to them fails with
  EPERM, for root too, also through descriptors already open (a `chmod` would not stop a
  root process, and a read-only remount is refused while the file is open for writing).
  The shared-memory index (`-shm`) is left alone: it is mapped, and a write fault there
  would be a SIGBUS, not a read-only file.
- full: the database lives on a small file system of its own (tmpfs, or with `--fs ext4`
  an ext4 image on a loop device), and a filler file takes every free byte.

Then the same calls as a trader and as the venue admin, several rounds: writes
(`POST /api/parent-orders`, `POST /api/orders`, `PATCH` and `DELETE /api/orders/{id}`, a
take, a sign-in) and reads (profile, parent orders, orders, the book, the action log,
`/readyz`). Every answer is printed by status with its `detail`. Then the condition is
lifted: writes must work again (polled with a deadline), the server is restarted, every
acknowledged order is read back, and `PRAGMA integrity_check` on the file must say `ok`.

Exits 1 when a fault answer was a 5xx other than 503/507, the server process died, a read
failed during the fault, writes did not work again after it, an acknowledged write is
missing, or the integrity check is not `ok`. Every status is printed as the server gave it.
"""

import argparse
import collections
import contextlib
import os
import sqlite3
import subprocess
import sys
import time
import traceback

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (AnswerLost, Database, NotSent, Server, call, default_bin, expect, login, new_key,  # noqa: E402
                    poll, rmtree, workdir)

OK_FAULT_STATUSES = {503, 507}


def run(cmd, check=True):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=check)


class Venue:
    """Admin, a broker, two firms with a trader each, an instrument, a parent each."""

    def __init__(self, server):
        p = self.port = server.port
        self.server = server
        self.admin = login(p, "admin@faults.test")
        self.broker = expect(call(p, "POST", "/api/admin/companies", {
            "name": "Baltic", "full_name": "Baltic Ltd", "roles": ["broker"]}, token=self.admin, key=new_key()),
            201, "broker")["company_id"]
        ref = {"company_id": self.broker}
        companies = expect(call(p, "GET", "/api/admin/companies?size=200", token=self.admin), 200, "companies")
        for c in companies["items"]:
            if c["name"] in ("Halyard", "Kestrel"):
                expect(call(p, "PATCH", f"/api/admin/companies/{c['company_id']}", {"brokers": [ref],
                            "default_broker": ref}, token=self.admin, key=new_key()), 200, "firm's broker")
        self.instrument = expect(call(p, "POST", "/api/admin/instruments", {
            "name": "Fault Disk Dec26-Mar27", "term": "Dec26-Mar27", "min_quantity": 1, "tick_size": 0.01,
            "exchange_id": "F", "currency": "EUR", "min_tick_price": 90.0, "max_tick_price": 100.0},
            token=self.admin, key=new_key()), 201, "instrument")["instrument_id"]
        self.a = login(p, "a@faults.test")
        self.b = login(p, "b@faults.test")
        for t in (self.a, self.b):
            me = expect(call(p, "GET", "/api/users/me", token=t), 200, "me")
            expect(call(p, "PATCH", f"/api/users/{me['user_id']}", {"parent_order_limit_multiplier": 1_000_000_000},
                        token=self.admin, key=new_key()), 200, "limit")
        self.sell = self.parent(self.a, "SELL")
        self.buy = self.parent(self.b, "BUY")
        self.acked_orders = []
        self.tag = 1000
        # Something to take, and working orders to edit and cancel.
        for _ in range(4):
            self.order(self.a, self.sell, check=True)

    def parent(self, token, direction):
        return expect(call(self.port, "POST", "/api/parent-orders", {
            "direction": direction, "instrument_id": self.instrument, "quantity": 100_000_000},
            token=token, key=new_key()), 201, "parent")["parent_order_id"]

    def order(self, token, parent, check=False):
        self.tag += 1
        a = call(self.port, "POST", "/api/orders", {"parent_order_id": parent, "quantity": self.tag,
                                                    "limit_price": 95.0, "broker_id": self.broker,
                                                    "residual": True, "iceberg": False}, token=token, key=new_key())
        if a.status == 201:
            self.acked_orders.append((token, a.body["order_id"]))
        elif check:
            raise RuntimeError(f"order: {a.status} {a.body}")
        return a

    def working(self):
        a = call(self.port, "GET", f"/api/orders?parent_order_id={self.sell}&state=WORKING", token=self.a)
        return [o for o in (a.body if a.status == 200 else []) if o["state"] == "WORKING"]

    def writes(self):
        """One of each write; yields (label, answer)."""
        p = self.port
        yield "POST /api/orders", self.order(self.a, self.sell)
        yield "POST /api/parent-orders", call(p, "POST", "/api/parent-orders", {
            "direction": "SELL", "instrument_id": self.instrument, "quantity": 5}, token=self.a, key=new_key())
        working = self.working()
        if working:
            o = working[0]
            yield "PATCH /api/orders/{id}", call(p, "PATCH", f"/api/orders/{o['order_id']}",
                                                 {"limit_price": 95.5 if o["price"] != 95.5 else 95.25},
                                                 token=self.a, key=new_key())
            yield "DELETE /api/orders/{id}", call(p, "DELETE", f"/api/orders/{working[-1]['order_id']}",
                                                  token=self.a, key=new_key())
        yield "POST /api/order-match-requests", call(p, "POST", "/api/order-match-requests", {
            "requesting_parent_order_id": self.buy, "quantity": 1, "price": 100.0, "requesting_broker_id": self.broker,
            "dry_run": False, "residual": False}, token=self.b, key=new_key())
        yield "POST /api/auth/login", call(p, "POST", "/api/auth/login", {"email": "b@faults.test",
                                                                          "password": "Faults-Pass-2026"},
                                           key=new_key())

    def reads(self):
        p = self.port
        for label, path, token in (("GET /api/users/me", "/api/users/me", self.a),
                                   ("GET /api/parent-orders", "/api/parent-orders", self.a),
                                   ("GET /api/orders", f"/api/orders?parent_order_id={self.sell}", self.a),
                                   ("GET book", f"/api/instruments/{self.instrument}/book", self.b),
                                   ("GET /api/admin/action-logs", "/api/admin/action-logs?size=20", self.admin),
                                   ("GET /readyz", "/readyz", None)):
            yield label, call(p, "GET", path, token=token, timeout=30)


def exercise(v, rounds, log):
    """The calls under the fault: {label: Counter((status, detail))}, longest answer."""
    seen = collections.defaultdict(collections.Counter)
    longest = 0.0
    for _ in range(rounds):
        for kind, gen in (("write", v.writes()), ("read", v.reads())):
            while True:
                try:
                    label, a = next(gen)
                except StopIteration:
                    break
                except (NotSent, AnswerLost) as e:
                    seen[("write", "(connection)")][(type(e).__name__, str(e)[:100])] += 1
                    break
                longest = max(longest, a.elapsed)
                detail = "" if a.ok else a.detail()
                seen[(kind, label)][(a.status, detail)] += 1
    return seen, longest


def print_seen(title, seen):
    print(f"{title}:")
    print()
    print("| call | answers (status: detail) |")
    print("|---|---|")
    for (kind, label), c in seen.items():
        answers = "; ".join(f"{n} × {s}" + (f": {d}" if d else "") for (s, d), n in c.items())
        print(f"| {label} | {answers} |")
    print()


def judge(seen):
    """(bad write answers, failed reads)."""
    bad_writes, bad_reads = [], []
    for (kind, label), c in seen.items():
        for (s, d), n in c.items():
            if kind == "write" and isinstance(s, int) and s >= 500 and s not in OK_FAULT_STATUSES:
                bad_writes.append(f"{label}: {n} × {s} {d}")
            if kind == "write" and not isinstance(s, int):
                bad_writes.append(f"{label}: {n} × {s} {d}")
            if kind == "read" and s != 200 and label != "GET /readyz":
                bad_reads.append(f"{label}: {n} × {s} {d}")
    return bad_writes, bad_reads


def integrity(path):
    db = sqlite3.connect(path)
    try:
        return db.execute("pragma integrity_check").fetchone()[0]
    finally:
        db.close()


def lifted(v, log, timeout=30):
    """Writes work again: the time until the first POST /api/orders is 201 (polled)."""
    t = time.monotonic()
    poll("writes work again", lambda: v.order(v.a, v.sell).status == 201, timeout, 0.1)
    return time.monotonic() - t


def case_read_only(args, wd, log):
    dbdir = os.path.join(wd, "ro")
    os.makedirs(dbdir)
    files = [os.path.join(dbdir, "upstairs.db"), os.path.join(dbdir, "upstairs.db-wal")]
    return run_case(args, wd, dbdir, log, "read-only",
                    apply=lambda: [run(["chattr", "+i", f]) for f in files if os.path.exists(f)],
                    lift=lambda: [run(["chattr", "-i", f], check=False) for f in files if os.path.exists(f)],
                    what="chattr +i upstairs.db upstairs.db-wal")


def case_full(args, wd, log):
    mnt = os.path.join(wd, "full")
    os.makedirs(mnt)
    image = None
    if args.fs == "ext4":
        image = os.path.join(wd, "disk.img")
        run(["truncate", "-s", f"{args.size_mb}M", image])
        run(["mkfs.ext4", "-q", "-F", "-m", "0", image])
        run(["mount", "-o", "loop", image, mnt])
    else:
        run(["mount", "-t", "tmpfs", "-o", f"size={args.size_mb}m", "tmpfs", mnt])
    filler = os.path.join(mnt, "filler")

    def fill():
        # Every free byte: dd stops at ENOSPC (its non-zero exit is the point).
        run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k"], check=False)
        run(["dd", "if=/dev/zero", f"of={filler}.tail", "bs=512"], check=False)
        st = os.statvfs(mnt)
        log(f"  filled: {st.f_bavail * st.f_frsize} bytes left on {args.fs}")

    def unfill():
        for f in (filler, f"{filler}.tail"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f)

    try:
        return run_case(args, wd, mnt, log, "full", apply=fill, lift=unfill,
                        what=f"a {args.size_mb} MB {args.fs} file system filled by a filler file")
    finally:
        unfill()
        for _ in range(20):
            if run(["umount", mnt], check=False).returncode == 0:
                break
            time.sleep(0.25)
        if image:
            with contextlib.suppress(OSError):
                os.unlink(image)


def run_case(args, wd, dbdir, log, name, apply, lift, what):
    log(f"case {name}: {what}")
    casewd = os.path.join(wd, name + "-work")
    os.makedirs(casewd)
    db = Database("sqlite", dbdir)
    server = Server(args.bin, db, casewd)
    lifted_ok = True
    result = {"name": name}
    try:
        server.create_user("admin@faults.test", "upstairs-admin", "Upstairs", "Ada", "Admin")
        server.create_user("a@faults.test", "trader", "Halyard", "Ann", "A")
        server.create_user("b@faults.test", "trader", "Kestrel", "Ben", "B")
        server.start()
        v = Venue(server)
        before, _ = exercise(v, 1, log)
        bw, br = judge(before)
        if bw or br:
            log(f"  before the fault something failed already: {bw + br}")
        apply()
        lifted_ok = False
        seen, longest = exercise(v, args.rounds, log)
        alive = server.proc.poll() is None
        log(f"  under the fault: the server process is {'alive' if alive else 'GONE'}; longest answer "
            f"{longest * 1000:.0f} ms")
        result.update(seen=seen, longest=longest, alive=alive)
        # A restart while the condition holds: does it start, and say why not?
        server.stop()
        try:
            server.start(timeout=20)
            result["restart_under_fault"] = "started; /readyz " + str(call(server.port, "GET", "/readyz").status)
            restarted_seen, _ = exercise(v, 1, log)
            result["restart_seen"] = restarted_seen
            server.stop()
        except Exception as e:  # noqa: BLE001 — reported as it is
            lines = [x for x in server.last_start_lines() if x.startswith("Error") or "ERROR" in x]
            result["restart_under_fault"] = (f"refused to start ({type(e).__name__}): "
                                             f"{lines[0][:200] if lines else '(nothing logged)'}")
            server.kill9()
        lift()
        lifted_ok = True
        if server.proc.poll() is not None:
            server.start()
        result["back_after"] = lifted(v, log)
        log(f"  lifted: writes work again after {result['back_after'] * 1000:.0f} ms")
        server.stop()
        server.start()
        missing = [oid for token, oid in v.acked_orders
                   if call(server.port, "GET", f"/api/orders/{oid}", token=token).status != 200]
        result["acked"] = len(v.acked_orders)
        result["missing"] = missing
        server.stop()
        result["integrity"] = integrity(db.path)
        result["errors"] = server.log_lines(r"ERROR|panicked")
    finally:
        if not lifted_ok:
            lift()
        server.stop()
    return result


def report(results):
    failed = False
    for r in results:
        print()
        print(f"## SQLite, {r['name']}")
        print()
        print_seen("Answers while the condition held", r["seen"])
        if r.get("restart_seen"):
            print_seen("Answers after a restart with the condition still holding", r["restart_seen"])
        bad_writes, bad_reads = judge(r["seen"])
        print("| figure | value |")
        print("|---|---:|")
        print(f"| server process alive under the fault | {r['alive']} |")
        print(f"| longest answer under the fault | {r['longest'] * 1000:.0f} ms |")
        print(f"| write answers that are 5xx other than 503/507 (or no answer) | {len(bad_writes)} |")
        print(f"| reads that failed under the fault | {len(bad_reads)} |")
        print(f"| restart under the fault | {r['restart_under_fault']} |")
        print(f"| writes work again after lifting | {r['back_after'] * 1000:.0f} ms |")
        print(f"| acknowledged orders / missing after a restart | {r['acked']} / {len(r['missing'])} |")
        print(f"| PRAGMA integrity_check | {r['integrity']} |")
        print(f"| server log ERROR/panic lines | {len(r['errors'])} |")
        for line in r["errors"][:4]:
            print(f"    {line[:300]}")
        for x in bad_writes + bad_reads:
            print(f"  - {x}")
        failed |= bool(bad_writes or bad_reads or not r["alive"] or r["missing"] or r["integrity"] != "ok")
    print()
    print("RESULT:", "FAIL" if failed else "PASS")
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", choices=["read-only", "full", "both"], default="both")
    ap.add_argument("--fs", choices=["tmpfs", "ext4"], default="tmpfs", help="the full case's file system")
    ap.add_argument("--size-mb", type=int, default=32, help="the full case's file system size (32 MB)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of calls under each fault (3)")
    ap.add_argument("--bin", default=default_bin())
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("sqlite_disk.py needs root (chattr +i, mount)")
    if not os.path.exists(args.bin):
        sys.exit(f"{args.bin} is missing (set UPSTAIRS_BIN or --bin)")
    wd = workdir("faults-sqlite-disk-")
    t0 = time.monotonic()

    def log(msg):
        print(f"[{time.monotonic() - t0:6.1f}s] {msg}", flush=True)

    log(f"sqlite_disk: {args.bin}, work folder {wd}")
    failed = True
    results = []
    try:
        if args.case in ("read-only", "both"):
            results.append(case_read_only(args, wd, log))
        if args.case in ("full", "both"):
            results.append(case_full(args, wd, log))
        failed = report(results)
    except Exception:
        traceback.print_exc()
    finally:
        # Never leave an immutable file behind (rm -rf could not remove it).
        run(["chattr", "-R", "-i", wd], check=False)
        if args.keep:
            print(f"work folder kept: {wd}")
        else:
            rmtree(wd)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
