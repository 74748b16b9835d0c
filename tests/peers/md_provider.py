#!/usr/bin/env python3
"""A real FIX 4.4 acceptor (QuickFIX, the quickfix-ssl wheel) playing a market-data provider.

Usage: md_provider.py --port N --sender PROVIDER --target UPSTAIRS-MD --store DIR
                      [--password P] [--heartbeat 30] [--tls --cert FILE --key FILE]

Accepts the venue's market-data session (an initiator) on port N as SenderCompID
--sender for TargetCompID --target, FIX.4.4, validated against the wheel's own
FIX44.xml. QuickFIX 1.15.1 has no setting for the listening address: it listens on
every interface, and the venue connects to 127.0.0.1:N. ResetOnLogon=Y: every
connection starts at sequence number 1 (the venue's Logon should carry 141=Y). The
QuickFIX FileStore is in DIR, its log of the wire in DIR/log. An acceptor heartbeats
at the interval in the venue's Logon (108); --heartbeat only fills QuickFIX's setting.
With --password, a Logon whose Password (554) is missing or differs is refused: it is
answered with a Logout (58 "wrong password") and the connection is closed, as QuickFIX
does for a RejectLogon. (Raising fix.RejectLogon from Python aborts the process with this
wheel, "terminate called after throwing an instance of 'FIX::RejectLogon'", so the
provider turns QuickFIX's Logon answer into that Logout and disconnects once QuickFIX
has taken the Logon; no logon/logout event is printed for it.)

stdout: one JSON object per line, flushed, for every event:
  {"event": "create"} / {"event": "listening", "port": N} (once the acceptor is started)
  {"event": "logon"} / {"event": "logout", "text": 58 of the venue's Logout or null}
     (also when the session is dropped or lost; every subscription is forgotten then)
  {"event": "logon_refused", "text": ...}  a Logon with the wrong password
  {"event": "admin"|"app", "msg_type": "V", "seq": N, "poss_dup": bool,
   "fields": [[tag, "value"], ...]}  every message received, serialised as fix_peer.py
   does (header first, body by tag, each group at its count tag with its entries in order)
  {"event": "subscribed", "md_req_id": 262, "symbols": [55, ...], "request_type": 263,
   "unknown": [the requested symbols that are unknown]}  every MarketDataRequest but an
   unsubscribe, once the snapshots (or the reject) answering it were sent
  {"event": "unsubscribed", "md_req_id": 262}  a MarketDataRequest with 263=2
  {"event": "sent", "msg_type": ..., "seq": N, "poss_dup": bool, "fields": [...]}
     every message QuickFIX sends (W, X and Y, and the session's own admin messages)
  {"event": "subscriptions", "items": [{"md_req_id": ..., "symbols": [...]}, ...]}
  {"event": "stopped"}
  {"event": "error", "text": ...}  a command that failed; the provider goes on. Also
     printed, before exiting 1, when port N cannot be listened on (already taken)

A MarketDataRequest (35=V) with SubscriptionRequestType (263) 1 (snapshot + updates) is
remembered under its MDReqID (262) with its symbols (NoRelatedSym 146, Symbol 55), and
every symbol of it with a price is answered at once with a MarketDataSnapshotFullRefresh
(35=W): 262, 55, NoMDEntries (268) = [269=0 270=bid 271=size] [269=1 270=offer 271=size].
A symbol without a price gets its W when a "price" command first sets one. Symbols the
"unknown" command named are skipped; when every symbol of a request is unknown, the
request is answered with a MarketDataRequestReject (35=Y) 262, 281=0 (unknown symbol),
58="Unknown symbol S" (the symbols joined by ", ") and is not remembered. 263=0
(snapshot only) gets the same answer without being remembered; 263=2 forgets the
subscription 262 names and is not answered. A later request with the same 262 replaces
the earlier one.

stdin: one JSON command per line:
  {"cmd": "price", "symbol": "S", "bid": "94.70", "offer": "94.80"
   [, "size": "1000"] [, "snapshot": true]}
     sets S's bid, offer and size (the exact strings given, numbers are refused; size
     defaults to "1000"). Each live subscription that includes S gets a
     MarketDataIncrementalRefresh (35=X): 262, NoMDEntries (268) =
     [279=1 269=0 55=S 270=bid 271=size] [279=1 269=1 55=S 270=offer 271=size];
     a W instead when S had no price before, or with "snapshot": true.
  {"cmd": "unknown", "symbol": "S"}  S is unknown to the provider from now on
  {"cmd": "drop"}  disconnects the live session at once, without a Logout; the
     acceptor keeps listening, so the venue can reconnect
  {"cmd": "logout", "text": "..."}  sends a Logout to the live session; once it is
     over, the acceptor takes the venue's next Logon again
  {"cmd": "subscriptions"}  prints the live session's subscriptions
  {"cmd": "stop"}
"stop" logs the live session out (waiting up to 2 s for the venue's Logout), stops the
acceptor and exits 0. Closing stdin does the same, so a test that dies never leaves the
provider running; so does losing the reader of stdout (exit 1 at the next event).
"""

