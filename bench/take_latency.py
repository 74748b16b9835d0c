#!/usr/bin/env python3
"""From a take's HTTP response to the responder's STOMP frame, beside a loopback
WebSocket round trip measured in the same run (issue 10's acceptance).

Run through bench/run.sh (it builds the release binary and picks the Python that has
websocket-client):

    bench/run.sh take-latency sqlite
    bench/run.sh take-latency postgres

What one run does, on 127.0.0.1 only and bounded in time:

1. Starts `upstairs serve --always-open` on a fresh database and creates through the API a
   broker, two trading firms (taker and responder), a trader in each and one instrument
   (minimum block 1). The responder rests one large SELL order; the taker opens a BUY parent.
2. The responder's connection: STOMP 1.2 over WebSocket at /ws (the bearer token in
   CONNECT), subscribed to
   `/user/topic/notifications`; a reader thread stamps every MESSAGE frame on arrival.
3. The ceiling: WebSocket ping → pong round trips on a second connection to the same
   server (the server answers pings itself), `--pings` of them.
4. The load: `--rate` takes per second for `--duration` seconds, one lot each at the
   resting price (`POST /api/order-match-requests`, keep-alive). For each take: the time
   from its HTTP response being read to the responder's `MATCH_REQUEST_RECEIVED` frame
   for that request. A frame that arrived before the response was read counts as 0: the
   push was not later than the answer.
5. Prints p50 and p99 of both, and their ratio. It prints; it never asserts.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import date

import websocket  # websocket-client, the transport stomp.py uses in the integration tests

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ratios import (ADMIN, bench_args, create_broker, create_firm, create_instrument,  # noqa: E402
                    create_trader, expect, ms, pct, serving, sign_in)


def stomp_frame(command, headers, body=""):
    lines = [command] + [f"{k}:{v}" for k, v in headers.items()]
    return "\n".join(lines) + "\n\n" + body + "\x00"


def parse_frame(raw):
    head, _, body = raw.partition("\n\n")
    lines = head.split("\n")
    headers = dict(line.split(":", 1) for line in lines[1:] if ":" in line)
    return lines[0], headers, body.rstrip("\x00")


def stomp_connect(port, token):
    ws = websocket.create_connection(f"ws://127.0.0.1:{port}/ws", timeout=30)
    ws.send(stomp_frame("CONNECT", {"accept-version": "1.2", "host": "127.0.0.1", "heart-beat": "0,0",
                                    "Authorization": f"Bearer {token}"}))
    command, _, _ = parse_frame(ws.recv())
    if command != "CONNECTED":
        sys.exit(f"STOMP connect failed: {command}")
    return ws


class Frames(threading.Thread):
    """Reads MESSAGE frames and stamps each request id's first RECEIVED notification."""

    def __init__(self, ws):
        super().__init__(daemon=True)
        self.ws = ws
        self.arrived = {}
        self.lock = threading.Lock()

    def run(self):
        while True:
            try:
                raw = self.ws.recv()
            except Exception:
                return
            at = time.perf_counter()
            if not isinstance(raw, str) or not raw.startswith("MESSAGE"):
                continue
            _, _, body = parse_frame(raw)
            n = json.loads(body)
            if n.get("type") == "MATCH_REQUEST_RECEIVED" and n.get("status") == "PENDING":
                with self.lock:
                    self.arrived.setdefault(n["order_match_request_id"], at)


def ping_round_trips(port, token, count):
    ws = stomp_connect(port, token)
    out = []
    for i in range(count):
        payload = str(i).encode()
        start = time.perf_counter()
        ws.ping(payload)
        while True:
            op, frame = ws.recv_data_frame(control_frame=True)
            if op == websocket.ABNF.OPCODE_PONG and frame.data == payload:
                break
        out.append((time.perf_counter() - start) * 1e6)
    ws.close()
    return sorted(out)


