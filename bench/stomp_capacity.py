#!/usr/bin/env python3
"""STOMP capacity: the server's memory per idle session, and a book push's fan-out p99
beside a raw WebSocket broadcast measured in the same run.

Run through bench/run.sh (it builds the release binary and picks the Python that has
websockets):

    bench/run.sh stomp-capacity sqlite
    bench/run.sh stomp-capacity postgres
    UPSTAIRS_BIN=target/debug/upstairs bench/run.sh stomp-capacity sqlite --sessions 500 --subscribers 100

What one run does, on 127.0.0.1 only and bounded in time:

1. Raises this process's open-file soft limit to its hard limit (the server inherits it),
   starts `upstairs serve --always-open` on a fresh database and creates through the API
   and `upstairs user create` a broker, two trading firms, two instruments (A, B), one
   maker trader and enough watcher traders for 16 sessions each (the per-user cap). Each
   watcher signs in once (remember me) and its token serves its 16 sessions; the sign-ins
   come from 127.0.0.2, 127.0.0.3 … at most 90 per address (the limit is 100 per address
   per 15 minutes), so no server setting changes.
2. Idle sessions: the server's VmRSS (/proc/PID/status), then `--sessions` STOMP 1.2
   sessions over WebSocket at /ws (bearer token in CONNECT, heart-beat 0,0), each
   subscribed to A's book topic and to /user/topic/notifications (with a receipt), held by
   one asyncio process; the server's VmRSS again and (RSS after − before) / N against the
   goal of 20 KB per session, and the server's own `upstairs_stomp_sessions` gauge from
   /metrics. The sessions stay alive through the server's WebSocket pings (every 30 s;
   the client library answers them), `--hold` seconds more if asked. Then all close.
3. Fan-out: `--subscribers` sessions subscribed to B's book topic; a `--rounds` times,
   the maker places one one-lot child order on B (`POST /api/orders`, in a thread so the
   event loop keeps reading) and, per subscriber, the time from just before that call to
   the book MESSAGE frame's arrival. Interleaved with it, the ceiling: a minimal
   `websockets` server (this script, in its own process) that on a trigger sends one text
   message of the same byte size as that round's MESSAGE frame to as many connected
   clients, timed the same way from just before the trigger is sent.
4. Prints p50/p99/max of both and the ratio of the p99s. It prints; it never asserts.

Both fan-outs are received by the same single Python process, whose own per-message cost
is part of both figures; the ratio is what compares them.
"""

import asyncio
import http.client
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from logins import status_kb  # noqa: E402
from ratios import (ADMIN, PASSWORD, Client, bench_args, create_broker, create_firm,  # noqa: E402
                    create_instrument, create_trader, expect, ms, pct, serving, sign_in, start_node,
                    stop_node)
from take_latency import parse_frame, stomp_frame  # noqa: E402

PER_USER = 16  # STOMP sessions per user per node (MAX_SESSIONS_PER_USER)
LOGINS_PER_ADDRESS = 90  # below the 100 sign-ins per address per 15 minutes
GOAL_KB = 20
OPENING = 64  # sessions being opened at once
NOTIFICATIONS = "/user/topic/notifications"


def book_topic(instrument_id):
    return f"/topic/instruments/{instrument_id}/book"


def client_from(port, address, token=None):
    """A `ratios.Client` whose connection leaves from `address` (any 127.x.y.z reaches 127.0.0.1)."""
    c = Client(port, token)
    c.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(address, 0))
    return c


def stomp_gauge(metrics_port):
    """The server's `upstairs_stomp_sessions` (from its metrics address), or the reason it
    could not be read."""
    try:
        status, body = Client(metrics_port).call("GET", "/metrics")
    except (OSError, http.client.HTTPException) as e:
        return None, f"/metrics not answered ({type(e).__name__})"
    m = re.search(r"^upstairs_stomp_sessions (\d+)$", body if isinstance(body, str) else "", re.M)
    if status != 200 or not m:
        return None, f"/metrics answered {status} without the gauge"
    return int(m.group(1)), ""


