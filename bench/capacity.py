#!/usr/bin/env python3
"""Mixed load on one node, then on two nodes of one PostgreSQL (issue 15's capacity figures).

Run through bench/run.sh (it builds the release binaries):

    bench/run.sh capacity postgres                      # 10 minutes at twice one node's rate
    bench/run.sh capacity postgres --duration 60        # a shorter look

What one run does, on 127.0.0.1 only:

1. Starts `upstairs serve` (default settings, so the per-user write throttle is on) on a
   fresh schema and builds a venue through the API: a broker, a selling and a buying firm,
   `--pairs` instruments, each with one seller resting one-lot SELL orders and one buyer
   taking them (so the seller is the responder of every take on its instrument). The
   per-user write limit (20 a second per kind) caps what one node accepts of the mix at
   about 67 x `--pairs` ops/s for the default mix (1,067 at 16 pairs): the bench warns of
   rates above it; more pairs measure past it.
2. **One node's rate.** `upstairs-load` (bench/load, a Rust open-loop client: each
   operation on its own schedule, latency from that schedule) sends the mix (orders 3,
   book reads 4, takes 2, accepts 1; `--mix` sets other weights) at each of `--rates`
   for `--step` seconds; the highest rate with p99 under 50 ms and no error (no 5xx, no
   429, no transport failure) is R1.
3. **Twice that, over two nodes.** A second node starts on the same database; the same
   mix at 2 x R1 for `--duration` seconds, spread round-robin over both nodes: errors,
   p50/p99, and p99 beside R1's on one node.
4. **Four times, over two nodes**, for `--over` seconds: how it is refused (429s), and
   that nothing answers 5xx.
5. Every order acknowledged (201) in any phase is looked up in the database: none missing.

Beside each phase's latencies it prints the CPU each operation cost the nodes, PostgreSQL
(every `postgres` process of this machine; the server must be local) and the load client,
read from `/proc` and the client's resource usage over the phase: a figure that moves far
less with the machine's noise than the rate at which p99 crosses 50 ms.

It prints; it never asserts.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ratios import (ADMIN, cpu_seconds, create_broker, create_firm, create_instrument, create_trader, expect,  # noqa: E402
                    fresh_database, sign_in, start_node, stop_node)

MIX = [3, 4, 2, 1]
# Each user's writes of one kind a second (orders, takes, answers each their own bucket) at
# the server's default settings, which this bench keeps: DEFAULT_WRITES_PER_SECOND.
WRITES_PER_USER = 20


def throttle_ceiling(pairs, mix):
    """The rate above which one node's per-user write limit refuses the mix's own writes:
    each seller's orders and answers and each buyer's takes stay under WRITES_PER_USER a
    second only up to here, so a 429 above it is the bench's own shape, not capacity."""
    total = sum(mix)
    shares = [w / total / pairs for w in (mix[0], mix[2], mix[3]) if w > 0]
    return int(WRITES_PER_USER / max(shares)) if shares else None
PRICE = "95.00"


class Nodes:
    """The nodes started so far; stopped at the end."""

    def __init__(self, binary, env, workdir):
        self.binary, self.env, self.workdir, self.procs, self.ports = binary, env, workdir, [], []

    def start(self):
        log = os.path.join(self.workdir, f"node{len(self.procs) + 1}.log")
        proc, port = start_node(self.binary, self.env, log)
        self.procs.append(proc)
        self.ports.append(port)
        return port

    def stop(self):
        for p in self.procs:
            stop_node(p)


