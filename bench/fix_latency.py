#!/usr/bin/env python3
"""From a match to the broker's TradeCaptureReport over FIX, beside the same match's
e-mail to the broker's desk, measured in one run (issue 14's acceptance).

Run through bench/run.sh (it builds the release binary and picks the Python that has
quickfix and aiosmtpd):

    bench/run.sh fix-latency sqlite
    bench/run.sh fix-latency postgres

What one run does, on 127.0.0.1 only and bounded in time:

1. Starts a real SMTP server in this process (aiosmtpd). A handler stamps each message
   on arrival with the order id its link names.
2. Starts `upstairs serve --always-open` on a fresh database, with its FIX gateway on a
   free port and its e-mail going to that SMTP server. Through the API it creates a
   broker (FIX CompID BROKER with a password, and a confirmation e-mail address), two
   trading firms, a trader in each and one instrument (minimum block 1). The responder
   rests one large SELL order, the taker opens a BUY parent.
3. The broker's FIX session: a real QuickFIX initiator (tests/peers/fix_peer.py, not
   acknowledging), whose JSON lines a reader thread stamps on arrival.
4. The load: `--rate` matches per second for `--duration` seconds. Each is a take of one
   lot, then the responder's accept (`PATCH /api/order-match-requests/{id}`). The clock
   starts when the accept's HTTP response has been read. It stops at:
   - the TradeCaptureReport for the responder's order (571 = <order id>-A) reaching the
     peer (its line read from the pipe);
   - the accept e-mail for that order reaching the SMTP server.
5. Prints p50 and p99 of both paths, and how many of each arrived. It prints; it never
   asserts.
"""

import email
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import date

from aiosmtpd.controller import Controller

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ratios import (ADMIN, bench_args, create_broker, create_firm, create_instrument,  # noqa: E402
                    create_trader, expect, free_port, ms, pct, serving, sign_in)

PEER = os.path.join(HERE, "..", "tests", "peers", "fix_peer.py")
FIX_PASSWORD = "Bench-FIX-pass"
ORDER_IN_LINK = re.compile(r"order_id=([0-9a-f-]{36})")


class Stamps:
    """Arrival times by order id, from several threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.at = {}

    def stamp(self, order_id):
        now = time.perf_counter()
        with self.lock:
            self.at.setdefault(order_id, now)

    def copy(self):
        with self.lock:
            return dict(self.at)


class MailStamper:
    """aiosmtpd handler: stamps the order id of an accept e-mail's link."""

    def __init__(self, stamps):
        self.stamps = stamps

    async def handle_DATA(self, server, session, envelope):
        msg = email.message_from_bytes(envelope.content)
        for part in msg.walk():
            body = part.get_payload(decode=True)
            if body and b"accept-order" in body:
                found = ORDER_IN_LINK.search(body.decode("utf-8", "replace"))
                if found:
                    self.stamps.stamp(found.group(1))
                break
        return "250 OK"


def read_reports(peer, stamps, logged_on):
    """Stamps each TradeCaptureReport's order id as its line arrives."""
    for line in peer.stdout:
        event = json.loads(line)
        if event.get("event") == "logon":
            logged_on.set()
        if event.get("event") == "app" and event.get("msg_type") == "AE":
            for tag, value in event["fields"]:
                if tag == 571 and value.endswith("-A"):
                    stamps.stamp(value[:-2])