def read_counts(metrics_port):
    """The first node's books read back for pushes and HTTP requests answered, so far."""
    status, body = Client(metrics_port).call("GET", "/metrics")
    if status != 200 or not isinstance(body, str):
        sys.exit(f"/metrics answered {status}")
    reads = re.search(r"^upstairs_book_reads_total (\d+)$", body, re.M)
    http_total = sum(int(n) for n in re.findall(r"^upstairs_http_requests_total\{[^}]*\} (\d+)$", body, re.M))
    return (int(reads.group(1)) if reads else None), http_total


# ---------------------------------------------------------------- the venue


def setup(port, env, args, watchers):
    """Broker, firms, instruments A and B, the maker (with a BUY parent on B) and `watchers`
    signed-in watcher traders. Returns (admin token, maker token, broker id, parent id, A, B, tokens)."""
    run_cli = lambda *a: subprocess.run([args.bin, *a], env=env, check=True, stdout=subprocess.DEVNULL)
    admin = sign_in(port, ADMIN)
    broker = create_broker(admin)
    for firm in ("Maker", "Watchers"):
        create_firm(admin, firm, broker["company_id"])
    instruments = [create_instrument(admin, name, term)
                   for name, term in (("Bench A Dec26-Mar27", "Dec26-Mar27"), ("Bench B Mar27-Jun27", "Mar27-Jun27"))]
    maker = create_trader(args.bin, env, port, admin, "maker@bench.test", "Maker")
    parent = expect(maker.call("POST", "/api/parent-orders", {
        "direction": "BUY", "instrument_id": instruments[1], "quantity": 1_000_000}), 201, "parent")["parent_order_id"]

    t = time.perf_counter()
    emails = [f"watcher{i:05d}@bench.test" for i in range(watchers)]
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda e: run_cli("user", "create", "--email", e, "--password", PASSWORD, "--role", "trader",
                                        "--company", "Watchers"), emails))
    created = time.perf_counter() - t

    def watcher_token(i):
        c = client_from(port, f"127.0.0.{2 + i // LOGINS_PER_ADDRESS}")
        return expect(c.call("POST", "/api/auth/login", {"email": emails[i], "password": PASSWORD,
                                                         "rememberMe": True}), 200, f"{emails[i]} login")["token"]

    t = time.perf_counter()
    with ThreadPoolExecutor(4) as pool:
        tokens = list(pool.map(watcher_token, range(watchers)))
    print(f"setup: {watchers} watchers created in {created:.1f} s (CLI), signed in in {time.perf_counter() - t:.1f} s "
          f"from {math.ceil(watchers / LOGINS_PER_ADDRESS)} loopback addresses", flush=True)
    return admin.token, maker.token, broker["company_id"], parent, instruments[0], instruments[1], tokens


# ---------------------------------------------------------------- sessions


class Session:
    """One WebSocket connection and the task reading it; `on_message(session, at, raw)` sees each frame."""

    def __init__(self, ws, index):
        self.ws = ws
        self.index = index
        self.task = None
        self.closing = False
        self.dropped = False


async def read_loop(sess, on_message):
    try:
        async for raw in sess.ws:
            at = time.perf_counter()
            on_message(sess, at, raw)
    except ConnectionClosed:
        pass
    if not sess.closing:
        sess.dropped = True


