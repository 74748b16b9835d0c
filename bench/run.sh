#!/usr/bin/env bash
# Upstairs performance as ratios in one run: bench/run.sh sqlite | postgres [ratios.py options],
# bench/run.sh take-latency sqlite | postgres [take_latency.py options], or
# bench/run.sh take-vs-order sqlite | postgres [take_vs_order.py options] (a take the responder
# accepts at once beside an order write, sequential medians), or
# bench/run.sh admin sqlite | postgres [admin_area.py options] (the Orders panel and billing
# over 100,000 child orders and 20,000 matches), bench/run.sh logins sqlite | postgres
# (200 parallel sign-ins: the server's memory and another user's answers meanwhile), or
# bench/run.sh fix-latency sqlite | postgres (a match to the broker's TradeCaptureReport,
# beside its e-mail), or bench/run.sh stomp-capacity sqlite | postgres [stomp_capacity.py options]
# (the server's memory per idle STOMP session, and a book push's fan-out p99 beside a raw
# WebSocket broadcast), or bench/run.sh capacity postgres [capacity.py options] (mixed load
# on one node, then twice and four times that rate over two nodes), or
# bench/run.sh md-latency sqlite | postgres [md_latency.py options] (a provider's price over
# FIX to the book frame, beside a WebSocket round trip, and the price updates a second one
# node takes for 100 instruments with p99 under 50 ms), or
# bench/run.sh md-browser sqlite | postgres [md_browser.mjs options] (a provider's price to the
# changed ladder in another firm's Chromium session, beside a STOMP round trip from that page;
# node, web/dist (built when missing) and Debian's chromium, as the browser tests use), or
# bench/run.sh order-cpu sqlite | postgres [order_cpu.py options] (the CPU one POST /api/orders
# costs the node and the database; `--bin A --bin B` compares builds in alternation)
#
# Installs wrk (and pgbench for postgres) from Debian when missing, builds the release
# binary (unless UPSTAIRS_BIN names another build), then runs bench/ratios.py: the
# database's own single-row insert ceiling, then wrk at 16 connections for 10 s per call
# against `upstairs serve` on a fresh database, with an empty book and with 10,000
# resting orders. Loopback only, bounded in time, never part of `make test`.
#
#   bench/run.sh sqlite
#   bench/run.sh postgres                      # UPSTAIRS_TEST_POSTGRES_URL, default
#                                              # postgres://postgres@127.0.0.1:5432/test
#   UPSTAIRS_BIN=/path/to/upstairs bench/run.sh sqlite --duration 5 --keep
set -euo pipefail

script=ratios
case "${1:-}" in
  take-latency) script=take_latency ;;
  take-vs-order) script=take_vs_order ;;
  admin) script=admin_area ;;
  logins) script=logins ;;
  fix-latency) script=fix_latency ;;
  stomp-capacity) script=stomp_capacity ;;
  capacity) script=capacity ;;
  md-latency) script=md_latency ;;
  md-browser) script=md_browser ;;
  order-cpu) script=order_cpu ;;
esac
[ "$script" = ratios ] || shift
backend=${1:-}
case "$backend" in
  sqlite | postgres) shift ;;
  *) echo "usage: bench/run.sh [take-latency|take-vs-order|admin|logins|fix-latency|stomp-capacity|capacity|md-latency|md-browser|order-cpu] sqlite|postgres [options of bench/ratios.py, take_latency.py, take_vs_order.py, admin_area.py, logins.py, fix_latency.py, stomp_capacity.py, capacity.py, md_latency.py, md_browser.mjs or order_cpu.py]" >&2
     exit 2 ;;
esac
cd "$(dirname "$0")/.."

apt_install() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

