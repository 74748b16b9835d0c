#!/usr/bin/env python3
"""The CPU one `POST /api/orders` costs the node and the database (issue 27, ADR 0053).

Run through bench/run.sh (it builds the release binary):

    bench/run.sh order-cpu postgres                          # the binary just built
    bench/run.sh order-cpu postgres --bin A --bin B          # two builds in alternation

For each round and each binary, on 127.0.0.1: `upstairs serve` on a fresh database, the
venue of bench/ratios.py (16 BUY parents on one instrument, a one-lot order at a random
tick of the band each), wrk with 2 threads and 16 connections (2 s to warm up, then
`--duration` seconds), and around the measured run:

- the CPU time (user + system, /proc/PID/stat) of the node's process and of every process
  named `postgres`, each divided by the orders written;
- the machine's busy time (/proc/stat) per order, and in cores over the run;
- on PostgreSQL, the database's committed transactions per order (pg_stat_database).

Requests per second move with the machine's other load by ±20% between runs; the CPU per
order much less, which is why changes to the order path are compared by it. It prints the
median of the rounds; it never asserts.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ratios import (DECIMALS, HZ, TICK_HI, TICK_LO, cpu_seconds, fresh_database, setup_venue,  # noqa: E402
                    start_node, stop_node, wrk)

def machine_busy():
    with open("/proc/stat") as f:
        ticks = list(map(int, f.readline().split()[1:9]))
    return (sum(ticks) - ticks[3] - ticks[4]) / HZ


def commits(pg_url):
    out = subprocess.run(["psql", pg_url, "-Atc", "select xact_commit from pg_stat_database "
                          "where datname = current_database()"], capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


def one_round(binary, a):
    workdir = tempfile.mkdtemp(prefix="upstairs-order-cpu-")
    args = argparse.Namespace(bin=binary, connections=16, threads=2, workdir=workdir, pg_url=a.pg_url)
    with fresh_database(binary, a.backend, a.pg_url, workdir) as (env, _):
        server, port = start_node(binary, env, os.path.join(workdir, "server.log"))
        try:
            trader, broker, _, parents = setup_venue(port, env, args)
            post = [f"token={trader.token}", f"post={','.join(parents[0])}", f"broker={broker}",
                    f"ticks={TICK_LO}:{TICK_HI}:{DECIMALS}"]
            wrk(args, port, "/api/orders", post, 2, "warm.txt")
            node = lambda pid, _: pid == server.pid  # noqa: E731
            db = lambda _, name: name == "postgres"  # noqa: E731
            postgres = a.backend == "postgres"
            before = (cpu_seconds(node), cpu_seconds(db), machine_busy(), time.time(),
                      commits(a.pg_url) if postgres else 0)
            r = wrk(args, port, "/api/orders", post, a.duration, "post.txt")
            after = (cpu_seconds(node), cpu_seconds(db), machine_busy(), time.time(),
                     commits(a.pg_url) if postgres else 0)
        finally:
            stop_node(server)
    n = r["requests"] - r["errors_total"]
    if n <= 0:
        sys.exit(f"no order was written; see {workdir}")
    d = [y - x for x, y in zip(before, after)]
    return {"rate": r["rate"], "node": d[0] / n * 1e3, "db": d[1] / n * 1e3, "machine": d[2] / n * 1e3,
            "cores": d[2] / d[3], "commits": d[4] / n, "errors": r["errors_total"], "p99": r["p99_us"] / 1e3}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("backend", choices=["sqlite", "postgres"])
    ap.add_argument("--bin", action="append", required=True, help="a build to measure (repeat for several)")
    ap.add_argument("--pg-url", default=os.environ.get("UPSTAIRS_TEST_POSTGRES_URL",
                                                        "postgres://postgres@127.0.0.1:5432/test"))
    ap.add_argument("--duration", type=int, default=8, help="whole seconds of the measured run (8)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, each binary once per round (3)")
    a = ap.parse_args()
    rows = {b: [] for b in a.bin}
    print(f"CPU per POST /api/orders on {a.backend}, {os.cpu_count()} cores, wrk -t2 -c16, "
          f"{a.duration:g} s per run, {a.rounds} rounds", flush=True)
    for n in range(a.rounds):
        for b in a.bin:
            r = one_round(b, a)
            rows[b].append(r)
            print(f"  round {n + 1} {b}: {r['rate']:.0f} req/s, p99 {r['p99']:.1f} ms, node {r['node']:.3f} ms, database {r['db']:.3f} ms, "
                  f"machine {r['machine']:.3f} ms per order, {r['cores']:.2f} cores busy, "
                  f"{r['commits']:.2f} commits per order, {r['errors']} errors", flush=True)
    print("\n| binary | req/s | p99 | node CPU per order | database CPU per order | machine per order | cores busy "
          "| commits per order |\n|---|---:|---:|---:|---:|---:|---:|---:|")
    for b, rs in rows.items():
        med = lambda k: sorted(r[k] for r in rs)[len(rs) // 2]  # noqa: E731
        print(f"| {b} | {med('rate'):.0f} | {med('p99'):.1f} ms | {med('node'):.3f} ms | {med('db'):.3f} ms | {med('machine'):.3f} ms "
              f"| {med('cores'):.2f} | {med('commits'):.2f} |")


if __name__ == "__main__":
    main()
