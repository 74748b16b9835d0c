"""What the QuickFIX test peers (fix_peer.py, md_provider.py) share: the data dictionary
of the quickfix-ssl wheel, and a message as the JSON events print it."""

import importlib.metadata
import os
import sys
import time

SOH = "\x01"


def data_dictionary(peer):
    """FIX44.xml as installed by the quickfix-ssl wheel (under <prefix>/share/quickfix)."""
    dist = importlib.metadata.distribution("quickfix-ssl")
    for file in dist.files or ():
        if file.name == "FIX44.xml":
            return str(dist.locate_file(file).resolve())
    sys.exit(f"{peer}: FIX44.xml is not in the installed quickfix-ssl package")


def flat_fields(message):
    """[[tag, value], ...] in the order QuickFIX serialises the message."""
    pairs = (item.split("=", 1) for item in message.toString().split(SOH) if item)
    return [[int(tag), value] for tag, value in pairs]


def describe(message):
    header = message.getHeader()
    poss_dup = header.isSetField(43) and header.getField(43) == "Y"
    seq = int(header.getField(34)) if header.isSetField(34) else None
    return {"msg_type": header.getField(35), "seq": seq, "poss_dup": poss_dup}


def log_out(session):
    """Log out, and wait up to 2 s for the counterparty's Logout."""
    if session.isLoggedOn():
        session.logout()
        deadline = time.monotonic() + 2
        while session.isLoggedOn() and time.monotonic() < deadline:
            time.sleep(0.02)


def settings_lines(peer, connection_type, store, heartbeat):
    """The [DEFAULT] settings both peers use: a FileStore and log in `store`, always in
    session, every message checked against the wheel's FIX44.xml."""
    return [
        "[DEFAULT]",
        f"ConnectionType={connection_type}",
        f"FileStorePath={store}",
        f"FileLogPath={os.path.join(store, 'log')}",
        "StartTime=00:00:00",
        "EndTime=00:00:00",
        f"HeartBtInt={heartbeat}",
        "UseDataDictionary=Y",
        f"DataDictionary={data_dictionary(peer)}",
        "ValidateUserDefinedFields=N",
        "ValidateFieldsOutOfOrder=N",
        "AllowUnknownMsgFields=Y",
    ]
