#!/usr/bin/env python3
"""The admin area at scale (issue 12): the Orders panel, billing and the scorecards (issue 29)
over a large venue.

Run through bench/run.sh, which installs wrk and builds the release binary:

    bench/run.sh admin sqlite
    bench/run.sh admin postgres

What one run does, on 127.0.0.1 only and bounded in time:

1. Starts `upstairs serve` on a fresh database (bench/ratios.py's `serving`) and creates
   through the API a broker, two trading firms with a trader each, one instrument and one
   parent order per firm.
2. Seeds the database directly, in set-based SQL that goes through the same triggers as
   the server's writes (the parents' counters move with the rows): N child orders in all
   (default 100,000), of which 2 × M (default 20,000 matches) are the two sides of M
   broker-filled match requests (each answered 3 s after it was made), and the rest
   cancelled orders of both firms, spread over a month of creation times; and the band's
   history, a move every 30 seconds over the matches' month.
3. wrk on the baseline `GET /api/users/me` (16 connections), then on Orders panel pages,
   each with one connection (what one operator sees) and with 16: the first page (size
   50), a deep page (page 1000), and a page filtered by company and state; then
   `GET /api/billing` with all 2 × M items, one connection; then the scorecards over the
   year, one connection: the venue's, one firm's for the venue's staff, and a trader's own
   (`GET /api/scorecard`), each over all M matches with their markouts. On PostgreSQL the
   seeded tables are vacuumed first, as autovacuum would have done by then.
4. Prints each figure (req/s, p50, p99) and its ratio to the authenticated read. It
   prints; it never asserts.
"""

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from datetime import date

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ratios import (ADMIN, bench_args, create_broker, create_firm, create_instrument,  # noqa: E402
                    create_trader, expect, ms, psql, serving, sign_in, wrk)


def setup(port, env, args):
    admin = sign_in(port, ADMIN)
    broker = create_broker(admin)
    firms = [create_firm(admin, name, broker["company_id"], f"{name} LLP") for name in ("Alpha", "Beta")]
    instrument = create_instrument(admin, "Bench Dec26-Mar27", "Dec26-Mar27")
    parents, traders = [], []
    for name, direction in (("Alpha", "BUY"), ("Beta", "SELL")):
        trader = create_trader(args.bin, env, port, admin, f"trader@{name.lower()}.bench", name)
        traders.append(trader)
        parents.append(expect(trader.call("POST", "/api/parent-orders", {
            "direction": direction, "instrument_id": instrument, "quantity": 1_000_000_000}), 201,
            "parent")["parent_order_id"])
    return admin, broker["company_id"], firms, parents, traders


COLUMNS = ("order_id, parent_order_id, company_id, created_by, instrument_id, direction, state, price, quantity, "
           "iceberg, residual, broker_id, created_at, updated_at, working_quantity, matched_quantity, rests")
MR_COLUMNS = ("match_request_id, instrument_id, direction, price, take_price, quantity, requesting_order_id, "
              "requesting_company_id, requesting_user_id, responding_order_id, responding_company_id, iceberg, "
              "responding_user_id, state, created_at, expires_at, updated_at, answered_at")


def seed_postgres(url, broker, parents, cancelled_each, matches):
    """Set-based inserts in one transaction; the order trigger moves the parents' counters."""
    a, b = parents
    sql = f"""
begin;
insert into child_order ({COLUMNS})
select gen_random_uuid(), p.parent_order_id, p.company_id, p.created_by, p.instrument_id, p.direction, 'CANCELLED',
       94 + (g % 200) / 100.0, 1 + g % 5, false, false, '{broker}', t, t, 0, 0, false
  from parent_order p, generate_series(1, {cancelled_each}) g,
       lateral (select timestamptz '2026-01-05 07:00:00+00' + g * interval '20 seconds' as t) x
 where p.parent_order_id in ('{a}', '{b}');
create temp table pairs on commit drop as
select g, gen_random_uuid() as req, gen_random_uuid() as resp, gen_random_uuid() as mr,
       timestamptz '2026-02-02 07:00:00+00' + g * interval '30 seconds' as t, 94 + (g % 200) / 100.0 as price
  from generate_series(1, {matches}) g;
insert into child_order ({COLUMNS})
select s.id, p.parent_order_id, p.company_id, p.created_by, p.instrument_id, p.direction, 'BROKER_FILLED', s.price,
       1, false, false, '{broker}', s.t, s.t, 0, 1, false
  from (select req as id, price, t, '{a}'::uuid as parent from pairs
        union all select resp, price, t, '{b}'::uuid from pairs) s
  join parent_order p on p.parent_order_id = s.parent;
insert into match_request ({MR_COLUMNS})
select x.mr, pa.instrument_id, 'BUY', x.price, x.price, 1, x.req, pa.company_id, pa.created_by, x.resp, pb.company_id,
       false, pb.created_by, 'BROKER_FILLED', x.t, x.t + interval '5 minutes', x.t, x.t + interval '3 seconds'
  from pairs x, parent_order pa, parent_order pb
 where pa.parent_order_id = '{a}' and pb.parent_order_id = '{b}';
insert into band_history (instrument_id, at, min_tick_price, max_tick_price)
select pa.instrument_id, timestamptz '2026-02-02 06:59:00+00' + g * interval '30 seconds', 93.9 + (g % 5) / 100.0, 96.1
  from parent_order pa, generate_series(0, {matches} + 120) g
 where pa.parent_order_id = '{a}';
commit;
analyze child_order;
analyze match_request;
analyze band_history;
"""
    psql(url, sql)