def setup(port, env, args):
    admin = sign_in(port, ADMIN)
    broker = create_broker(admin, fix_comp_id="BROKER", fix_password=FIX_PASSWORD,
                           trade_confirmation_email="desk@broker.bench", trade_confirmation_via_email_enabled=True)
    for firm in ("Taker", "Responder"):
        create_firm(admin, firm, broker["company_id"])
    instrument = create_instrument(admin, "Bench F Dec26-Mar27", "Dec26-Mar27")
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
    ap.add_argument("--rate", type=float, default=5, help="matches per second (5)")
    ap.add_argument("--duration", type=float, default=30, help="seconds of matches (30)")
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="upstairs-fix-")
    version = subprocess.run([args.bin, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{version} ({args.bin}), {args.backend}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f}, {date.today()}; {args.rate:g} matches/s for {args.duration:g} s, 127.0.0.1",
          flush=True)
    fix_stamps, mail_stamps = Stamps(), Stamps()
    smtp = Controller(MailStamper(mail_stamps), hostname="127.0.0.1", port=free_port())
    smtp.start()
    fix_port = free_port()
    os.environ["UPSTAIRS_FIX_BIND"] = f"127.0.0.1:{fix_port}"
    os.environ["UPSTAIRS_SMTP_URL"] = f"smtp://127.0.0.1:{smtp.port}"
    peer = None
    try:
        with serving(args.bin, args.backend, args.pg_url, workdir) as (port, env):
            clients, broker, parent = setup(port, env, args)
            peer = subprocess.Popen(
                [sys.executable, PEER, "--port", str(fix_port), "--sender", "BROKER", "--target", "UPSTAIRS",
                 "--password", FIX_PASSWORD, "--store", os.path.join(workdir, "peer")],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            logged_on = threading.Event()
            threading.Thread(target=read_reports, args=(peer, fix_stamps, logged_on), daemon=True).start()
            if not logged_on.wait(30):
                sys.exit("the FIX peer did not log on")
            accepted, errors = load(args, clients, broker, parent)
            wait_for(accepted, [fix_stamps, mail_stamps], 30)
    finally:
        if peer is not None:
            peer.stdin.close()
            peer.wait(timeout=15)
        smtp.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    report(accepted, fix_stamps.copy(), mail_stamps.copy(), errors)


def load(args, clients, broker, parent):
    """Step 4: matches at the rate; the time each accept's response was read, by order id."""
    taker, responder = clients["Taker"], clients["Responder"]
    body = {"requesting_parent_order_id": parent, "quantity": 1, "price": 95.0, "requesting_broker_id": broker,
            "dry_run": False, "residual": False}
    accepted, errors = {}, 0
    n = int(args.rate * args.duration)
    start = time.perf_counter()
    for i in range(n):
        wait = start + i / args.rate - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        status, out = taker.call("POST", "/api/order-match-requests", body)
        if status != 201:
            errors += 1
            continue
        status, m = responder.call("PATCH", f"/api/order-match-requests/{out[0]['order_match_request_id']}",
                                   {"state": "ACCEPTED"})
        at = time.perf_counter()
        if status != 200:
            errors += 1
            continue
        accepted[m["order_id"]] = at
    return accepted, errors


def wait_for(accepted, all_stamps, seconds):
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        if all(all(k in s.copy() for k in accepted) for s in all_stamps):
            return
        time.sleep(0.05)


def report(accepted, fix_at, mail_at, errors):
    def latencies(arrived):
        return sorted(max(0.0, arrived[k] - t) * 1e6 for k, t in accepted.items() if k in arrived)

    fix, mail = latencies(fix_at), latencies(mail_at)
    print()
    print("| from the accept's HTTP response to | arrived | p50 | p99 |")
    print("|---|---:|---:|---:|")
    print(f"| the broker's TradeCaptureReport (FIX, QuickFIX peer) | {len(fix)}/{len(accepted)} | "
          f"{ms(pct(fix, 50))} | {ms(pct(fix, 99))} |")
    print(f"| the broker's accept e-mail (SMTP, aiosmtpd) | {len(mail)}/{len(accepted)} | "
          f"{ms(pct(mail, 50))} | {ms(pct(mail, 99))} |")
    print()
    print(f"FIX p99 ÷ e-mail p99: {pct(fix, 99) / max(pct(mail, 99), 1):.2f}; matches refused: {errors}")


if __name__ == "__main__":
    main()
