#!/usr/bin/env python3
"""Sign-in under a flood (issue 13's acceptance): 200 parallel sign-ins, the server's
memory, and whether another signed-in user is still answered meanwhile.

Run through bench/run.sh (it builds the release binary):

    bench/run.sh logins sqlite
    bench/run.sh logins postgres

What one run does, on 127.0.0.1 only and bounded in time:

1. Starts `upstairs serve` on a fresh database with `UPSTAIRS_TRUSTED_PROXIES=127.0.0.1`,
   creates a trader (the flood's target) and a second user (the bystander), who signs in.
2. The bystander calls `GET /api/users/me` in a loop for the whole run and records each
   answer's status and time.
3. Round 1, one address: `--parallel` threads each send one correct sign-in at once.
   Round 2, many addresses: the same, each thread with its own `X-Forwarded-For` (the
   address limit no longer decides; the hashing slots do).
4. Prints, per round, the answers by status, the server's resident memory before and its
   peak (VmHWM from /proc), and the bystander's answers (by status, p50, p99) during the
   flood beside its p50 before it. It prints; it never asserts.
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ratios import PASSWORD, Client, bench_args, expect, ms, pct, serving  # noqa: E402


def status_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def sign_in(port, email, address):
    c = Client(port)
    headers = {"content-type": "application/json"}
    if address:
        headers["x-forwarded-for"] = address
    body = json.dumps({"email": email, "password": PASSWORD})
    try:
        c.conn.request("POST", "/api/auth/login", body=body, headers=headers)
        res = c.conn.getresponse()
        res.read()
        return res.status
    except OSError as e:
        return type(e).__name__


class Bystander(threading.Thread):
    def __init__(self, port, token):
        super().__init__(daemon=True)
        self.client = Client(port, token)
        self.samples = []  # (start, seconds, status)
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            t = time.perf_counter()
            try:
                status = self.client.call("GET", "/api/users/me")[0]
            except OSError as e:
                status = type(e).__name__
                self.client = Client(self.client.conn.port, self.client.token)
            self.samples.append((t, time.perf_counter() - t, status))

    def between(self, start, end):
        return [s for s in self.samples if start <= s[0] < end]


def flood(port, email, n, many_addresses):
    results = [None] * n
    barrier = threading.Barrier(n)

    def one(i):
        barrier.wait()
        address = f"198.51.{i // 250}.{i % 250 + 1}" if many_addresses else None
        results[i] = sign_in(port, email, address)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return Counter(results)


def main():
    ap = bench_args(__doc__, whole=True)
    ap.add_argument("--parallel", type=int, default=200)
    args = ap.parse_args()
    if not os.path.exists(args.bin):
        sys.exit(f"{args.bin} is missing: cargo build --release -p upstairs (or set UPSTAIRS_BIN)")
    os.environ["UPSTAIRS_TRUSTED_PROXIES"] = "127.0.0.1"
    with tempfile.TemporaryDirectory(prefix="upstairs-logins-") as workdir:
        with serving(args.bin, args.backend, args.pg_url, workdir) as (port, env):
            pid = int(env["UPSTAIRS_BENCH_SERVER_PID"])
            for email in ["target@bench.test", "bystander@bench.test"]:
                subprocess.run([args.bin, "user", "create", "--email", email, "--password", PASSWORD, "--role",
                                "trader", "--company", "Bench Traders"], env=env, check=True,
                               stdout=subprocess.DEVNULL)
            token = expect(Client(port).call("POST", "/api/auth/login",
                                             {"email": "bystander@bench.test", "password": PASSWORD}),
                           200, "bystander login")["token"]
            bystander = Bystander(port, token)
            bystander.start()
            time.sleep(1.0)  # the bystander's baseline: a second of its own calls, not a wait for the server
            print(f"# {args.backend}: {args.parallel} parallel sign-ins, server pid {pid}")
            for name, many in [("one address", False), ("many addresses", True)]:
                before_rss = status_kb(pid, "VmRSS")
                base = [s[1] for s in bystander.samples[-200:] if s[2] == 200]
                start = time.perf_counter()
                answers = flood(port, "target@bench.test", args.parallel, many)
                end = time.perf_counter()
                during = bystander.between(start, end)
                lat = sorted(s[1] for s in during if s[2] == 200)
                print(f"\n## round: {name} ({end - start:.2f} s)")
                print(f"sign-in answers: {dict(sorted((str(k), v) for k, v in answers.items()))}")
                print(f"server memory: before {before_rss / 1024:.0f} MiB, peak so far (VmHWM) "
                      f"{status_kb(pid, 'VmHWM') / 1024:.0f} MiB")
                print(f"bystander during the flood: {dict(Counter(str(s[2]) for s in during))}, "
                      f"p50 {ms(pct(lat, 50) * 1e6)}, p99 {ms(pct(lat, 99) * 1e6)} "
                      f"(before: p50 {ms(pct(sorted(base), 50) * 1e6)})")
            bystander.stop.set()
            bystander.join(timeout=5)


if __name__ == "__main__":
    main()
