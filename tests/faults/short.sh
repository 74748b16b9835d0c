#!/usr/bin/env bash
# The fault suite's short run (about 40 s with the debug binary on 2 cores): kill -9 under
# mixed load, 5 cycles on SQLite and 5 on PostgreSQL, then a SQLite file that becomes
# read-only. Every part runs even when one fails; the exit status is non-zero if any did.
#
#   tests/faults/short.sh            # UPSTAIRS_BIN (default target/debug/upstairs), PYTHON (default .venv/bin/python)
#
# Needs root (chattr), PostgreSQL at 127.0.0.1:5432 with trust auth, and the test peers'
# Python (aiosmtpd): `make test-deps`.
set -u
cd "$(dirname "$0")/../.."
export UPSTAIRS_BIN="${UPSTAIRS_BIN:-target/debug/upstairs}"
PYTHON="${PYTHON:-.venv/bin/python}"
CYCLES="${FAULTS_SHORT_CYCLES:-5}"
status=0
started=$SECONDS
for backend in sqlite postgres; do
  "$PYTHON" tests/faults/kill9.py --backend "$backend" --cycles "$CYCLES" --max-load 1.0 || status=1
done
"$PYTHON" tests/faults/sqlite_disk.py --case read-only --rounds 1 || status=1
echo "fault suite (short): $((SECONDS - started)) s, $([ $status -eq 0 ] && echo PASS || echo FAIL)"
exit $status
