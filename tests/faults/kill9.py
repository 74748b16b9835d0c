#!/usr/bin/env python3
"""kill -9 under mixed load: nothing acknowledged is lost, nothing is done twice.

    tests/faults/kill9.py --backend sqlite   --cycles 200
    tests/faults/kill9.py --backend postgres --cycles 200
    UPSTAIRS_BIN=target/debug/upstairs tests/faults/kill9.py --backend sqlite --cycles 5   # the short run

Run it with the test peers' Python (.venv/bin/python: it needs aiosmtpd). What one run does,
on 127.0.0.1 only and bounded in time:

1. Starts `upstairs serve --always-open` on a fresh database (a SQLite file, or a new
   PostgreSQL database dropped at the end), e-mail through the SMTP sink of the test peers
   (tests/peers/smtp_sink.py) and its clock read from a file (UPSTAIRS_CLOCK_FILE), left
   at the wall clock until the end.
2. Through the API: a broker (trade confirmations by e-mail), three trading firms, a
   liquidity provider and, per worker thread, an instrument of its own and three users:
   a seller (firm X), a buyer (firm Y), a liquidity provider's trader. The sellers' match
   request preferences differ: none (the worker answers by hand), INSTANT,
   ACCEPT_WITH_DELAY, REJECT_WITH_DELAY.
3. Mixed load from the workers (parent orders, child orders, edits, cancels, takes,
   accepts, rejects, withdrawals, RFQs, quotes, declines, quote acceptances, RFQ
   withdrawals, and reads) and a broker thread that clicks the accept and fill links of
   every e-mail the sink receives. Every write carries an `Idempotency-Key` (a uuid per
   logical write). A write whose answer never came (the connection broke: the kill) is
   sent again, same key, same body, once the server is back (`/readyz`).
4. `--cycles` times, at a random moment: kill -9, restart on the same database, wait for
   `/readyz`.
5. Then: the clock file moves 60 s on (the 15-second automatic answers are due), then 20
   minutes on (every match request and RFQ deadline is due): each of those timers must
   fire. Then the broker thread stops and the outbox drains.
6. Checks and prints:
   - lost: a write answered 2xx whose effect is not there (its audit row, read through
     `GET /api/admin/action-logs`, and the entity it created, read back by id);
   - duplicated: a logical write acted more than once. Each worker is sequential, so the
     audit rows of a write are the ones of its user inside the windows of its attempts;
   - every parent order's counters: tradable + working + matched = quantity, working =
     the sum of its working / awaiting children, matched = the sum of its matched ones;
   - every due timer fired;
   - every e-mail of the outbox delivered at least once (by Message-ID); re-deliveries of
     a Message-ID are counted apart (a kill between the SMTP server's 250 and the row
     being marked sent resends it; receivers dedupe by Message-ID).
   Exits 1 when lost > 0, duplicated > 0, an invariant is broken, a timer did not fire or
   an e-mail was never delivered. It prints figures; it asserts no timings.
"""

import argparse
import collections
import contextlib
import datetime
import os
import random
import sys
import threading
import time
import traceback

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (AnswerLost, Database, NotSent, Server, SmtpSink, body_text, broker_links,  # noqa: E402
                    call, default_bin, expect, login, new_key, poll, rmtree, workdir)

BAND_LO, BAND_HI = 9000, 10000  # 90.00 … 100.00 by 0.01
PREFERENCES = [None, "INSTANT", "ACCEPT_WITH_DELAY", "REJECT_WITH_DELAY"]
MATCHED = {"MATCHED", "PARTIAL_BROKER_ACCEPTED", "BROKER_ACCEPTED", "PARTIAL_BROKER_FILLED", "BROKER_FILLED"}
WORKING = {"WORKING", "AWAITING_MATCH", "AWAITING_RFQ_ACCEPTANCE"}
REQUEST_STATES = ["PENDING", "ACCEPTED", "PARTIAL_BROKER_ACCEPTED", "BROKER_ACCEPTED", "PARTIAL_BROKER_FILLED",
                  "CANCELLED", "SYSTEM_CANCELLED_PRICE_OUT_OF_TICK", "REJECTED", "TIMED_OUT", "BROKER_FILLED",
                  "BREAKDOWN"]
RFQ_STATES = ["OPEN", "COMPLETED", "EXPIRED", "CANCELLED"]
# The audit row a write leaves: kind → (entity, operation); creating writes are the ones
# a retry could duplicate.
AUDIT = {
    "parent": ("parent_order", "create"), "order": ("order", "create"), "edit": ("order", "update"),
    "cancel": ("order", "cancel"), "take": ("match_request", "create"), "accept": ("match_request", "ACCEPTED"),
    "reject": ("match_request", "REJECTED"), "withdraw": ("match_request", "CANCELLED"),
    "rfq": ("rfq", "create"), "quote": ("rfq_response", "RESPONDED"),
    "decline": ("rfq_response", "REJECTED_BY_RESPONDER"), "accept_quote": ("rfq", "accept"),
    "cancel_rfq": ("rfq", "CANCELLED"),
}
CREATES = {"parent", "order", "take", "rfq", "quote"}


def price(tick):
    return round(tick / 100, 2)


def parse_ts(s):
    """RFC 3339 from the server (nanoseconds allowed) → POSIX seconds."""
    s = s.replace("Z", "+00:00")
    if "." in s:
        head, rest = s.split(".", 1)
        frac, tz = rest[:rest.index("+")] if "+" in rest else rest, rest[rest.index("+"):] if "+" in rest else ""
        s = f"{head}.{frac[:6]}{tz}"
    return datetime.datetime.fromisoformat(s).timestamp()


# ---------------------------------------------------------------- writes and their attempts