import argparse
import functools
import json
import os
import socket
import sys
import threading

import quickfix as fix

from quickfix_support import describe, flat_fields, log_out, settings_lines

DEFAULT_SIZE = "1000"
REFUSAL = "wrong password"
LOGON_ONLY_TAGS = (98, 108, 141, 383, 464, 553, 554, 789, 925)  # not allowed in a Logout
BID, OFFER = "0", "1"  # MDEntryType (269)
SNAPSHOT_AND_UPDATES, SNAPSHOT, UNSUBSCRIBE = "1", "0", "2"  # SubscriptionRequestType (263)
# The order QuickFIX writes a group entry's fields in: FIX44.xml's MDFullGrp and MDIncGrp.
FULL_ENTRY = (269, 270, 271)
INCREMENTAL_ENTRY = (279, 269, 55, 270, 271)

_out = threading.Lock()
_stdout = sys.stdout  # the events' stream; main() moves fd 1 away from QuickFIX's own printing


def emit(event, **fields):
    line = json.dumps({"event": event, **fields})
    with _out:
        try:
            _stdout.write(line + "\n")
            _stdout.flush()
        except OSError:  # whoever read the events is gone: so is the provider
            os._exit(1)


def guarded(callback):
    """Report an exception as an error event: raised into QuickFIX, it ends the process
    (even fix.RejectLogon, with this wheel)."""
    @functools.wraps(callback)
    def wrapper(*args):
        try:
            callback(*args)
        except Exception as e:
            emit("error", text=f"{callback.__name__}: {type(e).__name__}: {e}")
    return wrapper


def build(msg_type, fields, count=None, order=(), entries=()):
    """A message of [tag, value] fields and one group: `entries` under `count`, each
    entry's fields written in `order` (the first tag being the group's delimiter)."""
    message = fix.Message()
    message.getHeader().setField(fix.MsgType(msg_type))
    for tag, value in fields:
        message.setField(fix.StringField(tag, value))
    if count is not None:
        tags = fix.IntArray(len(order) + 1)
        for i, tag in enumerate(tuple(order) + (0,)):
            tags[i] = tag
        for entry in entries:
            group = fix.Group(count, order[0], tags)
            for tag, value in entry:
                group.setField(fix.StringField(tag, value))
            message.addGroup(group)
    return message


def snapshot(md_req_id, symbol, quote):
    bid, offer, size = quote
    return build("W", [[262, md_req_id], [55, symbol]], 268, FULL_ENTRY,
                 [[[269, BID], [270, bid], [271, size]],
                  [[269, OFFER], [270, offer], [271, size]]])


def incremental(md_req_id, symbol, quote):
    bid, offer, size = quote
    return build("X", [[262, md_req_id]], 268, INCREMENTAL_ENTRY,
                 [[[279, "1"], [269, BID], [55, symbol], [270, bid], [271, size]],
                  [[279, "1"], [269, OFFER], [55, symbol], [270, offer], [271, size]]])


def reject(md_req_id, symbols):
    return build("Y", [[262, md_req_id], [281, "0"], [58, "Unknown symbol " + ", ".join(symbols)]])


def requested_symbols(request):
    """The Symbol (55) of each NoRelatedSym (146) entry, in order, each once."""
    symbols = []
    count = int(request.getField(146)) if request.isSetField(146) else 0
    for i in range(1, count + 1):
        entry = fix.Group(146, 55)
        request.getGroup(i, entry)
        if entry.isSetField(55) and entry.getField(55) not in symbols:
            symbols.append(entry.getField(55))
    return symbols


