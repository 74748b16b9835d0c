#!/usr/bin/env python3
"""Load benchmark for the order path: POST /api/orders and GET /api/instruments/{id}/book.

Starts the real `upstairs` binary on a fresh database (a SQLite file, or with
--postgres a new schema in UPSTAIRS_TEST_POSTGRES_URL), sets up a broker, a trading
firm, a trader, an instrument and a parent order through the API, then sends each
request N times from C keep-alive connections and prints requests per second and
latency percentiles. Loopback only; bounded in count. Never part of `make test`.

    python3 bench/load.py [--postgres] [--requests 2000] [--concurrency 8] [--bin target/release/upstairs]
"""

import argparse
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

PASSWORD = "Bench-Pass-2026"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    def __init__(self, port, token=None):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.token = token

    def call(self, method, path, body=None):
        headers = {"content-type": "application/json"}
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        self.conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        res = self.conn.getresponse()
        data = res.read()
        if not data:
            return res.status, None
        if res.getheader("content-type", "").split(";")[0].endswith("json"):
            return res.status, json.loads(data)
        return res.status, data.decode("utf-8", "replace")


def expect(status, body, want):
    if status != want:
        sys.exit(f"setup failed: expected {want}, got {status}: {body}")
    return body


def percentile(sorted_values, p):
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, int(round(p / 100 * (len(sorted_values) - 1))))
    return sorted_values[k]


def run(name, port, token, make_request, total, concurrency):
    latencies, errors = [], []
    lock = threading.Lock()
    per_worker = [total // concurrency + (1 if i < total % concurrency else 0) for i in range(concurrency)]

    def worker(n, seed):
        rng = random.Random(seed)
        c = Client(port, token)
        mine, bad = [], 0
        for _ in range(n):
            method, path, body, want = make_request(rng)
            t0 = time.perf_counter()
            status, _ = c.call(method, path, body)
            mine.append(time.perf_counter() - t0)
            if status != want:
                bad += 1
        with lock:
            latencies.extend(mine)
            errors.append(bad)

    threads = [threading.Thread(target=worker, args=(n, i)) for i, n in enumerate(per_worker)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    latencies.sort()
    ms = lambda s: f"{s * 1000:7.2f}"
    print(f"{name:<32} {total:>6} req  c={concurrency:<3} {total / elapsed:8.0f} req/s   "
          f"p50 {ms(percentile(latencies, 50))} ms  p90 {ms(percentile(latencies, 90))} ms  "
          f"p99 {ms(percentile(latencies, 99))} ms  max {ms(latencies[-1])} ms  errors {sum(errors)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/upstairs")
    ap.add_argument("--postgres", action="store_true", help="use a fresh schema in UPSTAIRS_TEST_POSTGRES_URL")
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=8)
    args = ap.parse_args()
    if not os.path.exists(args.bin):
        sys.exit(f"{args.bin} is missing: cargo build --release -p upstairs")

    tmp = tempfile.mkdtemp(prefix="upstairs-bench-")
    if args.postgres:
        base = os.environ.get("UPSTAIRS_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test")
        schema = f"bench_{int(time.time())}_{os.getpid()}"
        subprocess.run(["psql", base, "-qc", f"create schema {schema}"], check=True)
        db = f"{base}{'&' if '?' in base else '?'}options%5Bsearch_path%5D={schema}"
    else:
        db = f"sqlite://{tmp}/bench.db"
    env = dict(os.environ, UPSTAIRS_DATABASE_URL=db, UPSTAIRS_MAIL_DIR=f"{tmp}/mail", UPSTAIRS_ALWAYS_OPEN="true",
               RUST_LOG="warn")
    run_cli = lambda *a: subprocess.run([args.bin, *a], env=env, check=True, stdout=subprocess.DEVNULL)
    run_cli("user", "create", "--email", "admin@bench.test", "--password", PASSWORD, "--role", "upstairs-admin")

    port = free_port()
    server = subprocess.Popen([args.bin, "serve", "--bind", f"127.0.0.1:{port}"], env=env, stdout=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while True:
            try:
                if Client(port).call("GET", "/readyz")[0] == 200:
                    break
            except OSError:
                pass
            if time.time() > deadline:
                sys.exit("server not ready within 30 s")
            time.sleep(0.05)

        admin = Client(port)
        admin.token = expect(*admin.call("POST", "/api/auth/login", {"email": "admin@bench.test", "password": PASSWORD}), 200)["token"]
        broker = expect(*admin.call("POST", "/api/admin/companies", {"name": "Broker", "full_name": "Bench Broker", "roles": ["broker"]}), 201)
        ref = {"company_id": broker["company_id"]}
        expect(*admin.call("POST", "/api/admin/companies", {"name": "Firm", "full_name": "Bench Firm", "brokers": [ref], "default_broker": ref}), 201)
        inst = expect(*admin.call("POST", "/api/admin/instruments", {
            "name": "Bench Dec26-Mar27", "term": "Dec26-Mar27", "min_quantity": 1, "tick_size": 0.01, "exchange_id": "B",
            "currency": "EUR", "min_tick_price": 94.0, "max_tick_price": 96.0}), 201)
        run_cli("user", "create", "--email", "trader@bench.test", "--password", PASSWORD, "--role", "trader", "--company", "Firm")
        trader = Client(port)
        trader.token = expect(*trader.call("POST", "/api/auth/login",
                                           {"email": "trader@bench.test", "password": PASSWORD, "rememberMe": True}), 200)["token"]
        parent = expect(*trader.call("POST", "/api/parent-orders", {"direction": "BUY", "instrument_id": inst["instrument_id"], "quantity": 100000}), 201)

        backend = "PostgreSQL" if args.postgres else "SQLite"
        print(f"upstairs {backend}, {os.cpu_count()} cores, release build, loopback")

        def post_order(rng):
            price = f"{94 + rng.randrange(0, 200) / 100:.2f}"
            body = {"parent_order_id": parent["parent_order_id"], "quantity": 1, "limit_price": json.loads(price),
                    "broker_id": broker["company_id"], "residual": True, "iceberg": False}
            return "POST", "/api/orders", body, 201

        book_path = f"/api/instruments/{inst['instrument_id']}/book"
        run("POST /api/orders", port, trader.token, post_order, args.requests, args.concurrency)
        run("GET /api/instruments/{id}/book", port, trader.token, lambda rng: ("GET", book_path, None, 200),
            args.requests, args.concurrency)
    finally:
        server.terminate()
        server.wait(timeout=10)
        if args.postgres:
            subprocess.run(["psql", base, "-qc", f"drop schema {schema} cascade"], check=False)


if __name__ == "__main__":
    main()