class Write:
    """One logical write: its key and body never change across attempts."""

    __slots__ = ("kind", "method", "path", "body", "key", "user", "attempts", "answer", "entity_id", "worker")

    def __init__(self, kind, method, path, body, user, worker):
        self.kind, self.method, self.path, self.body, self.user, self.worker = kind, method, path, body, user, worker
        self.key = new_key()
        self.attempts = []  # (start, end, outcome): outcome 'lost', 'not-sent' or the status
        self.answer = None
        self.entity_id = None

    @property
    def lost_answers(self):
        return sum(1 for a in self.attempts if a[2] == "lost")


class Venue:
    """The running server as the load sees it: up or down, and which generation."""

    def __init__(self, server, args):
        self.server = server
        self.args = args
        self.cond = threading.Condition()
        self.up = True
        self.generation = 0
        self.writes = []
        self.writes_lock = threading.Lock()
        self.statuses = collections.Counter()
        self.defects = []  # (what, detail)
        self.stop = threading.Event()
        self.reads = 0

    @property
    def port(self):
        return self.server.port

    def down(self):
        with self.cond:
            self.up = False

    def back(self):
        with self.cond:
            self.up = True
            self.generation += 1
            self.cond.notify_all()

    def wait_up(self):
        with self.cond:
            if not self.cond.wait_for(lambda: self.up, timeout=180):
                raise TimeoutError("the server did not come back within 180 s")
            return self.generation

    def wait_after(self, generation):
        """After a broken request: wait until the server has been restarted since it was sent.
        A break without a kill is a defect (recorded); the retry then goes at once."""
        with self.cond:
            if self.cond.wait_for(lambda: self.up and self.generation > generation, timeout=60):
                return
        self.defect("connection broke without a kill", f"generation {generation}")

    def defect(self, what, detail):
        with self.writes_lock:
            self.defects.append((what, detail))

    def read(self, path, token, want=200):
        """A read: retried after a kill like a write (reads are safe to repeat)."""
        for _ in range(1000):
            gen = self.wait_up()
            try:
                a = call(self.port, "GET", path, token=token, timeout=self.args.request_timeout)
            except (NotSent, AnswerLost):
                self.wait_after(gen)
                continue
            self.reads += 1
            self.note_status("GET", path, a)
            if a.status == want:
                return a.body
            if a.status in (429, 503):
                time.sleep(min(float(a.headers.get("retry-after", "0.2") or 0.2), 2.0))
                continue
            raise RuntimeError(f"GET {path}: {a.status} {a.body}")
        raise RuntimeError(f"GET {path}: still 429/503 after 1000 tries")

    def note_status(self, method, path, a):
        with self.writes_lock:
            self.statuses[a.status] += 1
            if a.status >= 500:
                self.defects.append((f"{a.status} answer", f"{method} {path}: {a.detail()}"))
            if a.elapsed > 10:
                self.defects.append(("slow answer", f"{method} {path}: {a.elapsed:.1f} s"))

    def write(self, kind, method, path, body, token, user, worker=None):
        """Sends a logical write until it is answered (same key, same body every time)."""
        w = Write(kind, method, path, body, user, worker)
        with self.writes_lock:
            self.writes.append(w)
        while True:
            gen = self.wait_up()
            start = time.time()
            try:
                a = call(self.port, method, path, body, token=token, key=w.key, timeout=self.args.request_timeout)
            except NotSent:
                w.attempts.append((start, time.time(), "not-sent"))
                self.wait_after(gen)
                continue
            except AnswerLost as e:
                w.attempts.append((start, time.time(), "lost"))
                if "timed out" in str(e):
                    self.defect("no answer within the request timeout", f"{method} {path}")
                self.wait_after(gen)
                continue
            w.attempts.append((start, time.time(), a.status))
            self.note_status(method, path, a)
            if a.status in (429, 503) and len(w.attempts) < 200:
                # Throttled or not ready: the server says when to come back (bounded here).
                time.sleep(min(float(a.headers.get("retry-after", "0.2") or 0.2), 2.0))
                continue
            w.answer = a
            return w


# ---------------------------------------------------------------- setup


class Actors:
    pass


def setup(v, server, args, rng):
    p = server.port
    admin = login(p, "admin@faults.test")

    def post(path, body, what):
        return expect(call(p, "POST", path, body, token=admin, key=new_key()), 201, what)

    broker = post("/api/admin/companies", {"name": "FaultBroker", "full_name": "Fault Broker Ltd", "roles": ["broker"],
                                           "trade_confirmation_email": "desk@faultbroker.test",
                                           "trade_confirmation_via_email_enabled": True}, "broker")["company_id"]
    ref = {"company_id": broker}
    firms = ["Halyard", "Kestrel", "Osprey"]
    for f in firms:
        post("/api/admin/companies", {"name": f, "full_name": f"{f} LLP", "brokers": [ref], "default_broker": ref}, f)
    lp = post("/api/admin/companies", {"name": "Meridian", "full_name": "Meridian plc", "roles": ["liquidity-provider"],
                                       "brokers": [ref], "default_broker": ref}, "lp")["company_id"]
    workers = []
    for i in range(args.workers):
        a = Actors()
        a.index = i
        a.instrument = post("/api/admin/instruments", {
            "name": f"Fault W{i} Dec26-Mar27", "term": "Dec26-Mar27", "min_quantity": 1, "tick_size": 0.01,
            "exchange_id": "F", "currency": "EUR", "min_tick_price": price(BAND_LO),
            "max_tick_price": price(BAND_HI)}, "instrument")["instrument_id"]
        a.seller_email, a.buyer_email, a.lp_email = (f"seller{i}@faults.test", f"buyer{i}@faults.test",
                                                     f"quotes{i}@faults.test")
        server.create_user(a.seller_email, "trader", firms[i % 3], "Sam", f"Seller{i}")
        server.create_user(a.buyer_email, "trader", firms[(i + 1) % 3], "Bo", f"Buyer{i}")
        server.create_user(a.lp_email, "trader", "Meridian", "Lee", f"Quotes{i}")
        a.seller, a.buyer, a.lp_trader = (login(p, e) for e in (a.seller_email, a.buyer_email, a.lp_email))
        a.preference = PREFERENCES[i % len(PREFERENCES)]
        for token in (a.seller, a.buyer, a.lp_trader):
            me = expect(call(p, "GET", "/api/users/me", token=token), 200, "users/me")
            expect(call(p, "PATCH", f"/api/users/{me['user_id']}", {"parent_order_limit_multiplier": 1_000_000_000},
                        token=admin, key=new_key()), 200, "parent order limit")
        me = expect(call(p, "GET", "/api/users/me", token=a.seller), 200, "users/me")
        expect(call(p, "PATCH", f"/api/users/{me['user_id']}", {"auto_accept": a.preference}, token=a.seller,
                    key=new_key()), 200, "preference")
        a.broker, a.lp = broker, lp
        workers.append(a)
    return admin, broker, lp, workers