class Provider(fix.Application):
    """The provider's state is shared by QuickFIX's thread (callbacks) and the command
    loop: `lock` guards it. Messages are built under the lock and sent after it is
    released: sending takes the session's mutex, which QuickFIX holds around callbacks."""

    def __init__(self, session_id, password):
        super().__init__()
        self.session_id = session_id
        self.password = password
        self.lock = threading.Lock()
        self.quotes = {}  # symbol -> (bid, offer, size), the strings given
        self.unknown = set()
        self.subscriptions = {}  # md_req_id -> [symbol, ...] of the live session
        self.logout_text = None
        self.stopping = False
        self.refusing = False  # a Logon with the wrong password is being turned away

    def send(self, messages):
        for message in messages:
            if not fix.Session.sendToTarget(message, self.session_id):
                emit("error", text=f"sendToTarget refused the {message.getHeader().getField(35)}")

    @guarded
    def onCreate(self, session_id):
        emit("create")

    @guarded
    def onLogon(self, session_id):
        if self.refusing:  # QuickFIX took the Logon and sent our Logout: close the connection
            fix.Session.lookupSession(session_id).disconnect()
            return
        with self.lock:
            self.subscriptions.clear()
        emit("logon")

    @guarded
    def onLogout(self, session_id):
        with self.lock:
            self.subscriptions.clear()  # a reconnected venue subscribes again
        if self.refusing:
            self.refusing = False
        else:
            emit("logout", text=self.logout_text)
        self.logout_text = None
        if not self.stopping:
            # Session.logout() disables the session, and a disabled acceptor refuses
            # every Logon ("Session is not enabled for logon"): enable it again.
            fix.Session.lookupSession(session_id).logon()

    @guarded
    def toAdmin(self, message, session_id):
        header = message.getHeader()
        if self.refusing and header.getField(35) == "A":
            # The answer to a refused Logon: a Logout instead of QuickFIX's Logon.
            header.setField(fix.MsgType("5"))
            for tag in LOGON_ONLY_TAGS:
                if message.isSetField(tag):
                    message.removeField(tag)
            message.setField(fix.StringField(58, REFUSAL))
        emit("sent", **describe(message), fields=flat_fields(message))

    @guarded
    def toApp(self, message, session_id):
        emit("sent", **describe(message), fields=flat_fields(message))

    @guarded
    def fromAdmin(self, message, session_id):
        info = describe(message)
        emit("admin", **info, fields=flat_fields(message))
        if info["msg_type"] == "5":
            self.logout_text = message.getField(58) if message.isSetField(58) else None
        if info["msg_type"] == "A" and self.password is not None:
            given = message.getField(554) if message.isSetField(554) else None
            self.refusing = given != self.password
            if self.refusing:
                emit("logon_refused", text=REFUSAL)

    @guarded
    def fromApp(self, message, session_id):
        info = describe(message)
        emit("app", **info, fields=flat_fields(message))
        if info["msg_type"] == "V":
            self.market_data_request(message)

    def market_data_request(self, request):
        md_req_id = request.getField(262)
        request_type = request.getField(263)
        if request_type == UNSUBSCRIBE:
            with self.lock:
                self.subscriptions.pop(md_req_id, None)
            emit("unsubscribed", md_req_id=md_req_id)
            return
        symbols = requested_symbols(request)
        with self.lock:
            unknown = [s for s in symbols if s in self.unknown]
            known = [s for s in symbols if s not in self.unknown]
            if symbols and not known:
                answers = [reject(md_req_id, symbols)]
            else:
                answers = [snapshot(md_req_id, s, self.quotes[s]) for s in known if s in self.quotes]
                if request_type == SNAPSHOT_AND_UPDATES:
                    self.subscriptions[md_req_id] = known
        # Sent before it is told: a test that sends a price once it hears "subscribed"
        # knows that price follows the snapshot on the wire, not the other way round.
        self.send(answers)
        emit("subscribed", md_req_id=md_req_id, symbols=symbols, request_type=request_type,
             unknown=unknown)

    def price(self, symbol, bid, offer, size, full):
        """Set a symbol's quote; the messages the live subscriptions get for it."""
        with self.lock:
            fresh = symbol not in self.quotes
            quote = self.quotes[symbol] = (bid, offer, size)
            refresh = snapshot if fresh or full else incremental
            return [refresh(md_req_id, symbol, quote)
                    for md_req_id, symbols in self.subscriptions.items() if symbol in symbols]

    def mark_unknown(self, symbol):
        with self.lock:
            self.unknown.add(symbol)

    def items(self):
        with self.lock:
            return [{"md_req_id": k, "symbols": list(v)} for k, v in self.subscriptions.items()]


def text_arg(command, key, default=None):
    value = command.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"{key!r} must be a string, not {value!r}")
    return value


