#!/usr/bin/env python3
"""A real SMTP server (aiosmtpd) for tests: keeps every message it receives as a file.

Usage: smtp_sink.py OUT_DIR [--auth USER:PASSWORD] [--reject-first N]

- Listens on 127.0.0.1 on a free port chosen by the OS and prints `READY <port>` on
  stdout (flushed) once it accepts connections.
- Each message received is written to OUT_DIR as `msg-<n>.eml`: the raw content as
  received, preceded by `X-Sink-Mail-From:`, one `X-Sink-Rcpt-To:` per recipient and,
  when the client authenticated, `X-Sink-Auth-Login:` (as an MTA prepends Return-Path).
  Files are written to a temporary name and renamed, so readers never see a partial one.
- With --auth, AUTH PLAIN/LOGIN is offered without TLS and required before MAIL.
- With --reject-first N, the first N messages are answered `451 4.3.0 Try again later`
  (a temporary failure the sender must retry) and kept as `rejected-<n>.eml`.
- Exits when its stdin closes, so a test process that dies never leaves it running.
"""

import argparse
import asyncio
import itertools
import logging
import os
import sys
import threading
import warnings

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword


class Sink:
    """aiosmtpd handler that stores each message as a file."""

    def __init__(self, out_dir: str, reject_first: int = 0) -> None:
        self.out_dir = out_dir
        self.counter = itertools.count(1)
        self.rejected = itertools.count(1)
        self.reject_left = reject_first

    async def handle_DATA(self, server, session, envelope) -> str:
        rejecting = self.reject_left > 0
        if rejecting:
            self.reject_left -= 1
            n, prefix = next(self.rejected), "rejected"
        else:
            n, prefix = next(self.counter), "msg"
        head = [f"X-Sink-Mail-From: {envelope.mail_from}"]
        head += [f"X-Sink-Rcpt-To: {rcpt}" for rcpt in envelope.rcpt_tos]
        if session.authenticated and isinstance(session.auth_data, LoginPassword):
            login = session.auth_data.login.decode("utf-8", "replace")
            head.append(f"X-Sink-Auth-Login: {login}")
        raw = envelope.original_content or b""
        data = ("\r\n".join(head) + "\r\n").encode() + raw
        final = os.path.join(self.out_dir, f"{prefix}-{n:04d}.eml")
        tmp = os.path.join(self.out_dir, f".{prefix}-{n:04d}.tmp")
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, final)
        return "451 4.3.0 Try again later" if rejecting else "250 OK"


def make_authenticator(user: str, password: str):
    def authenticate(server, session, envelope, mechanism, auth_data):
        ok = (
            isinstance(auth_data, LoginPassword)
            and auth_data.login == user.encode()
            and auth_data.password == password.encode()
        )
        if not ok:
            # handled=False: aiosmtpd answers 535 itself (True would leave the client waiting).
            return AuthResult(success=False, handled=False)
        # auth_data becomes session.auth_data, which handle_DATA reports.
        return AuthResult(success=True, auth_data=auth_data)

    return authenticate


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--auth", help="USER:PASSWORD required from clients")
    parser.add_argument("--reject-first", type=int, default=0, help="answer 451 to the first N messages")
    args = parser.parse_args()
    # Plain-text AUTH is deliberate here (loopback only); keep test output quiet.
    warnings.filterwarnings("ignore", module="aiosmtpd")
    logging.getLogger("mail.log").setLevel(logging.ERROR)
    os.makedirs(args.out_dir, exist_ok=True)

    loop = asyncio.get_running_loop()
    handler = Sink(args.out_dir, args.reject_first)
    kwargs = {}
    if args.auth:
        user, _, password = args.auth.partition(":")
        kwargs = dict(
            authenticator=make_authenticator(user, password),
            auth_required=True,
            auth_require_tls=False,
        )

    server = await loop.create_server(
        lambda: SMTP(handler, hostname="smtp-sink.test", loop=loop, **kwargs),
        host="127.0.0.1",
        port=0,
    )
    port = server.sockets[0].getsockname()[1]

    stdin_closed = asyncio.Event()

    def watch_stdin() -> None:
        try:
            while sys.stdin.buffer.read(4096):
                pass
        finally:
            loop.call_soon_threadsafe(stdin_closed.set)

    threading.Thread(target=watch_stdin, daemon=True).start()

    print(f"READY {port}", flush=True)
    await stdin_closed.wait()
    server.close()
    await server.wait_closed()


if __name__ == "__main__":
    asyncio.run(main())
