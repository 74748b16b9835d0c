#!/usr/bin/env python3
"""A real FIX 4.4 initiator (QuickFIX, the quickfix-ssl wheel) playing a broker or an EMS.

Usage: fix_peer.py --port N --sender BROKER1 --target UPSTAIRS --store DIR
                   [--password P] [--host 127.0.0.1] [--heartbeat 30] [--reset-on-logon]
                   [--auto-ack accept|reject|none] [--tls [--ca FILE]] [--pretty]

Sessions are validated against the wheel's own FIX44.xml. Sequence numbers live in a
QuickFIX FileStore in DIR, so a peer restarted on the same DIR carries on where it
stopped; QuickFIX's own log of the wire (and of TLS handshake errors) is in DIR/log.

stdout: one JSON object per line, flushed, for every event:
  {"event": "create"} / {"event": "logon"} / {"event": "logout", "text": 58 or null}
  {"event": "admin"|"app", "msg_type": "AE", "seq": N, "poss_dup": bool,
   "fields": [[tag, "value"], ...]}  every message received; fields are the header and
   the body as QuickFIX serialises them (header first, body by tag, each group at its
   count tag with its entries in order)
  {"event": "sent", "msg_type": ..., "seq": N, "poss_dup": bool}  every message QuickFIX
   sends, resends and gap fills included (a message sent while disconnected is stored
   under its number and goes out as a PossDup resend when the venue asks for it)
  {"event": "acked", "trade_report_id": ..., "status": 0|1}  an --auto-ack answer sent
  {"event": "acked", "alloc_id": ..., "status": 0|1}  the same for an AllocationInstruction
  {"event": "seq", "next_sender": N, "next_target": N} / {"event": "stopped"}
  {"event": "error", "text": ...}  a command that failed; the peer goes on
--pretty prints one readable line per trade report and execution report instead.

stdin: one JSON command per line:
  {"cmd": "send", "msg_type": "D", "fields": [[11, "C1"], ...],
   "groups": [{"count": 453, "delim": 448, "entries": [[[448, "T1"], [447, "D"]]]}]}
     (an entry item may itself be a group object, for nested groups)
  {"cmd": "seq"} / {"cmd": "set_next_sender", "seq": N} / {"cmd": "set_next_target", "seq": N}
  {"cmd": "logout", "text": "..."} / {"cmd": "stop"}
"stop" logs out (waiting up to 2 s for the venue's Logout; about 2 s in all against a
live venue) and exits 0. Closing stdin does the same, so a test that dies never leaves
the peer running; so does losing the reader of stdout (exit 1 at the next event).

With --auto-ack, every TradeCaptureReport (35=AE) received, PossDup or not, is answered
with a TradeCaptureReportAck (35=AR): 571 from the AE, 939 = 0 (accept) or 1 (reject),
and what FIX44.xml requires besides: ExecType 150 and the Instrument (55/48/22/207) from
the AE. Every AllocationInstruction (35=J) is answered likewise with an
AllocationInstructionAck (35=P): 70 from the J, 87 = 0 (accepted) or 1 (block rejected).

--tls connects with TLS 1.2 (QuickFIX's SSLSocketInitiator, no client certificate);
--ca FILE makes it verify the venue's certificate chain against FILE (QuickFIX does not
check the host name).
"""

import argparse
import functools
import json
import os
import sys
import threading
import time

import quickfix as fix

from quickfix_support import describe, flat_fields, log_out, settings_lines

INSTRUMENT_TAGS = (55, 48, 22, 207)
SIDES = {"1": "BUY", "2": "SELL"}

_out = threading.Lock()
_pretty = False
_stdout = sys.stdout  # the events' stream; main() moves fd 1 away from QuickFIX's own printing


def emit(event, **fields):
    line = pretty(event, fields) if _pretty else json.dumps({"event": event, **fields})
    if line is not None:
        with _out:
            try:
                _stdout.write(line + "\n")
                _stdout.flush()
            except OSError:  # whoever read the events is gone: so is the peer
                os._exit(1)


