"""Shared pieces of the fault suite (tests/faults): an HTTP client that tells a request
that never reached the server from one whose answer was lost, the `upstairs serve`
process (start, kill -9, restart on the same database), fresh databases on both
backends, the SMTP sink of the test peers, and the venue's setup through the API.

Everything listens on 127.0.0.1 and every wait is a poll with a deadline.
"""

import contextlib
import email
import email.policy
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PEERS = os.path.join(ROOT, "tests", "peers")
PASSWORD = "Faults-Pass-2026"
DEFAULT_PG_URL = "postgres://postgres@127.0.0.1:5432"


def default_bin(short=False):
    rel = "target/debug/upstairs" if short else "target/release/upstairs"
    return os.environ.get("UPSTAIRS_BIN", os.path.join(ROOT, rel))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def poll(what, predicate, timeout, interval=0.05):
    """Calls `predicate` until it returns something truthy (returned) or `timeout` passes (raises)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:g} s")
        time.sleep(interval)


# ---------------------------------------------------------------- HTTP


class NotSent(Exception):
    """The connection was refused: the request never reached the server."""


class AnswerLost(Exception):
    """The request may have reached the server, but no answer came back."""


class Answer:
    __slots__ = ("status", "body", "headers", "elapsed")

    def __init__(self, status, body, headers, elapsed):
        self.status, self.body, self.headers, self.elapsed = status, body, headers, elapsed

    @property
    def ok(self):
        return 200 <= self.status < 300

    def detail(self):
        if isinstance(self.body, dict):
            return self.body.get("detail") or self.body.get("title") or json.dumps(self.body)[:200]
        return str(self.body)[:200]

    def __repr__(self):
        return f"{self.status} {self.detail() if not self.ok else ''}".strip()


def call(port, method, path, body=None, token=None, key=None, timeout=30.0, headers=None):
    """One request on a new connection (so that a kill can only cut what is in flight).

    Raises NotSent when the connection is refused, AnswerLost when it broke or timed out
    after the request could have been sent."""
    h = {"content-type": "application/json", "accept": "application/json"}
    if token:
        h["authorization"] = f"Bearer {token}"
    if key:
        h["idempotency-key"] = key
    if headers:
        h.update(headers)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    started = time.monotonic()
    try:
        try:
            conn.connect()
        except (ConnectionRefusedError, ConnectionResetError) as e:
            raise NotSent(str(e)) from e
        except socket.timeout as e:
            raise NotSent(f"connect timed out: {e}") from e
        try:
            conn.request(method, path, body=None if body is None else json.dumps(body), headers=h)
            res = conn.getresponse()
            data = res.read()
        except (OSError, http.client.HTTPException) as e:
            raise AnswerLost(f"{type(e).__name__}: {e}") from e
        elapsed = time.monotonic() - started
        ctype = res.getheader("content-type", "") or ""
        parsed = data.decode("utf-8", "replace")
        if data and "json" in ctype:
            try:
                parsed = json.loads(data)
            except ValueError:
                pass
        return Answer(res.status, parsed, {k.lower(): v for k, v in res.getheaders()}, elapsed)
    finally:
        conn.close()


def expect(answer, want, what):
    if answer.status != want:
        raise RuntimeError(f"{what}: expected {want}, got {answer.status}: {answer.body}")
    return answer.body


# ---------------------------------------------------------------- databases


def psql(url, sql, capture=False):
    out = subprocess.run(["psql", url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-c", sql], check=True,
                         capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PGOPTIONS="-c client_min_messages=warning"))
    return out.stdout.strip() if capture else None


class Database:
    """A fresh database: a SQLite file in `workdir`, or a new PostgreSQL database (dropped at close)."""

    def __init__(self, backend, workdir, pg_url=DEFAULT_PG_URL, tag="faults"):
        self.backend = backend
        self.pg_url = pg_url.rstrip("/")
        self.name = None
        if backend == "sqlite":
            self.path = os.path.join(workdir, "upstairs.db")
            self.url = f"sqlite://{self.path}"
        else:
            base = self.pg_url.rsplit("/", 1)[0] if self.pg_url.count("/") > 2 else self.pg_url
            self.admin_url = f"{base}/postgres"
            self.name = f"{tag}_{os.getpid()}_{int(time.time())}"
            psql(self.admin_url, f"create database {self.name}")
            self.url = f"{base}/{self.name}"

    def close(self):
        if self.name:
            with contextlib.suppress(Exception):
                psql(self.admin_url, f"drop database if exists {self.name} with (force)")
            self.name = None


# ---------------------------------------------------------------- the server


class Server:
    """`upstairs serve --always-open` on one port and one database; kill -9 and restart."""

    def __init__(self, binary, db, workdir, smtp_port=None, clock_file=None, extra_env=None, port=None):
        self.binary = binary
        self.db = db
        self.workdir = workdir
        self.port = port or free_port()
        self.proc = None
        self.starts = 0
        self.log_path = os.path.join(workdir, "server.log")
        self.env = dict(os.environ, UPSTAIRS_DATABASE_URL=db.url, UPSTAIRS_MAIL_DIR=os.path.join(workdir, "mail"),
                        UPSTAIRS_WEB_DIR=os.path.join(workdir, "web"), UPSTAIRS_ALWAYS_OPEN="true",
                        UPSTAIRS_PUBLIC_URL=f"http://127.0.0.1:{self.port}",
                        # No metrics address: the default (127.0.0.1:9464) is one for every run.
                        UPSTAIRS_METRICS_BIND="off",
                        RUST_LOG=os.environ.get("RUST_LOG", "warn"))
        self.env.pop("UPSTAIRS_SMTP_URL", None)
        if smtp_port:
            self.env["UPSTAIRS_SMTP_URL"] = f"smtp://127.0.0.1:{smtp_port}"
        if clock_file:
            self.env["UPSTAIRS_CLOCK_FILE"] = clock_file
        if extra_env:
            self.env.update(extra_env)

    def cli(self, *args, stdin=None):
        return subprocess.run([self.binary, *args], env=self.env, check=True, capture_output=True, text=True,
                              input=stdin, timeout=60)

    def create_user(self, email, role, company, first="Fault", last="Tester"):
        self.cli("user", "create", "--email", email, "--password-file", "-", "--role", role, "--company", company,
                 "--first-name", first, "--last-name", last, stdin=PASSWORD + "\n")

    def start(self, timeout=60):
        self.starts += 1
        with open(self.log_path, "a") as log:
            log.write(f"\n===== start {self.starts} at {time.strftime('%H:%M:%S')} =====\n")
            log.flush()
            self.proc = subprocess.Popen([self.binary, "serve", "--bind", f"127.0.0.1:{self.port}", "--always-open"],
                                         env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        self.wait_ready(timeout)

    def ready(self):
        try:
            return call(self.port, "GET", "/readyz", timeout=5).status == 200
        except (NotSent, AnswerLost):
            return False

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while not self.ready():
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited ({self.proc.returncode}); see {self.log_path}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"the server was not ready within {timeout} s; see {self.log_path}")
            time.sleep(0.02)

    def kill9(self):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill9()

    def last_start_lines(self):
        """The log of the latest start only."""
        try:
            with open(self.log_path, errors="replace") as f:
                text = f.read()
        except OSError:
            return []
        text = re.sub(r"\x1b\[[0-9;]*m", "", text)
        return text.rsplit("===== start ", 1)[-1].splitlines()[1:]

    def log_lines(self, pattern):
        try:
            with open(self.log_path, errors="replace") as f:
                lines = [re.sub(r"\x1b\[[0-9;]*m", "", line.rstrip("\n")) for line in f]
            return [line for line in lines if re.search(pattern, line)]
        except OSError:
            return []


# ---------------------------------------------------------------- SMTP


class SmtpSink:
    """tests/peers/smtp_sink.py: a real SMTP server keeping each message as a file."""

    def __init__(self, out_dir):
        self.out_dir = out_dir
        os.makedirs(out_dir, exist_ok=True)
        try:
            import aiosmtpd  # noqa: F401
        except ImportError:
            sys.exit("aiosmtpd is missing: run with the test peers' Python (make test-deps: .venv/bin/python)")
        self.proc = subprocess.Popen([sys.executable, os.path.join(PEERS, "smtp_sink.py"), out_dir],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("READY "):
            raise RuntimeError(f"smtp sink did not start: {line!r}")
        self.port = int(line.split()[1])
        self._seen = {}
        self._lock = threading.Lock()

    def messages(self):
        """Every message received so far: [(file name, Message-ID, parsed message)], in arrival order."""
        with self._lock:
            for name in sorted(os.listdir(self.out_dir)):
                if not name.startswith("msg-") or name in self._seen:
                    continue
                with open(os.path.join(self.out_dir, name), "rb") as f:
                    msg = email.message_from_binary_file(f, policy=email.policy.default)
                self._seen[name] = (name, (msg.get("Message-ID") or "").strip(), msg)
            return [self._seen[k] for k in sorted(self._seen)]

    def close(self):
        if self.proc.poll() is None:
            with contextlib.suppress(Exception):
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def body_text(msg):
    """The text of a message (every text part), links included."""
    parts = []
    for part in msg.walk():
        if part.get_content_type() in ("text/plain", "text/html"):
            with contextlib.suppress(Exception):
                parts.append(part.get_content())
    return "\n".join(parts)


def broker_links(text, path):
    """(order_id, token, answer flag name) of every `path` link in an e-mail text."""
    out = []
    for m in re.finditer(re.escape(path) + r"\?order_id=([0-9a-f-]{36})&(?:amp;)?token=([0-9A-Za-z_-]+)", text):
        out.append((m.group(1), m.group(2)))
    return list(dict.fromkeys(out))


# ---------------------------------------------------------------- the venue


def login(port, email_addr):
    return expect(call(port, "POST", "/api/auth/login", {"email": email_addr, "password": PASSWORD,
                                                          "rememberMe": True}), 200, f"login {email_addr}")["token"]


def admin_token(server):
    server.create_user("admin@faults.test", "upstairs-admin", "Upstairs", "Ada", "Admin")
    return login(server.port, "admin@faults.test")


def workdir(prefix):
    return tempfile.mkdtemp(prefix=prefix)


def rmtree(path):
    shutil.rmtree(path, ignore_errors=True)


def new_key():
    return str(uuid.uuid4())
