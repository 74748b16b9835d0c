#!/usr/bin/env python3
"""A real STOMP 1.2 client (stomp.py over WebSocket) for the realtime tests.

Usage: stomp_client.py HOST PORT TOKEN DESTINATION

Connects to ws://HOST:PORT/ws with `Authorization: Bearer TOKEN`, subscribes to
DESTINATION with a receipt, and prints one JSON object per line on stdout:
  {"event": "connected"} / {"event": "subscribed"} /
  {"event": "message", "destination": ..., "body": ...} /
  {"event": "error", "message": ..., "body": ...} / {"event": "connect_failed"}
Exits when its stdin closes (so a dying test never leaves it running).
"""

import json
import sys
import threading

import stomp


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


ERRORED = threading.Event()


class Listener(stomp.ConnectionListener):
    def on_connected(self, frame):
        emit({"event": "connected", "version": frame.headers.get("version")})

    def on_receipt(self, frame):
        if frame.headers.get("receipt-id") == "sub-receipt":
            emit({"event": "subscribed"})

    def on_message(self, frame):
        emit({"event": "message", "destination": frame.headers.get("destination"),
              "subscription": frame.headers.get("subscription"), "body": json.loads(frame.body)})

    def on_error(self, frame):
        emit({"event": "error", "message": frame.headers.get("message"), "body": frame.body})
        ERRORED.set()

    def on_disconnected(self):
        emit({"event": "disconnected"})


def main():
    host, port, token, destination = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    # Optional: how many subscriptions to that destination (ids sub-0 …); the last asks a receipt.
    count = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    conn = stomp.WSStompConnection([(host, port)], ws_path="/ws", heartbeats=(10000, 10000),
                                   reconnect_attempts_max=1)
    conn.set_listener("", Listener())
    try:
        conn.connect(headers={"Authorization": f"Bearer {token}"}, wait=True)
    except Exception as e:  # stomp.py raises when the server answers ERROR
        # The receiver thread may still be handing us the ERROR frame.
        ERRORED.wait(timeout=5)
        emit({"event": "connect_failed", "reason": type(e).__name__})
        sys.stdin.read()
        return
    for i in range(count - 1):
        conn.subscribe(destination=destination, id=f"sub-{i}")
    conn.subscribe(destination=destination, id=f"sub-{count - 1}", headers={"receipt": "sub-receipt"})
    # Block until the test closes our stdin.
    done = threading.Event()

    def wait_stdin():
        sys.stdin.read()
        done.set()

    threading.Thread(target=wait_stdin, daemon=True).start()
    done.wait()
    try:
        conn.disconnect()
    except Exception:
        pass


if __name__ == "__main__":
    main()