def run_command(command, provider, session):
    """Carry out one stdin command; False once the provider is to stop."""
    cmd = command.get("cmd")
    if cmd == "price":
        messages = provider.price(text_arg(command, "symbol"), text_arg(command, "bid"),
                                  text_arg(command, "offer"),
                                  text_arg(command, "size", DEFAULT_SIZE),
                                  bool(command.get("snapshot", False)))
        provider.send(messages)
    elif cmd == "unknown":
        provider.mark_unknown(text_arg(command, "symbol"))
    elif cmd == "drop":
        if not session.isLoggedOn():
            emit("error", text="drop: no live session")
        else:
            session.disconnect()
    elif cmd == "logout":
        if not session.isLoggedOn():
            emit("error", text="logout: no live session")
        else:
            session.logout(command.get("text", ""))
    elif cmd == "subscriptions":
        emit("subscriptions", items=provider.items())
    elif cmd == "stop":
        return False
    else:
        emit("error", text=f"unknown command {cmd!r}")
    return True


def shut_down(acceptor, provider, session):
    """Log out, wait up to 2 s for the venue's Logout, then stop without QuickFIX's 10 s grace."""
    provider.stopping = True
    log_out(session)
    acceptor.stop(True)
    emit("stopped")


def port_free(port):
    """Whether QuickFIX can listen on `port`: it binds every interface, SO_REUSEADDR set.
    (A failed bind inside acceptor.start() aborts the process with this wheel.)"""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("", port))
            s.listen()
        except OSError as e:
            emit("error", text=f"cannot listen on port {port}: {e}")
            return False
    return True


def settings_text(args):
    lines = settings_lines("md_provider", "acceptor", args.store, args.heartbeat) + [
        "ResetOnLogon=Y",
        f"SocketAcceptPort={args.port}",
        "SocketReuseAddress=Y",
    ]
    if args.tls:
        # TLS 1.2 with the given certificate; no client certificate asked for (QuickFIX
        # wants an authorities file all the same: the certificate's own).
        lines += ["SSLProtocol=-all +TLSv1_2",
                  f"ServerCertificateFile={os.path.abspath(args.cert)}",
                  f"ServerCertificateKeyFile={os.path.abspath(args.key)}",
                  f"CertificationAuthoritiesFile={os.path.abspath(args.cert)}",
                  "CertificateVerifyLevel=0"]
    lines += [
        "[SESSION]",
        "BeginString=FIX.4.4",
        f"SenderCompID={args.sender}",
        f"TargetCompID={args.target}",
    ]
    return "\n".join(lines) + "\n"


def main():
    global _stdout
    parser = argparse.ArgumentParser(description="QuickFIX FIX 4.4 market-data provider (acceptor).")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--sender", required=True)
    parser.add_argument("--target", required=True)
    parser.add_argument("--store", required=True)
    parser.add_argument("--password", help="the Password (554) a Logon must carry")
    parser.add_argument("--heartbeat", type=int, default=30)
    parser.add_argument("--tls", action="store_true", help="accept TLS 1.2 only (QuickFIX's SSLSocketAcceptor)")
    parser.add_argument("--cert", help="with --tls: the PEM certificate")
    parser.add_argument("--key", help="with --tls: its PEM key")
    args = parser.parse_args()
    if args.tls and not (args.cert and args.key):
        parser.error("--tls needs --cert and --key")
    # Keep stdout for events only: whatever QuickFIX prints goes to stderr.
    _stdout = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)

    if not port_free(args.port):
        sys.exit(1)
    os.makedirs(args.store, exist_ok=True)
    config = os.path.join(args.store, "provider.cfg")
    with open(config, "w") as f:
        f.write(settings_text(args))
    settings = fix.SessionSettings(config)
    session_id = fix.SessionID("FIX.4.4", args.sender, args.target)
    provider = Provider(session_id, args.password)
    acceptor_class = fix.SSLSocketAcceptor if args.tls else fix.SocketAcceptor
    acceptor = acceptor_class(provider, fix.FileStoreFactory(settings), settings,
                                  fix.FileLogFactory(settings))
    acceptor.start()
    emit("listening", port=args.port)
    session = fix.Session.lookupSession(session_id)

    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            if not run_command(json.loads(line), provider, session):
                break
        except Exception as e:  # a bad command is reported, never fatal
            emit("error", text=f"{type(e).__name__}: {e}")
    shut_down(acceptor, provider, session)


if __name__ == "__main__":
    main()