async def open_stomp(port, token, index, destinations, on_message, errors):
    """CONNECT, SUBSCRIBE to each destination (receipt on the last), then read in a task."""
    try:
        ws = await connect(f"ws://127.0.0.1:{port}/ws", subprotocols=["v12.stomp"], compression=None, proxy=None,
                           ping_interval=None, open_timeout=60, close_timeout=10, max_queue=None)
    except Exception as e:  # refused, reset, handshake timeout: counted, the run goes on
        errors.append(f"connect: {type(e).__name__}: {e}")
        return None
    try:
        await ws.send(stomp_frame("CONNECT", {"accept-version": "1.2", "host": "127.0.0.1", "heart-beat": "0,0",
                                              "Authorization": f"Bearer {token}"}))
        command, headers, body = parse_frame(await asyncio.wait_for(ws.recv(), 60))
        if command != "CONNECTED":
            raise RuntimeError(f"{command} {headers.get('message', '')}: {body}")
        for i, dest in enumerate(destinations):
            extra = {"receipt": "r"} if i == len(destinations) - 1 else {}
            await ws.send(stomp_frame("SUBSCRIBE", {"id": f"s{i}", "destination": dest, **extra}))
        command, headers, body = parse_frame(await asyncio.wait_for(ws.recv(), 60))
        if command != "RECEIPT":
            raise RuntimeError(f"{command} {headers.get('message', '')}: {body}")
    except Exception as e:
        errors.append(f"stomp: {type(e).__name__}: {e}")
        await ws.close()
        return None
    sess = Session(ws, index)
    sess.task = asyncio.create_task(read_loop(sess, on_message))
    return sess


async def open_many(n, opener):
    """`opener(i)` for i in 0..n, OPENING at a time; the sessions that opened."""
    gate = asyncio.Semaphore(OPENING)

    async def one(i):
        async with gate:
            return await opener(i)

    return [s for s in await asyncio.gather(*(one(i) for i in range(n))) if s is not None]


async def close_many(sessions):
    gate = asyncio.Semaphore(256)

    async def one(s):
        async with gate:
            s.closing = True
            try:
                await s.ws.close()
            except Exception:
                pass
            if s.task:
                await s.task

    await asyncio.gather(*(one(s) for s in sessions))


async def wait_gauge(metrics_port, want, seconds):
    """Polls /metrics until the session gauge reads `want`; the last reading."""
    deadline = time.perf_counter() + seconds
    while True:
        value, why = stomp_gauge(metrics_port)
        if value == want or time.perf_counter() > deadline:
            return value, why
        await asyncio.sleep(0.2)


# ---------------------------------------------------------------- 2. idle sessions


