# The two commands: `make run` (build everything, start the demo venue on
# http://localhost:8080) and `make test` (every test). See README.md.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
CARGO ?= cargo
PYTHON ?= python3
VENV := .venv
export UPSTAIRS_TEST_POSTGRES_URL ?= postgres://postgres@127.0.0.1:5432/test
export UPSTAIRS_TEST_PYTHON ?= $(CURDIR)/$(VENV)/bin/python
export CARGO_TERM_COLOR ?= never

.PHONY: run test test-deps rust-checks rust-test contract web-deps web-build web-test e2e openapi check-openapi postgres chromium clean

## make run: build the server (release) and the web app, start the demo venue.
run: web-build
	$(CARGO) build --release -p upstairs
	UPSTAIRS_WEB_DIR=web/dist ./target/release/upstairs demo --bind $${UPSTAIRS_BIND:-127.0.0.1:8080} \
		--fix-bind $${UPSTAIRS_FIX_BIND:-127.0.0.1:9878}

## make test: everything, on SQLite and PostgreSQL, then the web app and Chromium. The
## web app's tests and Chromium run alone (they wait on real time and would be starved on
## two cores); then the Rust suites and the fault suite's short run go side by side with
## the contract fuzzing (time-bounded, and it waits on the server), each line of their
## output marked with its lane. Each of these targets also runs alone (`make rust-test`,
## `make e2e`, ...).
test: test-deps rust-checks rust-build
	@echo "== $$(date +%T) web-test"
	$(MAKE) --no-print-directory web-test
	@echo "== $$(date +%T) check-openapi"
	$(MAKE) --no-print-directory check-openapi
	@echo "== $$(date +%T) e2e"
	$(MAKE) --no-print-directory e2e
	@echo "== $$(date +%T) rust lane and contract"
	@( $(MAKE) --no-print-directory rust-lane 2>&1 | sed -u 's/^/[rust] /' ) & rust=$$!; \
	  ( $(MAKE) --no-print-directory contract 2>&1 | sed -u 's/^/[contract] /' ) & contract=$$!; \
	  r=0; wait $$rust || r=$$?; c=0; wait $$contract || c=$$?; \
	  echo "== $$(date +%T) rust lane exit $$r, contract exit $$c"; test $$r -eq 0 -a $$c -eq 0

.PHONY: rust-build rust-lane
rust-build:
	@echo "== $$(date +%T) rust-build"
	$(CARGO) test --workspace --no-run -q
	$(CARGO) build -q -p upstairs

rust-lane:
	$(MAKE) --no-print-directory rust-test
	@echo "== $$(date +%T) faults-short"
	$(MAKE) --no-print-directory faults-short

test-deps: $(VENV)/.installed web/node_modules/.installed postgres chromium

$(VENV)/.installed: tests/peers/requirements.txt tests/contract/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r tests/peers/requirements.txt -r tests/contract/requirements.txt
	touch $@

web/node_modules/.installed: web/package-lock.json
	cd web && npm ci --no-audit --no-fund
	touch $@

web-deps: web/node_modules/.installed

# PostgreSQL runs on CI and on these machines; start the local cluster if it is down.
postgres:
	@if ! pg_isready -q -h 127.0.0.1 -p 5432; then \
	  echo "starting PostgreSQL"; \
	  pg_ctlcluster --skip-systemctl-redirect $$(ls /etc/postgresql | head -n1) main start; \
	  for i in $$(seq 100); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.1; done; \
	fi
	@pg_isready -h 127.0.0.1 -p 5432

chromium:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

rust-checks:
	@echo "== $$(date +%T) rust-checks"
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

rust-test:
	$(CARGO) test --workspace

## make contract: schemathesis fuzzes the whole OpenAPI document against the real binary
## (demo data, fresh SQLite) as the venue admin and as a trader; any 5xx or contract
## failure fails. CONTRACT_SECONDS bounds each of the two runs.
CONTRACT_SECONDS ?= 70
contract: $(VENV)/.installed
	$(CARGO) build -q -p upstairs
	$(VENV)/bin/python tests/contract/run.py $${CARGO_TARGET_DIR:-target}/debug/upstairs --max-time $(CONTRACT_SECONDS)

## The OpenAPI document the web app's types come from must match the server.
openapi:
	$(CARGO) run -q -p upstairs -- openapi > web/openapi.json
	cd web && npm run gen:api

check-openapi: web-deps
	$(CARGO) build -q -p upstairs
	@./target/debug/upstairs openapi | diff -u web/openapi.json - \
	  || { echo "web/openapi.json is stale: run 'make openapi' and commit"; exit 1; }
	cd web && npm run check:api

web-build: web-deps
	cd web && npm run build

web-test: web-deps
	cd web && npm run lint && npm run typecheck && npm test

e2e: web-build $(VENV)/.installed
	$(CARGO) build -q -p upstairs
	cd web && UPSTAIRS_BIN=$(CURDIR)/target/debug/upstairs npm run e2e

clean:
	rm -rf target web/dist data $(VENV) web/node_modules

## make bench: performance ratios measured in one run, SQLite then PostgreSQL (wrk; never part of `make test`).
.PHONY: bench
bench: postgres
	bench/run.sh sqlite
	bench/run.sh postgres

## make faults-short: the fault suite's short run (tests/faults/short.sh, debug binary, under
## a minute): kill -9 under mixed load, 5 cycles per backend, and a read-only SQLite file.
## make faults: the long run (tests/faults/long.sh, release binary, about 20 minutes): 200
## kill -9 cycles per backend, PostgreSQL restarted under load (it stops the local cluster
## for a few seconds), a read-only and a full SQLite disk. Both need root. See tests/faults/.
.PHONY: faults faults-short
faults-short: $(VENV)/.installed postgres
	$(CARGO) build -q -p upstairs
	UPSTAIRS_BIN=$${CARGO_TARGET_DIR:-target}/debug/upstairs PYTHON=$(VENV)/bin/python tests/faults/short.sh

faults: $(VENV)/.installed postgres
	$(CARGO) build -q --release -p upstairs
	UPSTAIRS_BIN=$${CARGO_TARGET_DIR:-target}/release/upstairs PYTHON=$(VENV)/bin/python tests/faults/long.sh