# ---------------------------------------------------------------- the load


class Worker(threading.Thread):
    """One instrument, a seller, a buyer and a provider's trader; one write at a time."""

    def __init__(self, v, actors, seed):
        super().__init__(daemon=True, name=f"worker-{actors.index}")
        self.v, self.a = v, actors
        self.rng = random.Random(seed)
        self.parents = {}
        self.pending = []  # match request ids this worker may still answer
        self.rfqs = []  # [rfq dict, stage]: 'sent' → 'quoted'
        self.error = None
        self.tag = 0

    def w(self, kind, method, path, body, token, user):
        return self.v.write(kind, method, path, body, token, user, worker=self.a.index)

    def run(self):
        try:
            self.new_parents()
            while not self.v.stop.is_set():
                self.step()
        except Exception as e:  # noqa: BLE001 — reported, the run fails
            self.error = f"{e}\n{traceback.format_exc()}"
            self.v.stop.set()

    # -- parents

    def new_parent(self, role, direction, token, email):
        self.tag += 1
        body = {"direction": direction, "instrument_id": self.a.instrument,
                "quantity": 5_000_000 + self.a.index * 100_000 + self.tag}
        w = self.w("parent", "POST", "/api/parent-orders", body, token, email)
        if w.answer.status != 201:
            raise RuntimeError(f"parent order refused: {w.answer.status} {w.answer.body}")
        w.entity_id = w.answer.body["parent_order_id"]
        self.parents[role] = w.entity_id

    def new_parents(self):
        self.new_parent("sell", "SELL", self.a.seller, self.a.seller_email)
        self.new_parent("take", "BUY", self.a.buyer, self.a.buyer_email)
        self.new_parent("rfq", "BUY", self.a.buyer, self.a.buyer_email)

    def tradable(self, role, token):
        return self.v.read(f"/api/parent-orders/{self.parents[role]}", token)["quantities"]["tradable"]

    def working_orders(self):
        orders = all_items(self.v, f"/api/orders?parent_order_id={self.parents['sell']}&state=WORKING", self.a.seller)
        return [o for o in orders if o["state"] == "WORKING"]

    # -- one step of the mix

    def step(self):
        r = self.rng.random()
        if r < 0.26:
            self.place()
        elif r < 0.38:
            self.edit()
        elif r < 0.45:
            self.cancel()
        elif r < 0.65:
            self.take()
        elif r < 0.78:
            self.answer()
        elif r < 0.97:
            self.rfq_step()
        else:
            self.look()

    def look(self):
        self.v.read(f"/api/instruments/{self.a.instrument}/book", self.a.buyer)
        self.v.read("/api/users/me", self.a.seller)
        self.v.read("/api/rfqs/all/responses", self.a.lp_trader)

    def place(self):
        if self.tradable("sell", self.a.seller) < 10_000:
            self.new_parent("sell", "SELL", self.a.seller, self.a.seller_email)
        body = {"parent_order_id": self.parents["sell"], "quantity": self.rng.randint(500, 4000),
                "limit_price": price(self.rng.randint(BAND_LO, BAND_HI)), "broker_id": self.a.broker,
                "residual": self.rng.random() < 0.7, "iceberg": self.rng.random() < 0.2}
        w = self.w("order", "POST", "/api/orders", body, self.a.seller, self.a.seller_email)
        if w.answer.status == 201:
            w.entity_id = w.answer.body["order_id"]

    def edit(self):
        orders = self.working_orders()
        if not orders:
            return self.place()
        o = self.rng.choice(orders)
        tick = self.rng.randint(BAND_LO, BAND_HI)
        while price(tick) == o["price"]:
            tick = self.rng.randint(BAND_LO, BAND_HI)
        body = {"limit_price": price(tick)}  # always a change, so always an audit row
        if self.rng.random() < 0.3:
            body["quantity"] = max(1, o["quantity"] + self.rng.randint(-50, 50))
        if self.rng.random() < 0.2:
            body["iceberg"] = not o["iceberg"]
        w = self.w("edit", "PATCH", f"/api/orders/{o['order_id']}", body, self.a.seller, self.a.seller_email)
        w.entity_id = o["order_id"]

    def cancel(self):
        orders = self.working_orders()
        if len(orders) < 3:
            return self.place()
        o = self.rng.choice(orders)
        w = self.w("cancel", "DELETE", f"/api/orders/{o['order_id']}", None, self.a.seller, self.a.seller_email)
        w.entity_id = o["order_id"]

    def take(self):
        avail = sum(o["quantity"] for o in self.working_orders())
        if avail < 1:
            return self.place()
        if self.tradable("take", self.a.buyer) < 10_000:
            self.new_parent("take", "BUY", self.a.buyer, self.a.buyer_email)
        body = {"requesting_parent_order_id": self.parents["take"], "quantity": self.rng.randint(1, min(avail, 2500)),
                "price": price(BAND_HI), "requesting_broker_id": self.a.broker, "dry_run": False, "residual": False}
        if self.rng.random() < 0.1:
            # The preview first (a POST that writes nothing).
            dry = dict(body, dry_run=True)
            self.v.write("preview", "POST", "/api/order-match-requests", dry, self.a.buyer, self.a.buyer_email)
        w = self.w("take", "POST", "/api/order-match-requests", body, self.a.buyer, self.a.buyer_email)
        if w.answer.status == 201:
            ids = [m["order_match_request_id"] for m in w.answer.body]
            w.entity_id = ids
            self.pending.extend(ids)

    def answer(self):
        if not self.pending:
            return self.take()
        mid = self.pending.pop(0)
        r = self.rng.random()
        if self.a.preference is None:
            if r < 0.25:
                return  # left to its five-minute timer
            state = "ACCEPTED" if r < 0.8 else "REJECTED"
            kind, token, email = ("accept" if state == "ACCEPTED" else "reject"), self.a.seller, self.a.seller_email
        else:
            if r < 0.85:
                return  # left to the seller's preference (a timer)
            state, kind, token, email = "CANCELLED", "withdraw", self.a.buyer, self.a.buyer_email
        w = self.w(kind, "PATCH", f"/api/order-match-requests/{mid}", {"state": state}, token, email)
        w.entity_id = mid

    def rfq_step(self):
        # Move the oldest RFQ on a stage, or send a new one.
        if self.rfqs and self.rng.random() < 0.7:
            rfq, stage = self.rfqs.pop(0)
            rid = rfq["rfq_id"]
            response = rfq["responses"][0]["rfq_response_id"]
            r = self.rng.random()
            if stage == "sent":
                if r < 0.06:
                    w = self.w("decline", "POST", f"/api/rfqs/{rid}/responses", {"state": "REJECTED_BY_RESPONDER"},
                               self.a.lp_trader, self.a.lp_email)
                    w.entity_id = response
                elif r < 0.12:
                    return  # never quoted: expires at its deadline
                else:
                    q = rfq["quantity"]
                    sell = self.rng.randint(BAND_LO + 50, BAND_HI)
                    body = {"sell_price": price(sell), "sell_quantity": q}
                    if rfq["two_way"]:
                        # The provider buys below where it sells.
                        body.update(buy_price=price(sell - self.rng.randint(1, 50)), buy_quantity=q)
                    w = self.w("quote", "POST", f"/api/rfqs/{rid}/responses", body, self.a.lp_trader, self.a.lp_email)
                    w.entity_id = response
                    if w.answer.status == 200:
                        self.rfqs.append((rfq, ("quoted", body)))
            else:
                body = stage[1]
                if r < 0.75:
                    w = self.w("accept_quote", "PATCH", f"/api/rfqs/{rid}/responses/{response}",
                               {"state": "ACCEPTED", "price": body["sell_price"], "quantity": body["sell_quantity"]},
                               self.a.buyer, self.a.buyer_email)
                    w.entity_id = rid
                elif r < 0.9:
                    w = self.w("cancel_rfq", "PATCH", f"/api/rfqs/{rid}", {"state": "CANCELLED"}, self.a.buyer,
                               self.a.buyer_email)
                    w.entity_id = rid
                # else: quoted and left open until its deadline
            return
        if self.tradable("rfq", self.a.buyer) < 10_000:
            self.new_parent("rfq", "BUY", self.a.buyer, self.a.buyer_email)
        body = {"parent_order_id": self.parents["rfq"], "quantity": self.rng.randint(1, 2000),
                "liquidity_provider_ids": [self.a.lp], "two_way": self.rng.random() < 0.3,
                "anonymous": self.rng.random() < 0.5, "expires_in_seconds": 60 * self.rng.randint(1, 3)}
        w = self.w("rfq", "POST", "/api/rfqs", body, self.a.buyer, self.a.buyer_email)
        if w.answer.status == 201:
            w.entity_id = w.answer.body["rfq_id"]
            self.rfqs.append((w.answer.body, "sent"))


