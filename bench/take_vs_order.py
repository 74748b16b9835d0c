#!/usr/bin/env python3
"""A take beside an order write: sequential medians on one node (issue 27's acceptance).

Run through bench/run.sh (it builds the release binary):

    bench/run.sh take-vs-order postgres
    bench/run.sh take-vs-order sqlite --bin /path/to/another/upstairs   # the binary before

On a fresh database it makes through the API a broker, a responding and a taking firm, a
trader in each and one instrument. The responder answers match requests at once (its
auto-accept preference INSTANT) and rests one large SELL order; the taker opens a BUY
parent. Then, `--rounds` times, one after the other: the taker's one-lot order write
(`POST /api/orders`, resting below the offer) and its one-lot take of the offer
(`POST /api/order-match-requests`). Prints both medians and their ratio; to compare two
binaries, run it once with each in the same session. `--unanswered` leaves the responder
without its auto-accept: the take alone, with no accept running beside the next writes;
`--settled` waits (polling, outside the timings) for each take's accept before the next round.
It never asserts.
"""

import statistics
import sys
import tempfile
import time

import ratios as r


def main():
    ap = r.bench_args(__doc__, whole=True)
    ap.add_argument("--rounds", type=int, default=300, help="orders and takes, one after the other (300)")
    ap.add_argument("--unanswered", action="store_true", help="the responder does not accept at once")
    ap.add_argument("--settled", action="store_true",
                    help="each round waits (polling, untimed) until the take's accept is done")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as work, r.serving(args.bin, args.backend, args.pg_url, work) as (port, env):
        admin = r.sign_in(port, r.ADMIN)
        broker = r.create_broker(admin)["company_id"]
        r.create_firm(admin, "Responder", broker)
        r.create_firm(admin, "Taker", broker)
        instrument = r.create_instrument(admin, "Bench Dec26-Mar27", "Dec26-Mar27")
        responder = r.create_trader(args.bin, env, port, admin, "responder@bench.test", "Responder")
        taker = r.create_trader(args.bin, env, port, admin, "taker@bench.test", "Taker")
        me = r.expect(responder.call("GET", "/api/users/me"), 200, "users/me")
        if not args.unanswered:
            r.expect(responder.call("PATCH", f"/api/users/{me['user_id']}", {"auto_accept": "INSTANT"}), 200,
                     "auto-accept")

        def parent(trader, direction):
            body = {"direction": direction, "instrument_id": instrument, "quantity": 100_000_000}
            return r.expect(trader.call("POST", "/api/parent-orders", body), 201, "parent order")["parent_order_id"]

        def order(trader, parent_id, quantity, price):
            body = {"parent_order_id": parent_id, "quantity": quantity, "limit_price": price, "broker_id": broker,
                    "residual": True, "iceberg": False}
            return r.expect(trader.call("POST", "/api/orders", body), 201, "order")

        order(responder, parent(responder, "SELL"), 10_000_000, 95.0)
        buy = parent(taker, "BUY")
        take = {"requesting_parent_order_id": buy, "quantity": 1, "price": 95.0, "requesting_broker_id": broker,
                "dry_run": False, "residual": False}
        orders, takes = [], []
        for _ in range(args.rounds):
            started = time.perf_counter()
            order(taker, buy, 1, 94.0)
            orders.append(time.perf_counter() - started)
            started = time.perf_counter()
            sent = r.expect(taker.call("POST", "/api/order-match-requests", take), 201, "take")
            takes.append(time.perf_counter() - started)
            if args.settled and not args.unanswered:
                path = f"/api/order-match-requests/{sent[0]['order_match_request_id']}"
                deadline = time.monotonic() + 10
                while r.expect(taker.call("GET", path), 200, "request")["state"] == "PENDING":
                    if time.monotonic() > deadline:
                        raise SystemExit("the accept did not come within 10 s")
    o, t = statistics.median(orders) * 1000, statistics.median(takes) * 1000
    answered = "unanswered" if args.unanswered else "accepted at once" + (", settled" if args.settled else "")
    print(f"{args.backend}, {args.bin}, {args.rounds} rounds, takes {answered}: order write {o:.2f} ms, take {t:.2f} ms "
          f"(medians); take / order {t / o:.2f}")


if __name__ == "__main__":
    sys.exit(main())