async def idle_sessions(args, port, metrics_port, pid, tokens, instrument):
    errors = []
    destinations = [book_topic(instrument), NOTIFICATIONS]
    ignore = lambda *_: None
    # Warm-up: one user's worth opened and closed, so one-time allocations are not counted.
    warm = await open_many(PER_USER, lambda i: open_stomp(port, tokens[0], i, destinations, ignore, errors))
    await close_many(warm)
    await wait_gauge(metrics_port, 0, 10)
    await asyncio.sleep(1)
    before = status_kb(pid, "VmRSS")
    t = time.perf_counter()
    sessions = await open_many(args.sessions, lambda i: open_stomp(port, tokens[i // PER_USER], i, destinations,
                                                                    ignore, errors))
    opened_in = time.perf_counter() - t
    await asyncio.sleep(2)
    after = status_kb(pid, "VmRSS")
    gauge, why = stomp_gauge(metrics_port)
    gauge_note = ""
    if gauge is None and sessions:
        # /metrics did not answer: close one session and read again.
        one = sessions.pop()
        await close_many([one])
        gauge, why2 = await wait_gauge(metrics_port, len(sessions), 10)
        gauge_note = f"{why}; read after closing one session: "
        why = why2
    if args.hold > 0:
        await asyncio.sleep(args.hold)
    dropped = sum(s.dropped for s in sessions)
    alive_for = time.perf_counter() - t
    await close_many(sessions)
    after_close = status_kb(pid, "VmRSS")
    left, _ = await wait_gauge(metrics_port, 0, 30)
    return {"before": before, "after": after, "after_close": after_close, "opened": len(sessions) + bool(gauge_note),
            "opened_in": opened_in, "gauge": gauge, "gauge_note": gauge_note + (why or ""), "dropped": dropped,
            "alive_for": alive_for, "errors": errors, "left": left}


# ---------------------------------------------------------------- 3. fan-out and its ceiling


RAW_SERVER = "_raw_server"


async def raw_server():
    """The ceiling's server: a client that says "sub" is a subscriber; one that says "trigger"
    sends sizes, each answered by one text message of that many bytes to every subscriber."""
    from websockets.asyncio.server import broadcast, serve

    subs = set()

    async def handler(ws):
        first = await ws.recv()
        if first == "sub":
            subs.add(ws)
            try:
                await ws.send("ok")
                await ws.wait_closed()
            finally:
                subs.discard(ws)
        elif first == "trigger":
            async for size in ws:
                broadcast(subs, "x" * int(size))
                await ws.send("sent")

    async with serve(handler, "127.0.0.1", 0, compression=None, ping_interval=None, max_queue=None) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until the bench closes stdin


class Round:
    """Arrival stamps of the current round, one per session (the first frame after the start)."""

    def __init__(self):
        self.stamps = {}
        self.sizes = []
        self.open = False
        self.want = 0
        self.done = asyncio.Event()

    def start(self, want):
        self.stamps = {}
        self.sizes = []
        self.want = want
        self.done.clear()
        self.open = True

    def seen(self, sess, at, raw):
        if not self.open or sess.index in self.stamps:
            return
        if isinstance(raw, str) and raw.startswith("MESSAGE"):
            self.sizes.append(len(raw.encode()))
        elif not (isinstance(raw, str) and raw.startswith("x")):
            return  # heart-beats, receipts
        self.stamps[sess.index] = at
        if len(self.stamps) >= self.want:
            self.done.set()

    async def finish(self, t0, seconds=10):
        try:
            await asyncio.wait_for(self.done.wait(), seconds)
        except asyncio.TimeoutError:
            pass
        self.open = False
        return [(at - t0) * 1e6 for at in self.stamps.values()]


async def fan_out(args, ports, metrics_port, tokens, maker_token, broker, parent, instrument):
    """The book change is made on the first node; subscribers are spread over all of them."""
    port = ports[0]
    errors = []
    stomp_round, raw_round = Round(), Round()
    subscribers = await open_many(args.subscribers, lambda i: open_stomp(
        ports[i % len(ports)], tokens[i // PER_USER], i, [book_topic(instrument)], stomp_round.seen, errors))

    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), RAW_SERVER], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    raw_port = int(proc.stdout.readline())

    async def open_raw(i):
        ws = await connect(f"ws://127.0.0.1:{raw_port}", compression=None, proxy=None, ping_interval=None,
                           open_timeout=60, max_queue=None)
        await ws.send("sub")
        await ws.recv()
        sess = Session(ws, i)
        sess.task = asyncio.create_task(read_loop(sess, raw_round.seen))
        return sess

    raws = await open_many(len(subscribers), open_raw)
    trigger = await connect(f"ws://127.0.0.1:{raw_port}", compression=None, proxy=None, ping_interval=None)
    await trigger.send("trigger")

    maker = Client(port, maker_token)
    expect(maker.call("GET", "/api/users/me"), 200, "maker")  # opens the keep-alive connection
    stomp_lat, raw_lat, http_lat, sizes = [], [], [], []
    missing = {"stomp": 0, "raw": 0}
    counts_before = read_counts(metrics_port)
    for r in range(args.rounds):
        # A book change: one more one-lot BUY, a tick lower each round (no SELL: nothing matches).
        body = {"parent_order_id": parent, "quantity": 1, "limit_price": round(95.5 - 0.01 * (r % 100), 2),
                "broker_id": broker, "residual": True, "iceberg": False}
        stomp_round.start(len(subscribers))
        t0 = time.perf_counter()
        status, out = await asyncio.to_thread(maker.call, "POST", "/api/orders", body)
        http_lat.append((time.perf_counter() - t0) * 1e6)
        if status != 201:
            sys.exit(f"child order refused: {status} {out}")
        got = await stomp_round.finish(t0)
        stomp_lat += got
        missing["stomp"] += len(subscribers) - len(got)
        size = max(stomp_round.sizes) if stomp_round.sizes else 512
        sizes.append(size)
        await asyncio.sleep(0.2)  # past the book pusher's 50 ms window: the next change pushes at once

        raw_round.start(len(raws))
        t0 = time.perf_counter()
        await trigger.send(str(size))
        got = await raw_round.finish(t0)
        await trigger.recv()
        raw_lat += got
        missing["raw"] += len(raws) - len(got)
        await asyncio.sleep(0.2)

    counts_after = read_counts(metrics_port)
    dropped = sum(s.dropped for s in subscribers)
    await close_many(subscribers)
    await close_many(raws)
    await trigger.close()
    proc.stdin.close()
    proc.wait(timeout=10)
    return {"subscribers": len(subscribers), "raw_clients": len(raws), "stomp": sorted(stomp_lat),
            "raw": sorted(raw_lat), "http": sorted(http_lat), "sizes": sorted(sizes), "missing": missing,
            "dropped": dropped, "errors": errors,
            "book_reads": None if counts_before[0] is None else counts_after[0] - counts_before[0],
            # Besides the rounds' own orders and the two reads of /metrics (not counted: another router).
            "other_http": counts_after[1] - counts_before[1] - args.rounds}


# ---------------------------------------------------------------- the run


def report(idle, fan, args):
    print()
    print(f"## Idle sessions: {idle['opened']} of {args.sessions} opened in {idle['opened_in']:.1f} s "
          f"(each CONNECT + 2 SUBSCRIBEs)")
    per = (idle["after"] - idle["before"]) / max(idle["opened"], 1)
    print(f"server VmRSS before {idle['before'] / 1024:.1f} MiB, with the sessions {idle['after'] / 1024:.1f} MiB, "
          f"after closing them {idle['after_close'] / 1024:.1f} MiB")
    print(f"memory per session: {per:.1f} KB (goal {GOAL_KB} KB; ÷ goal {per / GOAL_KB:.2f})")
    print(f"upstairs_stomp_sessions: {idle['gauge']} ({idle['gauge_note'] or 'read with the sessions open'}); "
          f"{idle['left']} after closing all")
    print(f"sessions dropped by the server while held ({idle['alive_for']:.0f} s): {idle['dropped']}; "
          f"failed to open: {len(idle['errors'])}" + (f" (first: {idle['errors'][0]})" if idle["errors"] else ""))
    print()
    s, w = fan["stomp"], fan["raw"]
    size = fan["sizes"][len(fan["sizes"]) // 2] if fan["sizes"] else 0
    print(f"## Fan-out: {fan['subscribers']} subscribers over {args.nodes} node(s) × {args.rounds} rounds, book MESSAGE frame "
          f"{fan['sizes'][0] if fan['sizes'] else 0}–{fan['sizes'][-1] if fan['sizes'] else 0} bytes (median {size})")
    print()
    print("| measure | deliveries | p50 | p99 | max |")
    print("|---|---:|---:|---:|---:|")
    print(f"| raw WebSocket broadcast, same size, {fan['raw_clients']} clients (ceiling) | {len(w)} | "
          f"{ms(pct(w, 50))} | {ms(pct(w, 99))} | {ms(w[-1] if w else float('nan'))} |")
    print(f"| POST /api/orders → book MESSAGE at each subscriber | {len(s)} | {ms(pct(s, 50))} | "
          f"{ms(pct(s, 99))} | {ms(s[-1] if s else float('nan'))} |")
    print()
    h = fan["http"]
    print(f"fan-out p99 ÷ raw broadcast p99: {pct(s, 99) / max(pct(w, 99), 1):.2f}; the order's own HTTP answer "
          f"p50 {ms(pct(h, 50))}; deliveries missing (10 s): STOMP {fan['missing']['stomp']}, raw "
          f"{fan['missing']['raw']}; subscribers dropped: {fan['dropped']}; failed to open: {len(fan['errors'])}"
          + (f" (first: {fan['errors'][0]})" if fan["errors"] else ""))
    reads = "not counted by this binary" if fan["book_reads"] is None else fan["book_reads"]
    print(f"the first node's reads for the {args.rounds} changes to {fan['subscribers']} subscribers: books read back "
          f"to push them {reads}; HTTP requests answered besides the changes' own orders {fan['other_http']}")


def server_log_notes(workdir):
    try:
        with open(os.path.join(workdir, "server.log")) as f:
            lines = [line.rstrip() for line in f if "WARN" in line or "ERROR" in line]
    except OSError:
        return
    if lines:
        print(f"\nserver log: {len(lines)} warnings or errors; first: {lines[0][:300]}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == RAW_SERVER:
        asyncio.run(raw_server())
        return
    ap = bench_args(__doc__)
    ap.add_argument("--sessions", type=int, default=10_000, help="idle STOMP sessions (10000)")
    ap.add_argument("--subscribers", type=int, default=1_000, help="subscribers of one book topic (1000)")
    ap.add_argument("--rounds", type=int, default=20, help="book changes measured (20)")
    ap.add_argument("--hold", type=float, default=0, help="seconds to hold the idle sessions open once counted (0)")
    ap.add_argument("--nodes", type=int, choices=[1, 2], default=1,
                    help="nodes the fan-out's subscribers are spread over (2: postgres only; the change is made on the first)")
    ap.add_argument("--keep", action="store_true", help="keep the work folder (server log, database file)")
    args = ap.parse_args()
    if args.nodes == 2 and args.backend != "postgres":
        sys.exit("two nodes share one PostgreSQL: --nodes 2 needs postgres")
    if not os.path.exists(args.bin):
        sys.exit(f"{args.bin} is missing: cargo build --release -p upstairs (or set UPSTAIRS_BIN)")

    # Both processes hold one descriptor per socket: this one's limit is inherited by the server.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = max(args.sessions, args.subscribers * 2) + 1024
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft < need:
        sys.exit(f"open files limited to {soft} (hard {hard}); {need} needed: raise `ulimit -Hn`")

    workdir = tempfile.mkdtemp(prefix="upstairs-stomp-")
    version = subprocess.run([args.bin, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{version} ({args.bin}), {args.backend}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f}, {date.today()}; {args.sessions} idle sessions, {args.subscribers} subscribers "
          f"× {args.rounds} rounds, 127.0.0.1" + (f"; work folder {workdir}" if args.keep else ""), flush=True)
    watchers = math.ceil(max(args.sessions, args.subscribers, PER_USER) / PER_USER)
    try:
        with serving(args.bin, args.backend, args.pg_url, workdir) as (port, env):
            pid = int(env["UPSTAIRS_BENCH_SERVER_PID"])
            metrics_port = int(env["UPSTAIRS_BENCH_METRICS_PORT"])
            with open(f"/proc/{pid}/limits") as f:
                limit = next((line.split()[3] for line in f if line.startswith("Max open files")), "?")
            print(f"server pid {pid}, open files limit {limit}", flush=True)
            _, maker, broker, parent, a, b, tokens = setup(port, env, args, watchers)
            print("opening the idle sessions…", flush=True)
            idle = asyncio.run(idle_sessions(args, port, metrics_port, pid, tokens, a))
            ports, second = [port], None
            if args.nodes == 2:
                second, second_port = start_node(args.bin, env, os.path.join(workdir, "node2.log"))
                ports.append(second_port)
            print(f"fan-out rounds ({len(ports)} node(s))…", flush=True)
            try:
                fan = asyncio.run(fan_out(args, ports, metrics_port, tokens, maker, broker, parent, b))
            finally:
                if second is not None:
                    stop_node(second)
        report(idle, fan, args)
        server_log_notes(workdir)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