class Broker(threading.Thread):
    """The broker's desk: every e-mail once (by Message-ID), its accept or fill link clicked."""

    def __init__(self, v, sink, seed):
        super().__init__(daemon=True, name="broker")
        self.v, self.sink = v, sink
        self.rng = random.Random(seed)
        self.handled = set()
        self.confirmations = []  # (order id, token, step, answer, write)
        self.quit = threading.Event()
        self.error = None
        self.idle = threading.Event()

    def run(self):
        try:
            while not self.quit.is_set():
                if not self.handle_new():
                    self.idle.set()
                    self.quit.wait(0.05)
        except Exception as e:  # noqa: BLE001
            self.error = f"{e}\n{traceback.format_exc()}"
            self.v.stop.set()

    def handle_new(self):
        did = False
        for _, message_id, msg in self.sink.messages():
            if message_id in self.handled:
                continue
            self.idle.clear()
            self.handled.add(message_id)
            text = body_text(msg)
            for path, flag, step in (("/accept-order", "accepted", "ACCEPT"), ("/fill-order", "filled", "FILL")):
                for order_id, token in broker_links(text, path):
                    yes = self.rng.random() < (0.93 if step == "ACCEPT" else 0.97)
                    w = self.v.write(f"confirm_{step.lower()}", "PATCH", f"/api/orders/{order_id}?token={token}",
                                     {flag: yes}, None, None)
                    w.entity_id = order_id
                    self.confirmations.append((order_id, token, step, yes, w))
                    did = True
        return did