def setup(port, env, args):
    admin = sign_in(port, ADMIN)
    broker = create_broker(admin)
    for firm in ("Taker", "Responder"):
        create_firm(admin, firm, broker["company_id"])
    instrument = create_instrument(admin, "Bench T Dec26-Mar27", "Dec26-Mar27")
    clients = {firm: create_trader(args.bin, env, port, admin, f"{firm.lower()}@bench.test", firm)
               for firm in ("Taker", "Responder")}
    sell = expect(clients["Responder"].call("POST", "/api/parent-orders", {
        "direction": "SELL", "instrument_id": instrument, "quantity": 1_000_000}), 201, "sell parent")
    expect(clients["Responder"].call("POST", "/api/orders", {
        "parent_order_id": sell["parent_order_id"], "quantity": 1_000_000, "limit_price": 95.0,
        "broker_id": broker["company_id"], "residual": True, "iceberg": False}), 201, "resting order")
    buy = expect(clients["Taker"].call("POST", "/api/parent-orders", {
        "direction": "BUY", "instrument_id": instrument, "quantity": 1_000_000}), 201, "buy parent")
    return clients, broker["company_id"], buy["parent_order_id"]


def main():
    ap = bench_args(__doc__)
    ap.add_argument("--rate", type=float, default=20, help="takes per second (20)")
    ap.add_argument("--duration", type=float, default=30, help="seconds of takes (30)")
    ap.add_argument("--pings", type=int, default=600, help="WebSocket round trips for the ceiling (600)")
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="upstairs-take-")
    version = subprocess.run([args.bin, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{version} ({args.bin}), {args.backend}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f}, {date.today()}; {args.rate:g} takes/s for {args.duration:g} s, 127.0.0.1",
          flush=True)
    try:
        with serving(args.bin, args.backend, args.pg_url, workdir) as (port, env):
            pings, latencies, errors, lost = measure(args, port, env)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report(pings, latencies, errors, lost)


def measure(args, port, env):
    """Steps 1 to 4 against the running server."""
    clients, broker, parent = setup(port, env, args)

    pings = ping_round_trips(port, clients["Responder"].token, args.pings)

    ws = stomp_connect(port, clients["Responder"].token)
    ws.send(stomp_frame("SUBSCRIBE", {"id": "n", "destination": "/user/topic/notifications", "receipt": "r"}))
    command, _, _ = parse_frame(ws.recv())
    if command != "RECEIPT":
        sys.exit(f"subscribe failed: {command}")
    frames = Frames(ws)
    frames.start()

    taker = clients["Taker"]
    body = {"requesting_parent_order_id": parent, "quantity": 1, "price": 95.0, "requesting_broker_id": broker,
            "dry_run": False, "residual": False}
    answered = {}
    errors = 0
    n = int(args.rate * args.duration)
    start = time.perf_counter()
    for i in range(n):
        due = start + i / args.rate
        wait = due - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        status, out = taker.call("POST", "/api/order-match-requests", body)
        at = time.perf_counter()
        if status != 201:
            errors += 1
            continue
        answered[out[0]["order_match_request_id"]] = at
    # Frames still in flight: wait for them with a deadline.
    deadline = time.perf_counter() + 10
    while time.perf_counter() < deadline:
        with frames.lock:
            if all(k in frames.arrived for k in answered):
                break
        time.sleep(0.01)
    with frames.lock:
        arrived = dict(frames.arrived)
    lost = [k for k in answered if k not in arrived]
    latencies = sorted(max(0.0, arrived[k] - t) * 1e6 for k, t in answered.items() if k in arrived)
    ws.close()
    return pings, latencies, errors, lost


def report(pings, latencies, errors, lost):
    print()
    print("| measure | count | p50 | p99 |")
    print("|---|---:|---:|---:|")
    print(f"| WebSocket ping → pong, loopback (ceiling) | {len(pings)} | {ms(pct(pings, 50))} | {ms(pct(pings, 99))} |")
    print(f"| take's HTTP response → responder's STOMP frame | {len(latencies)} | {ms(pct(latencies, 50))} | "
          f"{ms(pct(latencies, 99))} |")
    print()
    p99 = pct(latencies, 99)
    print(f"p99 {ms(p99)} (target ≤ 50 ms); p99 ÷ WebSocket round-trip p99: "
          f"{p99 / max(pct(pings, 99), 1):.2f}; takes refused: {errors}; frames missing: {len(lost)}")


if __name__ == "__main__":
    main()