def seed_sqlite(path, broker, parents, cancelled_each, matches):
    """The same rows through Python's sqlite3 (ids as 16 random bytes, times in microseconds)."""
    from uuid import UUID
    a, b = (UUID(p).bytes for p in parents)
    broker = UUID(broker).bytes
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("pragma busy_timeout=30000")
    db.execute("begin immediate")
    parent = {row[0]: row[1:] for row in db.execute(
        "select parent_order_id, company_id, created_by, instrument_id, direction from parent_order "
        "where parent_order_id in (?, ?)", (a, b))}
    jan, feb = 1767596400_000000, 1770015600_000000  # 2026-01-05 and 2026-02-02, 07:00 UTC

    def price(g):
        return str((9400 + g % 200) / 100).rstrip("0").rstrip(".")

    rows = []
    for p in (a, b):
        company, user, instrument, direction = parent[p]
        for g in range(1, cancelled_each + 1):
            t = jan + g * 20_000_000
            rows.append((os.urandom(16), p, company, user, instrument, direction, "CANCELLED", price(g), 1 + g % 5,
                         0, 0, broker, t, t, 0, 0, 0))
    mrs = []
    ca, ua, instrument, _ = parent[a]
    cb, ub, _, _ = parent[b]
    for g in range(1, matches + 1):
        t = feb + g * 30_000_000
        req, resp = os.urandom(16), os.urandom(16)
        for oid, p in ((req, a), (resp, b)):
            company, user, instr, direction = parent[p]
            rows.append((oid, p, company, user, instr, direction, "BROKER_FILLED", price(g), 1, 0, 0, broker, t, t,
                         0, 1, 0))
        mrs.append((os.urandom(16), instrument, "BUY", price(g), price(g), 1, req, ca, ua, resp, cb, 0, ub,
                    "BROKER_FILLED", t, t + 300_000_000, t, t + 3_000_000))
    bands = [(instrument, feb - 60_000_000 + g * 30_000_000, str((9390 + g % 5) / 100), "96.1")
             for g in range(0, matches + 121)]
    db.executemany(f"insert into child_order ({COLUMNS}) values ({', '.join('?' * 17)})", rows)
    db.executemany(f"insert into match_request ({MR_COLUMNS}) values ({', '.join('?' * 18)})", mrs)
    db.executemany("insert into band_history (instrument_id, at, min_tick_price, max_tick_price) values (?, ?, ?, ?)",
                   bands)
    db.execute("commit")
    db.execute("analyze")
    db.close()