def killer(v, args, rng, log):
    """The main thread: `--cycles` kills at random moments, each followed by a restart."""
    for cycle in range(1, args.cycles + 1):
        deadline = time.monotonic() + rng.uniform(args.min_load, args.max_load)
        while time.monotonic() < deadline:
            if v.stop.is_set():
                return cycle - 1
            time.sleep(0.01)
        v.down()
        v.server.kill9()
        started = time.monotonic()
        v.server.start(timeout=120)
        v.restart_times.append(time.monotonic() - started)
        v.back()
        if cycle % max(1, args.cycles // 20) == 0 or cycle == args.cycles:
            n = len(v.writes)
            log(f"  cycle {cycle}/{args.cycles}: {n} writes so far, restart took {v.restart_times[-1] * 1000:.0f} ms")
    return args.cycles


# ---------------------------------------------------------------- checks


def all_pages(v, path, token, size=500):
    items, page = {}, 0
    while True:
        sep = "&" if "?" in path else "?"
        body = v.read(f"{path}{sep}page={page}&size={size}", token)
        for it in body["items"]:
            items[it.get("action_log_id") or it.get("outbox_id") or len(items)] = it
        page += 1
        if page * size >= body["total_items"] or not body["items"]:
            return list(items.values()), body["total_items"]


def listing(body):
    return body.get("items", []) if isinstance(body, dict) else body


def all_items(v, path, token, size=500):
    """Every item of a list, whether it answers a plain array or pages ({items, total_items})."""
    body = v.read(path, token)
    if not isinstance(body, dict):
        return body
    items, page = list(body.get("items", [])), 0
    sep = "&" if "?" in path else "?"
    while len(items) < body.get("total_items", 0):
        page += 1
        more = v.read(f"{path}{sep}page={page}&size={size}", token)
        if not more.get("items"):
            break
        items.extend(more["items"])
    return items


def move_clock(clock_file, seconds):
    """The server's clock runs `seconds` ahead of the wall clock from now on (atomic replace)."""
    tmp = clock_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(seconds))
    os.replace(tmp, clock_file)


def check_timers(v, workers, clock_file, log):
    """Every timer still pending at the end fires once it is due. The clock file moves:
    +30 s (the 15-second automatic answers are due), +140 s (also those a killed process had
    claimed: their 2-minute lease has lapsed), +20 min (every match request and RFQ deadline).
    Returns (due, fired, details, figures)."""
    by_instrument = {a.instrument: a for a in workers}

    def pending_requests():
        # A list is the caller's firm's; the instrument tells whose worker a request is.
        out = {}
        for a in workers:
            for m in all_items(v, "/api/order-match-requests?state=PENDING", a.seller):
                out[m["order_match_request_id"]] = (by_instrument[m["instrument_id"]], m)
        return out

    def open_rfqs():
        out = {}
        for a in workers:
            for r in all_items(v, "/api/rfqs?state=OPEN", a.buyer):
                out[r["rfq_id"]] = r
        return out

    def wait(what, predicate, timeout):
        t = time.monotonic()
        with contextlib.suppress(TimeoutError):
            poll(what, predicate, timeout, 0.1)
        return time.monotonic() - t

    details = []
    before_pending, before_rfqs = pending_requests(), open_rfqs()
    auto = {k for k, (a, m) in before_pending.items() if a.preference is not None}
    # +30 s: every automatic answer is due (15 s after its request). Wait while they keep
    # firing; what is left after 3 s without progress waits for something else.
    move_clock(clock_file, 30)
    t, left, last = time.monotonic(), len(auto), time.monotonic()
    while left and time.monotonic() - last < 3 and time.monotonic() - t < 120:
        time.sleep(0.2)
        now_left = len(auto & set(pending_requests()))
        if now_left < left:
            left, last = now_left, time.monotonic()
    at_once = len(auto) - left
    log(f"  clock +30 s: {at_once} of {len(auto)} automatic answers fired ({time.monotonic() - t:.1f} s)")
    # +140 s: timers claimed by a killed process fire once their lease (2 min) has lapsed.
    move_clock(clock_file, 140)
    took = wait("automatic answers after the lease", lambda: not (auto & set(pending_requests())), 30)
    auto_left = auto & set(pending_requests())
    after_lease = len(auto) - len(auto_left) - at_once
    log(f"  clock +140 s: {after_lease} more fired once their lease lapsed ({took:.1f} s)")
    # +20 min: every deadline (match requests 5 min, RFQs at most 3 min here).
    move_clock(clock_file, 1200)
    took = wait("deadlines", lambda: not pending_requests() and not open_rfqs(), 60)
    left_requests, left_rfqs = pending_requests(), open_rfqs()
    log(f"  clock +20 min: {len(left_requests)} match requests and {len(left_rfqs)} RFQs still open ({took:.1f} s)")
    ended = collections.Counter()
    for k, (a, _) in before_pending.items():
        if k in left_requests:
            continue
        m = v.read(f"/api/order-match-requests/{k}", a.seller)
        ended[m["state"]] += 1
        if k in auto:
            want_reject = a.preference == "REJECT_WITH_DELAY"
            if m["state"] == "TIMED_OUT" or (want_reject and m["state"] not in ("REJECTED", "CANCELLED")) or (
                    not want_reject and m["state"] in ("REJECTED",)):
                details.append(f"match request {k}: seller's preference {a.preference}, ended {m['state']}")
    for k in auto_left:
        details.append(f"match request {k}: automatic answer not fired 2 min 20 s on")
    for k in left_requests:
        details.append(f"match request {k}: still PENDING 20 min on")
    for k in left_rfqs:
        details.append(f"RFQ {k}: still OPEN 20 min on")
    rfq_ended = collections.Counter(v.read(f"/api/rfqs/{k}", by_instrument[r["instrument_id"]].buyer)["state"]
                                    for k, r in before_rfqs.items())
    due = len(before_pending) + len(before_rfqs)
    fired = due - len(left_requests) - len([k for k in before_rfqs if k in left_rfqs])
    log(f"  timers: {len(before_pending)} pending match requests ({len(auto)} with an automatic answer), "
        f"{len(before_rfqs)} open RFQs; requests ended {dict(ended)}, RFQs {dict(rfq_ended)}")
    return due, fired, details, {"auto": len(auto), "auto_at_once": at_once, "auto_after_lease": after_lease}


