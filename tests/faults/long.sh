#!/usr/bin/env bash
# The fault suite's long run (release binary; about 20 minutes on 2 cores): kill -9 under
# mixed load, 200 cycles per backend; PostgreSQL restarted under load (it stops the
# machine's cluster for a few seconds: every other client of it is cut off too); a SQLite
# file that becomes read-only, and one whose disk fills up. Every part runs even when one
# fails; the exit status is non-zero if any did.
#
#   tests/faults/long.sh             # UPSTAIRS_BIN (default target/release/upstairs), PYTHON, FAULTS_CYCLES (200)
set -u
cd "$(dirname "$0")/../.."
export UPSTAIRS_BIN="${UPSTAIRS_BIN:-target/release/upstairs}"
PYTHON="${PYTHON:-.venv/bin/python}"
CYCLES="${FAULTS_CYCLES:-200}"
status=0
started=$SECONDS
for backend in sqlite postgres; do
  "$PYTHON" tests/faults/kill9.py --backend "$backend" --cycles "$CYCLES" || status=1
done
"$PYTHON" tests/faults/pg_restart.py --outage 5 || status=1
"$PYTHON" tests/faults/sqlite_disk.py --case both || status=1
echo "fault suite (long): $((SECONDS - started)) s, $([ $status -eq 0 ] && echo PASS || echo FAIL)"
exit $status