def build_world(binary, env, port, pairs, mix):
    admin = sign_in(port, ADMIN)
    broker = create_broker(admin)["company_id"]
    for firm in ("Sellers", "Buyers"):
        create_firm(admin, firm, broker)
    world = []
    for n in range(pairs):
        instrument = create_instrument(admin, f"Capacity {n} Dec26-Mar27", "Dec26-Mar27")
        pair = {"instrument_id": instrument}
        for side, firm, direction in (("seller", "Sellers", "SELL"), ("buyer", "Buyers", "BUY")):
            # Each pair signs in from an address of its own: the sign-in limit per address
            # would stop a venue of more than about 48 pairs.
            address = f"10.{n // 256}.{n % 256}.{1 if side == 'seller' else 2}"
            trader = create_trader(binary, env, port, admin, f"{side}{n}@bench.test", firm, address)
            parent = expect(trader.call("POST", "/api/parent-orders",
                                        {"direction": direction, "instrument_id": instrument,
                                         "quantity": 1_000_000_000}), 201, "parent")["parent_order_id"]
            pair[side] = trader.token
            pair[f"{side}_parent"] = parent
        world.append(pair)
    return {"broker_id": broker, "price": PRICE, "lot": 1, "mix": mix, "pairs": world}


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def load(args, world, nodes, rate, seconds, workdir, phase):
    ports = nodes.ports
    path = os.path.join(workdir, f"{phase}.json")
    with open(path, "w") as f:
        json.dump(dict(world, nodes=[f"http://127.0.0.1:{p}" for p in ports]), f)
    ids = os.path.join(workdir, f"{phase}.ids")
    pids = {p.pid for p in nodes.procs}
    measured = (lambda pid, _: pid in pids, lambda _, name: name == "postgres")
    before = (*(cpu_seconds(pick) for pick in measured), children_cpu())
    out = subprocess.run([args.load_bin, path, str(rate), str(seconds), ids], check=True, capture_output=True,
                         text=True)
    after = (*(cpu_seconds(pick) for pick in measured), children_cpu())
    result = json.loads(out.stdout)
    result["ids"] = ids
    result["rate"] = rate
    result["nodes"] = len(ports)
    # CPU milliseconds per operation sent: the nodes, PostgreSQL, the load client.
    result["cpu_ms"] = [1000 * (a - b) / max(result["sent"], 1) for a, b in zip(after, before)]
    return result


def count(result, want):
    return sum(n for s, n in result["statuses"].items() if want(int(s)))


def errors(result):
    return count(result, lambda s: s >= 500 or s == 429) + result["failed"]