def check_parents(v, workers, admin):
    """Every parent of every company: the counters add up and equal the children."""
    tokens = {}
    for a in workers:
        for t in (a.seller, a.buyer, a.lp_trader):
            me = v.read("/api/users/me", t)
            tokens.setdefault(me["company_id"], t)
    checked, broken = 0, []
    for token in tokens.values():
        for parent in all_items(v, "/api/parent-orders?state=ACTIVE,FILLED,CANCELLED", token):
            q = parent["quantities"]
            kids = all_items(v, f"/api/orders?parent_order_id={parent['parent_order_id']}", token)
            working = sum(o["quantity"] for o in kids if o["state"] in WORKING)
            matched = sum(o["quantity"] for o in kids if o["state"] in MATCHED)
            checked += 1
            problems = []
            if q["tradable"] + q["working"] + q["matched"] != parent["quantity"]:
                problems.append(f"tradable+working+matched {q['tradable'] + q['working'] + q['matched']} "
                                f"≠ quantity {parent['quantity']}")
            if q["tradable"] < 0:
                problems.append(f"tradable {q['tradable']} < 0")
            if q["working"] != working:
                problems.append(f"working {q['working']} ≠ children {working}")
            if q["matched"] != matched:
                problems.append(f"matched {q['matched']} ≠ children {matched}")
            if problems:
                broken.append(f"parent {parent['parent_order_id']}: " + "; ".join(problems))
    return checked, broken


def audit_index(rows):
    """(entity, operation, e-mail) → [(created_at seconds, row)], and (entity, operation, entity_id) → [row]."""
    by_actor = collections.defaultdict(list)
    by_entity = collections.defaultdict(list)
    for r in rows:
        email = (r.get("user") or {}).get("email")
        t = parse_ts(r["created_at"])
        by_actor[(r["entity"], r["operation"], email)].append((t, r))
        by_entity[(r["entity"], r["operation"], r.get("entity_id"))].append(r)
    for k in by_actor:
        by_actor[k].sort(key=lambda x: x[0])
    return by_actor, by_entity


def executions(w, by_actor, slack=0.0002):
    """The audit rows of one write: its user's rows of its kind inside its attempts' windows.
    A take writes one row per resting order hit, all at the same instant: one execution."""
    entity, operation = AUDIT[w.kind]
    rows = by_actor.get((entity, operation, w.user), [])
    found = []
    for start, end, _ in w.attempts:
        for t, r in rows:
            if start - slack <= t <= end + slack:
                found.append((t, r))
    if w.kind == "take":
        return sorted({t for t, _ in found})
    return sorted({r["action_log_id"] for _, r in found})


def check_writes(v, admin, broker, log):
    rows, total = all_pages(v, "/api/admin/action-logs?sort_by=created_at&order_by=ASC", admin)
    by_actor, by_entity = audit_index(rows)
    per_kind = collections.defaultdict(collections.Counter)
    lost, duplicated = [], []
    for w in v.writes:
        if w.kind not in AUDIT:
            continue
        c = per_kind[w.kind]
        c["writes"] += 1
        acked = w.answer is not None and w.answer.ok
        c["acknowledged"] += acked
        c["refused (4xx)"] += w.answer is not None and 400 <= w.answer.status < 500
        c["retried after a lost answer"] += w.lost_answers > 0
        c["resent after a refused connection"] += any(a[2] == "not-sent" for a in w.attempts)
        n = len(executions(w, by_actor))
        if n > 1 and w.kind in CREATES:
            c["duplicated"] += 1
            duplicated.append(f"{w.kind} {w.method} {w.path} key {w.key}: acted {n} times "
                              f"(attempts {[a[2] for a in w.attempts]})")
        elif n > 1:
            # A state change applied twice (an edit's retry sets the same values again): an
            # extra audit row and notification, not a second thing.
            c["re-applied"] += 1
        if n >= 1 and not acked:
            c["applied, answer lost then refused"] += 1
        if acked:
            entity, operation = AUDIT[w.kind]
            ok = n >= 1
            if w.kind in ("parent", "order", "rfq"):
                ok = ok and bool(by_entity.get((entity, operation, w.entity_id)))
            elif w.kind == "take":
                ok = ok and all(by_entity.get((entity, operation, i)) for i in w.entity_id)
            elif w.entity_id is not None:
                ok = ok and bool(by_entity.get((entity, operation, w.entity_id)))
            if not ok:
                c["lost"] += 1
                lost.append(f"{w.kind} {w.method} {w.path} key {w.key}: answered {w.answer.status}, no trace")
    log(f"  read {len(rows)} audit rows (total_items {total})")
    return per_kind, lost, duplicated


def check_entities(v, workers, log):
    """Every entity an acknowledged create returned can be read back by id."""
    missing = []
    tokens = {a.index: a for a in workers}
    for w in v.writes:
        if w.answer is None or not w.answer.ok or w.worker is None:
            continue
        a = tokens[w.worker]
        if w.kind == "parent":
            token = a.seller if w.user == a.seller_email else a.buyer
            paths = [(f"/api/parent-orders/{w.entity_id}", token)]
        elif w.kind == "order":
            paths = [(f"/api/orders/{w.entity_id}", a.seller)]
        elif w.kind == "take":
            paths = [(f"/api/order-match-requests/{i}", a.buyer) for i in w.entity_id]
        elif w.kind == "rfq":
            paths = [(f"/api/rfqs/{w.entity_id}", a.buyer)]
        else:
            continue
        for path, token in paths:
            gen = v.wait_up()
            try:
                ans = call(v.port, "GET", path, token=token)
            except (NotSent, AnswerLost):
                v.wait_after(gen)
                ans = call(v.port, "GET", path, token=token)
            if ans.status != 200:
                missing.append(f"{w.kind}: GET {path} answered {ans.status}")
    return missing