def guarded(callback):
    """Report an exception as an error event: raised into QuickFIX, it wedges the session."""
    @functools.wraps(callback)
    def wrapper(*args):
        try:
            callback(*args)
        except Exception as e:
            emit("error", text=f"{callback.__name__}: {type(e).__name__}: {e}")
    return wrapper


def pretty(event, fields):
    """The demo's one readable line for an event, or None to say nothing."""
    if event == "app" and fields["msg_type"] in ("AE", "8"):
        tags = {}
        for tag, value in fields["fields"]:
            tags.setdefault(tag, value)  # the first occurrence: the first side's 54
        side = SIDES.get(tags.get(54), tags.get(54))
        head = (f"Trade report 571={tags.get(571)}" if fields["msg_type"] == "AE" else
                f"Execution report 37={tags.get(37)} 11={tags.get(11)} 150={tags.get(150)}")
        return (f"{head} side={side} qty={tags.get(32, tags.get(38))} "
                f"px={tags.get(31, tags.get(44))} symbol={tags.get(55)}")
    if event in ("admin", "app", "sent", "create"):
        return None
    return " ".join([event] + [f"{k}={v}" for k, v in fields.items()])


def fill(field_map, items):
    """Set [tag, value] items and {"count", "delim", "entries"} groups, in order."""
    for item in items:
        if isinstance(item, dict):
            entries = item["entries"]
            # Each entry's fields go out in the order the first entry lists them.
            first = entries[0] if entries else []
            tags = [int(i["count"] if isinstance(i, dict) else i[0]) for i in first]
            order = fix.IntArray(len(tags) + 1)
            for i, tag in enumerate(tags + [0]):
                order[i] = tag
            for entry in entries:
                group = fix.Group(int(item["count"]), int(item["delim"]), order)
                fill(group, entry)
                field_map.addGroup(group)
        else:
            tag, value = item
            field_map.setField(fix.StringField(int(tag), str(value)))


class Peer(fix.Application):
    def __init__(self, session_id, auto_ack, password):
        super().__init__()
        self.session_id = session_id
        self.auto_ack = auto_ack
        self.password = password
        self.logout_text = None

    @guarded
    def onCreate(self, session_id):
        emit("create")

    @guarded
    def onLogon(self, session_id):
        emit("logon")

    @guarded
    def onLogout(self, session_id):
        emit("logout", text=self.logout_text)
        self.logout_text = None

    @guarded
    def toAdmin(self, message, session_id):
        if self.password is not None and message.getHeader().getField(35) == "A":
            message.setField(fix.StringField(554, self.password))
        emit("sent", **describe(message))

    @guarded
    def toApp(self, message, session_id):
        emit("sent", **describe(message))

    @guarded
    def fromAdmin(self, message, session_id):
        info = describe(message)
        if info["msg_type"] == "5":
            self.logout_text = message.getField(58) if message.isSetField(58) else None
        emit("admin", **info, fields=flat_fields(message))

    @guarded
    def fromApp(self, message, session_id):
        info = describe(message)
        emit("app", **info, fields=flat_fields(message))
        if info["msg_type"] == "AE" and self.auto_ack != "none":
            self.ack(message)
        if info["msg_type"] == "J" and self.auto_ack != "none":
            self.ack_allocation(message)

    def ack_allocation(self, instruction):
        status = 0 if self.auto_ack == "accept" else 1
        ack = fix.Message()
        ack.getHeader().setField(fix.MsgType("P"))
        alloc_id = instruction.getField(70)
        items = [[70, alloc_id], [60, time.strftime("%Y%m%d-%H:%M:%S", time.gmtime())], [87, status]]
        if status:
            items.append([58, "rejected by fix_peer --auto-ack reject"])
        fill(ack, items)
        if fix.Session.sendToTarget(ack, self.session_id):
            emit("acked", alloc_id=alloc_id, status=status)
        else:
            emit("error", text=f"could not send the P for 70={alloc_id}")

    def ack(self, report):
        status = 0 if self.auto_ack == "accept" else 1
        ack = fix.Message()
        ack.getHeader().setField(fix.MsgType("AR"))
        trade_report_id = report.getField(571)
        items = [[571, trade_report_id], [939, status],
                 [150, report.getField(150) if report.isSetField(150) else "F"]]
        items += [[tag, report.getField(tag)] for tag in INSTRUMENT_TAGS if report.isSetField(tag)]
        if status:
            items.append([58, "rejected by fix_peer --auto-ack reject"])
        fill(ack, items)
        if fix.Session.sendToTarget(ack, self.session_id):
            emit("acked", trade_report_id=trade_report_id, status=status)
        else:
            emit("error", text=f"could not send the AR for 571={trade_report_id}")