def missing_orders(pg_url, schema, results, workdir):
    ids = []
    for r in results:
        with open(r["ids"]) as f:
            ids += [line.strip() for line in f if line.strip()]
    path = os.path.join(workdir, "acknowledged.csv")
    with open(path, "w") as f:
        f.write("\n".join(ids) + "\n")
    sql = (f"set search_path = {schema}; create temp table ack (order_id uuid); \\copy ack from '{path}'\n"
           "select count(*) from ack a where not exists (select 1 from child_order c where c.order_id = a.order_id);")
    out = subprocess.run(["psql", pg_url, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1"], input=sql, text=True,
                         capture_output=True, check=True)
    return len(ids), int(out.stdout.strip().splitlines()[-1])


def row(name, r):
    k = lambda s: count(r, lambda x: x == s)
    node, pg, client = r["cpu_ms"]
    return (f"| {name} | {r['nodes']} | {r['rate']} | {r['sent']:,} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | "
            f"{r['max_ms']:.0f} | {count(r, lambda s: 200 <= s < 300):,} | {k(409):,} | {k(429):,} | "
            f"{count(r, lambda s: s >= 500):,} | {r['failed']} | {node:.3f} | {pg:.3f} | {client:.3f} |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("backend", choices=["postgres"])
    p.add_argument("--bin", required=True)
    p.add_argument("--load-bin", required=True)
    p.add_argument("--pairs", type=int, default=16)
    p.add_argument("--rates", default="100,200,300,400,500,600,800,1000,1200")
    p.add_argument("--step", type=float, default=15)
    p.add_argument("--duration", type=float, default=600)
    p.add_argument("--over", type=float, default=60)
    p.add_argument("--keep", action="store_true")
    p.add_argument("--mix", default=":".join(map(str, MIX)),
                   help="weights of orders:books:takes:accepts (3:4:2:1); e.g. 1:0:0:0 for orders alone")
    args = p.parse_args()
    mix = [int(w) for w in args.mix.split(":")]
    if len(mix) != 4 or min(mix) < 0 or sum(mix) == 0:
        p.error("--mix takes four weights, orders:books:takes:accepts, not all zero")
    pg_url = os.environ.get("UPSTAIRS_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test")
    workdir = tempfile.mkdtemp(prefix="upstairs-capacity-")
    version = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    results = []
    rates = [int(x) for x in args.rates.split(",")]
    ceiling = throttle_ceiling(args.pairs, mix)
    above = [r for r in rates if ceiling is not None and r > ceiling]
    if above:
        print(f"rates {above} are over {ceiling} ops/s, where {args.pairs} pairs' per-user write limit "
              f"({WRITES_PER_USER} a second) answers 429 to the mix's own writes: give more --pairs to see R1 there",
              file=sys.stderr)
    with fresh_database(args.bin, "postgres", pg_url, workdir, throttle=True, keep=args.keep) as (env, schema):
        env = dict(env, UPSTAIRS_TRUSTED_PROXIES="127.0.0.1")
        nodes = Nodes(args.bin, env, workdir)
        try:
            first = nodes.start()
            world = build_world(args.bin, env, first, args.pairs, mix)
            r1, at_r1 = None, None
            for rate in rates:
                r = load(args, world, nodes, rate, args.step, workdir, f"one-{rate}")
                results.append(r)
                kinds = ", ".join(f"{k} {v['p99_ms']:.1f}" for k, v in sorted(r.get("kinds", {}).items()))
                print(f"one node at {rate}/s: p99 {r['p99_ms']:.1f} ms ({kinds}), errors {errors(r)}, CPU ms/op node "
                      f"{r['cpu_ms'][0]:.3f} PostgreSQL {r['cpu_ms'][1]:.3f} client {r['cpu_ms'][2]:.3f}", file=sys.stderr)
                if r["p99_ms"] >= 50 or errors(r) > 0:
                    break
                r1, at_r1 = rate, r
            if r1 is None:
                sys.exit("not even the lowest rate kept p99 under 50 ms")
            nodes.start()
            twice = load(args, world, nodes, 2 * r1, args.duration, workdir, "two-2x")
            results.append(twice)
            over = load(args, world, nodes, 4 * r1, args.over, workdir, "two-4x")
            results.append(over)
        finally:
            nodes.stop()
        acknowledged, missing = missing_orders(pg_url, schema, results, workdir)

    build = os.path.basename(os.path.dirname(os.path.abspath(args.bin)))
    print(f"\nMixed load, commit {version}, {build} build, PostgreSQL, {args.pairs} instrument pairs, "
          f"mix orders:books:takes:accepts = {':'.join(map(str, mix))}, open loop\n")
    print("| phase | nodes | ops/s | sent | p50 ms | p99 ms | max ms | 2xx | 409 | 429 | 5xx | no answer "
          "| node CPU ms/op | PostgreSQL CPU ms/op | load client CPU ms/op |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results[:-2]:
        print(row("find R1", r))
    print(row(f"2 x R1, {args.duration:.0f} s", twice))
    print(row(f"4 x R1, {args.over:.0f} s", over))
    print(f"\nR1 (one node, p99 < 50 ms, no error) = {r1} ops/s; at 2 x R1 over two nodes p99 = "
          f"{twice['p99_ms']:.1f} ms ({twice['p99_ms'] / at_r1['p99_ms']:.2f} x one node's p99 at R1), "
          f"errors {errors(twice)}; at 4 x R1: {count(over, lambda s: s == 429):,} answers 429, "
          f"{count(over, lambda s: s >= 500)} 5xx, {over['failed']} unanswered.")
    print(f"Acknowledged orders: {acknowledged:,}, missing from the database: {missing}.")
    if ceiling is not None:
        print(f"One node's per-user write limit refuses this mix above {ceiling:,} ops/s at {args.pairs} pairs.")
    if args.keep:
        print(f"(kept {workdir})")


if __name__ == "__main__":
    main()
