#!/usr/bin/env python3
"""Fuzzes the whole OpenAPI document with schemathesis against the real binary.

Starts `upstairs demo` on a fresh SQLite database in a temporary folder on a free port,
waits for /healthz (with a deadline), signs in as the venue admin and as a trader, and runs
schemathesis with every check once per session, each with a bearer token made here (so the
fuzzer never signs in with a real account and cannot lock it out). Any 5xx or contract
failure fails the run. Every operation is fuzzed except the short list in EXCLUDED, and every
counted whole number (quantities, multipliers, pages, sizes) also at its edges (hooks.py).

Usage: run.py [path/to/upstairs] [--max-time SECONDS per session]
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEMO_PASSWORD = "Upstairs-Demo-1"
# (name, e-mail, [(method, path, why)]): the sessions fuzzed, and the operations left out of
# each. Only calls that would end the run's own session belong here; each has its own tests.
SIGN_OUT = ("DELETE", "/api/auth/session", "signs the fuzzer out (tests/api.rs covers it)")
SESSIONS = [
    (
        "admin",
        "admin@upstairs.demo",
        [SIGN_OUT, ("PATCH", "/api/users/{id}", "the admin may deactivate itself, ending its session (tests/api.rs)")],
    ),
    ("trader", "trader1@halyard.demo", [SIGN_OUT]),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(base: str, server: subprocess.Popen, deadline_s: float) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if server.poll() is not None:
            sys.exit(f"upstairs exited with {server.returncode} before it was healthy")
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    sys.exit(f"upstairs was not healthy within {deadline_s} s")


def login(base: str, email: str) -> str:
    body = json.dumps({"email": email, "password": DEMO_PASSWORD, "rememberMe": False}).encode()
    req = urllib.request.Request(
        f"{base}/api/auth/login", data=body, headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)["token"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("binary", nargs="?", default=str(ROOT / "target/debug/upstairs"))
    ap.add_argument("--max-time", type=int, default=80, help="seconds of fuzzing per session")
    args = ap.parse_args()
    st = shutil.which("schemathesis", path=str(Path(sys.executable).parent)) or "schemathesis"

    with tempfile.TemporaryDirectory(prefix="upstairs-contract-") as tmp:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        env = dict(
            os.environ,
            UPSTAIRS_DATABASE_URL=f"sqlite://{tmp}/db.sqlite",
            UPSTAIRS_MAIL_DIR=f"{tmp}/mail",
            UPSTAIRS_WEB_DIR=f"{tmp}/no-web",
            # No metrics address: it may run beside other servers, and 127.0.0.1:9464 is one.
            UPSTAIRS_METRICS_BIND="off",
            RUST_LOG=os.environ.get("RUST_LOG", "warn"),
        )
        log = open(f"{tmp}/server.log", "w")
        server = subprocess.Popen(
            [args.binary, "demo", "--bind", f"127.0.0.1:{port}"], env=env, stdout=log, stderr=subprocess.STDOUT
        )
        failed = False
        try:
            wait_healthy(base, server, 30)
            for name, email, excluded in SESSIONS:
                token = login(base, email)
                cmd = [
                    st, "--config-file", str(HERE / "schemathesis.toml"),
                    "run", f"{base}/api/openapi.json",
                    "--url", base,
                    "--checks", "all",
                    # Every DELETE here cancels; schemathesis.toml says why.
                    "--exclude-checks", "use_after_free",
                    "--max-time", str(args.max_time),
                    "--seed", "1",
                    "-H", f"Authorization: Bearer {token}",
                ]
                for method, path, _why in excluded:
                    cmd += ["--exclude-name", f"{method} {path}"]
                print(f"== schemathesis as {name} ({email})", flush=True)
                started = time.monotonic()
                # hooks.py: the edges of every counted whole number (issue 26).
                fuzz_env = dict(os.environ, SCHEMATHESIS_HOOKS="hooks", PYTHONPATH=str(HERE))
                rc = subprocess.call(cmd, cwd=tmp, env=fuzz_env)
                print(f"== {name}: exit {rc} after {time.monotonic() - started:.0f} s", flush=True)
                failed |= rc != 0
        finally:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
            log.close()
            if failed:
                print("---- server log (tail)")
                print("".join(open(f"{tmp}/server.log").readlines()[-40:]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