def run_command(command, session):
    """Carry out one stdin command; False once the peer is to stop."""
    cmd = command.get("cmd")
    if cmd == "send":
        message = fix.Message()
        message.getHeader().setField(fix.MsgType(command["msg_type"]))
        fill(message, command.get("fields", []) + command.get("groups", []))
        if not fix.Session.sendToTarget(message, session.getSessionID()):
            emit("error", text=f"sendToTarget refused the {command['msg_type']}")
    elif cmd == "seq":
        emit("seq", next_sender=session.getExpectedSenderNum(),
             next_target=session.getExpectedTargetNum())
    elif cmd == "set_next_sender":
        session.setNextSenderMsgSeqNum(int(command["seq"]))
    elif cmd == "set_next_target":
        session.setNextTargetMsgSeqNum(int(command["seq"]))
    elif cmd == "logout":
        session.logout(command.get("text", ""))
    elif cmd == "stop":
        return False
    else:
        emit("error", text=f"unknown command {cmd!r}")
    return True


def shut_down(initiator, session):
    """Log out, wait up to 2 s for the venue's Logout, then stop without QuickFIX's 10 s grace."""
    log_out(session)
    initiator.stop(True)
    emit("stopped")


def settings_text(args):
    lines = settings_lines("fix_peer", "initiator", args.store, args.heartbeat) + [
        "ReconnectInterval=1",
        f"ResetOnLogon={'Y' if args.reset_on_logon else 'N'}",
        f"SocketConnectHost={args.host}",
        f"SocketConnectPort={args.port}",
    ]
    if args.tls:
        lines.append("SSLProtocol=-all +TLSv1_2")
        if args.ca:
            lines.append(f"CertificationAuthoritiesFile={os.path.abspath(args.ca)}")
    lines += ["[SESSION]", "BeginString=FIX.4.4",
              f"SenderCompID={args.sender}", f"TargetCompID={args.target}"]
    return "\n".join(lines) + "\n"


def main():
    global _pretty, _stdout
    parser = argparse.ArgumentParser(description="QuickFIX FIX 4.4 test initiator.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--sender", required=True)
    parser.add_argument("--target", required=True)
    parser.add_argument("--store", required=True)
    parser.add_argument("--password", help="Password (554) on the Logon")
    parser.add_argument("--heartbeat", type=int, default=30)
    parser.add_argument("--reset-on-logon", action="store_true")
    parser.add_argument("--auto-ack", choices=("accept", "reject", "none"), default="none")
    parser.add_argument("--tls", action="store_true")
    parser.add_argument("--ca")
    parser.add_argument("--pretty", action="store_true")
    args = parser.parse_args()
    _pretty = args.pretty
    # QuickFIX's TLS code prints its certificate checks on the C stdout: send those to
    # stderr so that stdout carries events only.
    _stdout = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)

    os.makedirs(args.store, exist_ok=True)
    config = os.path.join(args.store, "peer.cfg")
    with open(config, "w") as f:
        f.write(settings_text(args))
    settings = fix.SessionSettings(config)
    session_id = fix.SessionID("FIX.4.4", args.sender, args.target)
    peer = Peer(session_id, args.auto_ack, args.password)
    initiator_class = fix.SSLSocketInitiator if args.tls else fix.SocketInitiator
    initiator = initiator_class(peer, fix.FileStoreFactory(settings), settings,
                                fix.FileLogFactory(settings))
    initiator.start()
    session = fix.Session.lookupSession(session_id)

    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            if not run_command(json.loads(line), session):
                break
        except Exception as e:  # a bad command is reported, never fatal
            emit("error", text=f"{type(e).__name__}: {e}")
    shut_down(initiator, session)


if __name__ == "__main__":
    main()