def check_confirmations(v, broker_thread):
    """Every acknowledged broker answer is the link's answer now."""
    lost, checked = [], 0
    for order_id, token, step, yes, w in broker_thread.confirmations:
        if w.answer is None or not w.answer.ok:
            continue
        checked += 1
        page = v.read(f"/api/orders/{order_id}/confirmation?token={token}&step={step}", None)
        if page.get("answer") is not yes:
            lost.append(f"{step} of order {order_id}: answered {yes} (acknowledged), the link says {page.get('answer')}")
    return checked, lost


def check_emails(v, sink, admin, log):
    """Each outbox row delivered at least once by Message-ID; re-deliveries counted apart."""
    items, _ = all_pages(v, "/api/admin/outbox", admin, size=200)
    unsent = [m for m in items if not m.get("sent_at")]
    received = collections.Counter(mid for _, mid, _ in sink.messages())
    outbox_ids = {m["message_id"] for m in items}
    never = [m for m in items if received[m["message_id"]] == 0]
    redelivered = {mid: n for mid, n in received.items() if n > 1}
    unknown = [mid for mid in received if mid not in outbox_ids]
    return {"outbox": len(items), "received": sum(received.values()), "distinct": len(received),
            "never": never, "unsent": unsent, "redelivered": redelivered, "unknown": unknown}


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    ap.add_argument("--cycles", type=int, default=200)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--bin", default=None, help="the upstairs binary (env UPSTAIRS_BIN; default target/release)")
    ap.add_argument("--pg-url", default=os.environ.get("UPSTAIRS_FAULTS_PG_URL", "postgres://postgres@127.0.0.1:5432"),
                    help="a PostgreSQL server (a fresh database is created in it and dropped)")
    ap.add_argument("--min-load", type=float, default=0.3, help="shortest load between two kills, s (0.3)")
    ap.add_argument("--max-load", type=float, default=1.5, help="longest load between two kills, s (1.5)")
    ap.add_argument("--request-timeout", type=float, default=30.0)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keep", action="store_true", help="keep the work folder (server log, e-mails, database)")
    args = ap.parse_args()
    args.bin = args.bin or default_bin(short=args.cycles <= 10)
    if not os.path.exists(args.bin):
        sys.exit(f"{args.bin} is missing (set UPSTAIRS_BIN or --bin)")
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    t0 = time.monotonic()

    def log(msg):
        print(f"[{time.monotonic() - t0:7.1f}s] {msg}", flush=True)

    wd = workdir(f"faults-kill9-{args.backend}-")
    version = subprocess_version(args.bin)
    log(f"kill9: {version} ({args.bin}), {args.backend}, {args.cycles} cycles, {args.workers} workers, seed {seed}, "
        f"work folder {wd}")
    db = sink = server = None
    failed = True
    try:
        db = Database(args.backend, wd, args.pg_url, tag="faults_kill9")
        sink = SmtpSink(os.path.join(wd, "sink"))
        clock_file = os.path.join(wd, "clock")
        move_clock(clock_file, 0)
        server = Server(args.bin, db, wd, smtp_port=sink.port, clock_file=clock_file)
        server.create_user("admin@faults.test", "upstairs-admin", "Upstairs", "Ada", "Admin")
        server.start()
        v = Venue(server, args)
        v.restart_times = []
        admin, broker_id, lp, workers = setup(v, server, args, rng)
        log(f"venue ready on port {server.port}: {len(workers)} instruments, sellers' preferences "
            f"{[a.preference for a in workers]}")
        threads = [Worker(v, a, rng.randrange(1 << 30)) for a in workers]
        broker = Broker(v, sink, rng.randrange(1 << 30))
        for t in threads + [broker]:
            t.start()
        cycles = killer(v, args, rng, log)
        v.stop.set()
        for t in threads:
            t.join(timeout=120)
        errors = [t.error for t in threads + [broker] if t.error]
        if errors:
            raise RuntimeError("a load thread failed:\n" + "\n".join(errors))
        log(f"load stopped after {cycles} cycles; {len(v.writes)} writes; checking timers")
        due, fired, timer_details, timer_figures = check_timers(v, workers, clock_file, log)
        # The broker's desk stops answering; whatever the outbox still holds goes out.
        broker.quit.set()
        broker.join(timeout=120)
        if broker.error:
            raise RuntimeError(broker.error)
        drain(v, sink, admin, log)
        log("checking writes, parents, confirmations, e-mails")
        per_kind, lost, duplicated = check_writes(v, admin, broker_id, log)
        missing = check_entities(v, workers, log)
        conf_checked, conf_lost = check_confirmations(v, broker)
        parents_checked, broken = check_parents(v, workers, admin)
        mail = check_emails(v, sink, admin, log)
        failed = report(args, v, cycles, per_kind, lost + missing + conf_lost, duplicated, conf_checked,
                        parents_checked, broken, due, fired, timer_details, timer_figures, mail, server)
    except Exception:
        traceback.print_exc()
        failed = True
    finally:
        if server:
            server.stop()
        if sink:
            sink.close()
        if db:
            db.close()
        if args.keep:
            print(f"work folder kept: {wd}")
        else:
            rmtree(wd)
    sys.exit(1 if failed else 0)


def drain(v, sink, admin, log, stall=60, cap=1800):
    """Waits until the sink has received as many distinct Message-IDs as the outbox holds,
    as long as delivery makes progress (no new message for `stall` s ends the wait)."""
    t = time.monotonic()
    total = v.read("/api/admin/outbox?size=1", admin)["total_items"]
    start_have = have = len({mid for _, mid, _ in sink.messages()})
    last_progress = time.monotonic()
    while have < total and time.monotonic() - last_progress < stall and time.monotonic() - t < cap:
        time.sleep(0.5)
        now_have = len({mid for _, mid, _ in sink.messages()})
        if now_have > have:
            have, last_progress = now_have, time.monotonic()
        total = v.read("/api/admin/outbox?size=1", admin)["total_items"]
    took = time.monotonic() - t
    log(f"  the broker stopped; {have} of {total} e-mails received, {have - start_have} of them in the "
        f"{took:.1f} s after the load ({(have - start_have) / max(took, 1e-9):.0f} a second with no load)")