# md_latency and md_browser use neither wrk nor pgbench (only psql, for their fresh schema).
no_wrk=false
case "$script" in md_latency | md_browser) no_wrk=true ;; esac
$no_wrk || command -v wrk >/dev/null || { echo "installing wrk"; apt_install wrk; }
if [ "$backend" = postgres ]; then
  command -v psql >/dev/null || { echo "installing postgresql-client"; apt_install postgresql-client; }
  # Debian ships pgbench with the server package (postgresql-contrib depends on it).
  $no_wrk || command -v pgbench >/dev/null ||
    { echo "installing pgbench (postgresql-contrib)"; apt_install postgresql-contrib; }
fi

if [ -z "${UPSTAIRS_BIN:-}" ]; then
  cargo build --release -p upstairs
  export UPSTAIRS_BIN=${CARGO_TARGET_DIR:-target}/release/upstairs
fi

if [ "$script" = take_latency ]; then
  # The STOMP side uses websocket-client from the test peers' venv.
  [ -x .venv/bin/python ] && .venv/bin/python -c 'import websocket' 2>/dev/null || make -s .venv/.installed
  exec .venv/bin/python bench/take_latency.py "$backend" --bin "$UPSTAIRS_BIN" "$@"
fi
if [ "$script" = fix_latency ]; then
  # QuickFIX and aiosmtpd come from the test peers' venv.
  [ -x .venv/bin/python ] && .venv/bin/python -c 'import quickfix, aiosmtpd' 2>/dev/null || make -s .venv/.installed
  exec .venv/bin/python bench/fix_latency.py "$backend" --bin "$UPSTAIRS_BIN" "$@"
fi
if [ "$script" = md_latency ]; then
  # The provider (tests/peers/md_provider.py) needs QuickFIX, the STOMP side websocket-client,
  # the WebSocket relay (stomp_capacity.py's raw server) websockets: the test peers' venv.
  [ -x .venv/bin/python ] && .venv/bin/python -c 'import quickfix, websocket, websockets' 2>/dev/null ||
    make -s .venv/.installed
  exec .venv/bin/python bench/md_latency.py "$backend" --bin "$UPSTAIRS_BIN" "$@"
fi
if [ "$script" = md_browser ]; then
  # The provider needs QuickFIX from the test peers' venv; the browser side is the web app's
  # own: its node_modules (playwright-core), its build (web/dist, served by the venue) and
  # Debian's chromium (web/e2e/ensure-chromium.mjs installs it when missing, as root).
  [ -x .venv/bin/python ] && .venv/bin/python -c 'import quickfix' 2>/dev/null || make -s .venv/.installed
  [ -d web/node_modules/playwright-core ] || (cd web && npm ci --no-audit --no-fund)
  [ -f web/dist/index.html ] || (cd web && npm run -s build)
  node web/e2e/ensure-chromium.mjs
  exec node bench/md_browser.mjs "$backend" --bin "$UPSTAIRS_BIN" "$@"
fi
if [ "$script" = capacity ]; then
  # The load generator is a Rust client of its own (bench/load).
  if [ -z "${UPSTAIRS_LOAD_BIN:-}" ]; then
    cargo build --release -p upstairs-load
    UPSTAIRS_LOAD_BIN=${CARGO_TARGET_DIR:-target}/release/upstairs-load
  fi
  exec python3 bench/capacity.py "$backend" --bin "$UPSTAIRS_BIN" --load-bin "$UPSTAIRS_LOAD_BIN" "$@"
fi
if [ "$script" = stomp_capacity ]; then
  # websockets (asyncio, thousands of sockets in one process) comes from the test peers' venv.
  [ -x .venv/bin/python ] && .venv/bin/python -c 'import websockets, websocket' 2>/dev/null || make -s .venv/.installed
  exec .venv/bin/python bench/stomp_capacity.py "$backend" --bin "$UPSTAIRS_BIN" "$@"
fi
if [ "$script" = order_cpu ] && [[ " $* " == *" --bin "* ]]; then
  exec python3 bench/order_cpu.py "$backend" "$@"   # the builds named, not this one
fi
exec python3 "bench/$script.py" "$backend" --bin "$UPSTAIRS_BIN" "$@"