def main():
    ap = bench_args(__doc__)
    ap.add_argument("--duration", type=float, default=10, help="seconds per measured call (default 10)")
    ap.add_argument("--connections", type=int, default=16, help="wrk connections (16)")
    ap.add_argument("--threads", type=int, default=2, help="wrk threads (2)")
    ap.add_argument("--orders", type=int, default=100_000, help="child orders in all (100000)")
    ap.add_argument("--matches", type=int, default=20_000, help="broker-filled match requests (20000)")
    ap.add_argument("--keep", action="store_true", help="keep the work folder (wrk outputs, database file) and the PostgreSQL schema")
    args = ap.parse_args()
    if not os.path.exists(args.bin):
        sys.exit(f"{args.bin} is missing: cargo build --release -p upstairs (or set UPSTAIRS_BIN)")
    if not shutil.which("wrk"):
        sys.exit("wrk is missing: use bench/run.sh, which installs it")
    cancelled_each = (args.orders - 2 * args.matches) // 2
    if cancelled_each < 0:
        sys.exit("--orders must be at least twice --matches")
    args.workdir = tempfile.mkdtemp(prefix="upstairs-bench-admin-")
    duration = int(args.duration)
    version = subprocess.run([args.bin, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{version}, {args.backend}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, {date.today()}; "
          f"{args.orders:,} child orders, {args.matches:,} matches; wrk {args.threads} × {args.connections}, "
          f"{duration} s per call", flush=True)
    results = []
    try:
        with serving(args.bin, args.backend, args.pg_url, args.workdir, keep=args.keep) as (port, env):
            admin, broker, firms, parents, traders = setup(port, env, args)
            print("seeding…", flush=True)
            if args.backend == "sqlite":
                seed_sqlite(os.path.join(args.workdir, "upstairs.db"), broker, parents, cancelled_each, args.matches)
            else:
                url = env["UPSTAIRS_DATABASE_URL"]
                url = url.replace("options%5Bsearch_path%5D=", "options=-csearch_path%3D")
                seed_postgres(url, broker, parents, cancelled_each, args.matches)
                # As autovacuum would have by then: the visibility map lets counts read the index only.
                psql(url, "vacuum child_order")
                psql(url, "vacuum match_request")
            page = expect(admin.call("GET", "/api/admin/orders?size=1"), 200, "orders")
            bill = expect(admin.call("GET", "/api/billing"), 200, "billing")
            print(f"  the panel counts {page['total_items']:,} orders; billing lists {len(bill['items']):,} items",
                  flush=True)
            token = f"token={admin.token}"
            alpha = firms[0]["company_id"]
            pages = [("page 0, size 50", "page=0&size=50"), ("page 1000, size 50", "page=1000&size=50"),
                     ("Alpha, BROKER_FILLED, size 50", f"company_id={alpha}&state=BROKER_FILLED&size=50")]
            # Each page as one operator sees it (one connection), then under 16 at once.
            calls = [("GET /api/users/me", "/api/users/me", args.connections)]
            calls += [(f"GET /api/admin/orders ({name})", f"/api/admin/orders?{query}", c)
                      for name, query in pages for c in (1, args.connections)]
            calls.append((f"GET /api/billing ({len(bill['items']):,} items)", "/api/billing", 1))
            # The scorecards over the year: every match, with its markouts (issue 29).
            year = "from=2026-01-01T00:00:00Z&to=2026-12-31T00:00:00Z"
            card = expect(admin.call("GET", f"/api/admin/scorecard?{year}"), 200, "scorecard")
            print(f"  the venue's scorecard counts {card['trades']:,} trades, markouts over "
                  f"{card['markouts'][-1]['trades']:,}", flush=True)
            calls.append(("GET /api/admin/scorecard (the venue, a year)", f"/api/admin/scorecard?{year}", 1))
            calls.append(("GET /api/admin/scorecard (Alpha, a year)", f"/api/admin/scorecard?{year}&company_id={alpha}", 1))
            own = f"token={traders[0].token}"
            calls.append(("GET /api/scorecard (Alpha's trader, a year)", f"/api/scorecard?{year}", 1, own))
            wrk(args, port, "/healthz", [], 2, "warmup.txt")
            for name, path, connections, *who in calls:
                saved = args.connections
                args.connections, args.threads = connections, min(args.threads, connections)
                r = wrk(args, port, path, [who[0] if who else token], duration, f"{len(results)}.txt")
                args.connections, args.threads = saved, 2
                r["call"] = name
                results.append(r)
                print(f"  {name:<52} {r['rate']:8.1f} req/s  p50 {ms(r['p50_us']):>10}  p99 {ms(r['p99_us']):>10}  "
                      f"errors {r['errors_total']}", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(args.workdir, ignore_errors=True)
    base = results[0]["rate"]
    print()
    print(f"Admin area on {args.backend}, {date.today()}: {version}, {os.cpu_count()} cores, "
          f"{args.orders:,} child orders, {args.matches:,} matches, wrk -d{duration}s --latency, 127.0.0.1")
    print()
    print("| call | connections | req/s | p50 | p99 | errors | ÷ `GET users/me` |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for (name, _, connections, *_), r in zip(calls, results):
        print(f"| `{name}` | {connections} | {r['rate']:.1f} | {ms(r['p50_us'])} | {ms(r['p99_us'])} | "
              f"{r['errors_total']} | {r['rate'] / base:.3f} |")
    print("\ntargets (issue 12): an Orders panel page p99 < 100 ms; all billing items in < 1 s; "
          "(issue 29) a scorecard over 20,000 matches in < 1 s")


if __name__ == "__main__":
    main()