def subprocess_version(binary):
    import subprocess
    return subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()


def report(args, v, cycles, per_kind, lost, duplicated, conf_checked, parents_checked, broken, due, fired,
           timer_details, timer_figures, mail, server):
    writes = [w for w in v.writes if w.kind != "preview"]
    acked = sum(1 for w in writes if w.answer is not None and w.answer.ok)
    retried = sum(1 for w in writes if w.lost_answers)
    resent = sum(1 for w in writes if any(a[2] == "not-sent" for a in w.attempts))
    n_dup = len(duplicated)
    rt = sorted(v.restart_times)
    print()
    print(f"## kill -9 fault run: {args.backend}, {cycles} cycles, {args.workers} workers")
    print()
    print("| figure | value |")
    print("|---|---:|")
    rows = [
        ("cycles (kill -9 + restart)", cycles),
        ("restart to /readyz, p50 / max", f"{rt[len(rt) // 2] * 1000:.0f} ms / {rt[-1] * 1000:.0f} ms" if rt else "-"),
        ("logical writes sent", len(writes)),
        ("writes acknowledged (2xx)", acked),
        ("writes refused (4xx, e.g. the order was taken meanwhile)",
         sum(1 for w in writes if w.answer is not None and 400 <= w.answer.status < 500)),
        ("writes retried after a lost answer (same key, same body)", retried),
        ("writes resent after a refused connection (never reached the server)", resent),
        ("reads", v.reads),
        ("**lost** (acknowledged, not there)", len(lost)),
        ("**duplicated** (a logical write acted twice)", n_dup),
        ("parent orders checked / invariant broken", f"{parents_checked} / {len(broken)}"),
        ("broker answers acknowledged and checked on their link", conf_checked),
        ("timers due at the end (match request and RFQ deadlines) / fired", f"{due} / {fired}"),
        ("automatic answers pending at the end / fired at once / after a killed process's lease",
         f"{timer_figures['auto']} / {timer_figures['auto_at_once']} / {timer_figures['auto_after_lease']}"),
        ("e-mails in the outbox / delivered at least once", f"{mail['outbox']} / {mail['outbox'] - len(mail['never'])}"),
        ("e-mails never delivered", len(mail["never"])),
        ("raw re-deliveries of a Message-ID (receivers dedupe)",
         f"{sum(n - 1 for n in mail['redelivered'].values())} (of {len(mail['redelivered'])} messages)"),
        ("e-mails received that are not in the outbox", len(mail["unknown"])),
        ("answers by status", ", ".join(f"{k}: {n}" for k, n in sorted(v.statuses.items()))),
    ]
    for k, val in rows:
        print(f"| {k} | {val} |")
    print()
    print("'retried': sent again after its answer was lost to a kill. 'applied, then refused': the lost "
          "attempt had acted, the retry was refused (409/422), so the client never saw its success. "
          "'re-applied': a state change that acted again on retry (same values).")
    print()
    print("| write | sent | acknowledged | refused | retried | duplicated | re-applied | applied, then refused | lost |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind in AUDIT:
        c = per_kind.get(kind)
        if not c:
            continue
        print(f"| {kind} | {c['writes']} | {c['acknowledged']} | {c['refused (4xx)']} | "
              f"{c['retried after a lost answer']} | {c['duplicated']} | {c['re-applied']} | "
              f"{c['applied, answer lost then refused']} | {c['lost']} |")
    confirms = [w for w in v.writes if w.kind.startswith("confirm_")]
    print(f"| broker link answers | {len(confirms)} | {sum(1 for w in confirms if w.answer and w.answer.ok)} | "
          f"{sum(1 for w in confirms if w.answer and 400 <= w.answer.status < 500)} | "
          f"{sum(1 for w in confirms if w.lost_answers)} | - | - | - | {len([x for x in lost if 'link says' in x])} |")
    print()
    for title, items in (("LOST", lost), ("DUPLICATED", duplicated), ("PARENT INVARIANT BROKEN", broken),
                         ("TIMERS", timer_details),
                         ("E-MAILS NEVER DELIVERED", [f"{m['message_id']} {m['kind']} to {m['to']}"
                                                      for m in mail["never"]]),
                         ("E-MAILS NOT SENT (outbox)", [f"{m['message_id']} attempts {m['attempts']} "
                                                        f"{m.get('last_error')}" for m in mail["unsent"]])):
        if items:
            print(f"{title} ({len(items)}):")
            for x in items[:15]:
                print(f"  - {x}")
            if len(items) > 15:
                print(f"  … and {len(items) - 15} more")
    refusals = collections.Counter(f"{w.kind} {w.answer.status}: {w.answer.detail()}" for w in v.writes
                                   if w.answer is not None and 400 <= w.answer.status < 500)
    if refusals:
        print(f"refusals (4xx; expected under this load: the state moved on meanwhile):")
        for k, n in refusals.most_common(12):
            print(f"  - {n} × {k}")
    defects = collections.Counter(f"{a}: {b}" for a, b in v.defects)
    if defects:
        print(f"SERVER-SIDE ANSWERS TO LOOK AT ({sum(defects.values())}):")
        for k, n in defects.most_common(15):
            print(f"  - {n} × {k}")
    errors = server.log_lines(r"ERROR|panicked")
    if errors:
        print(f"server log: {len(errors)} ERROR/panic lines, e.g.:")
        for line in errors[:8]:
            print(f"  {line[:300]}")
    failed = bool(lost or duplicated or broken or timer_details or mail["never"])
    print()
    print("RESULT:", "FAIL" if failed else "PASS",
          f"(lost {len(lost)}, duplicated {n_dup}, invariants broken {len(broken)}, timers not fired "
          f"{len(timer_details)}, e-mails never delivered {len(mail['never'])})")
    return failed


if __name__ == "__main__":
    main()
