import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { Client, type StompSubscription } from '@stomp/stompjs';
import type { components } from '@/lib/api/schema';

/** Spec section 7: the socket reconnects after 5 seconds. */
export const RECONNECT_MS = 5_000;

type Listener = (body: unknown) => void;
/**
 * Called when what a screen holds of a destination may be stale: after the socket
 * (re)connected (`since`: when the subscription was made, so data read after it is
 * current), or when a frame was missed (a skipped `seq`; `since` is then Infinity: all of it).
 */
export type Resync = (since: number) => void;

type Realtime = {
  subscribe: (destination: string, listener: Listener, resync?: Resync) => () => void;
  /** True while the STOMP session is up; screens poll only while it is down. */
  connected: boolean;
};

const RealtimeContext = createContext<Realtime>({ subscribe: () => () => {}, connected: false });

/**
 * Follows the `seq` numbers of one destination's frames (ADR 0029): the server numbers
 * them 1, 2, 3 … per destination on its node. True when a number was skipped, or went
 * back (another node, or a restarted one), since the last frame seen; the first frame
 * after a (re)connect sets the count. Frames without a number are never a gap.
 */
export function missedFrame(last: Map<string, number>, destination: string, body: unknown): boolean {
  const seq = typeof body === 'object' && body !== null && 'seq' in body ? (body as { seq: unknown }).seq : undefined;
  if (typeof seq !== 'number') return false;
  const before = last.get(destination);
  last.set(destination, seq);
  return before !== undefined && seq !== before + 1;
}

function socketUrl() {
  const { protocol, host } = window.location;
  return `${protocol === 'https:' ? 'wss' : 'ws'}://${host}/ws`;
}

function parse(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

/**
 * One STOMP connection per signed-in session at /ws, authorised by the bearer
 * token in CONNECT. Screens subscribe to destinations; subscriptions survive
 * reconnects, which happen 5 s after a drop.
 */
export function RealtimeProvider({ token, children }: { token: string; children: ReactNode }) {
  const [connected, setConnected] = useState(false);
  const listeners = useRef(new Map<string, Set<Listener>>());
  const resyncs = useRef(new Map<string, Set<Resync>>());
  const subscriptions = useRef(new Map<string, StompSubscription>());
  // The last `seq` seen per destination on this connection.
  const seqs = useRef(new Map<string, number>());
  // Subscribes a destination on the live connection; null while disconnected.
  const openRef = useRef<((destination: string) => void) | null>(null);

  useEffect(() => {
    const subs = subscriptions.current;
    const seen = seqs.current;
    const open = (client: Client, destination: string) => {
      if (subs.has(destination)) return;
      subs.set(
        destination,
        client.subscribe(destination, (message) => {
          const body = parse(message.body);
          const missed = missedFrame(seen, destination, body);
          listeners.current.get(destination)?.forEach((l) => l(body));
          // The frame is applied, and whatever it did not carry of the missed ones is read again.
          if (missed) resyncs.current.get(destination)?.forEach((r) => r(Number.POSITIVE_INFINITY));
        }),
      );
    };
    const client = new Client({
      brokerURL: socketUrl(),
      connectHeaders: { Authorization: `Bearer ${token}` },
      reconnectDelay: RECONNECT_MS,
      onConnect: () => {
        subs.clear();
        seen.clear();
        openRef.current = (destination) => open(client, destination);
        const since = Date.now();
        listeners.current.forEach((_, destination) => open(client, destination));
        // Frames sent while the socket was down are lost: what was read before now is read again.
        resyncs.current.forEach((set) => set.forEach((r) => r(since)));
        setConnected(true);
      },
      onWebSocketClose: () => {
        openRef.current = null;
        subs.clear();
        setConnected(false);
      },
    });
    client.activate();
    return () => {
      openRef.current = null;
      subs.clear();
      setConnected(false);
      void client.deactivate();
    };
  }, [token]);

  // Stable across reconnects: screens keep their subscriptions, which the socket opens again on connect.
  const subscribe = useCallback<Realtime['subscribe']>(
    (destination, listener, resync) => {
      let set = listeners.current.get(destination);
      if (!set) listeners.current.set(destination, (set = new Set()));
      set.add(listener);
      let resyncSet = resyncs.current.get(destination);
      if (!resyncSet) resyncs.current.set(destination, (resyncSet = new Set()));
      if (resync) resyncSet.add(resync);
      if (openRef.current) {
        const since = Date.now();
        openRef.current(destination);
        // Subscribed on a live socket: frames before this moment never reached this screen.
        resync?.(since);
      }
      return () => {
        if (resync) resyncSet.delete(resync);
        set.delete(listener);
        if (set.size > 0) return;
        listeners.current.delete(destination);
        resyncs.current.delete(destination);
        // A later subscription counts afresh: the frames in between were never for it.
        seqs.current.delete(destination);
        const sub = subscriptions.current.get(destination);
        subscriptions.current.delete(destination);
        if (sub && openRef.current) sub.unsubscribe();
      };
    },
    [],
  );
  const value = useMemo<Realtime>(() => ({ connected, subscribe }), [connected, subscribe]);

  return <RealtimeContext.Provider value={value}>{children}</RealtimeContext.Provider>;
}

/** What each destination carries: the payload types of the server's OpenAPI document. */
export type TopicMessage<D extends string> = D extends '/user/topic/orders'
  ? components['schemas']['OrderMessage']
  : D extends `/topic/instruments/${string}/book`
    ? components['schemas']['BookMessage']
    : D extends '/user/topic/book-shares'
      ? components['schemas']['BookShareMessage']
    : D extends '/user/topic/notifications'
      ? components['schemas']['NotificationMessage']
      : D extends '/user/topic/rfqs'
        ? components['schemas']['RfqMessage']
        : unknown;

/**
 * Calls `listener` with each message on `destination` while mounted, and `resync` when
 * frames may have been missed (a reconnect, a skipped sequence number): the screen then
 * reads again what it read before `since`.
 */
export function useTopic<D extends string>(destination: D | null, listener: (body: TopicMessage<D>) => void, resync?: Resync) {
  const { subscribe } = useContext(RealtimeContext);
  const latest = useRef(listener);
  const latestResync = useRef(resync);
  useEffect(() => {
    latest.current = listener;
    latestResync.current = resync;
  });
  const hasResync = resync !== undefined;
  useEffect(() => {
    if (!destination) return;
    // The server encodes each destination's messages from these types (crates/http/src/stomp/messages.rs).
    return subscribe(
      destination,
      (body) => latest.current(body as TopicMessage<D>),
      hasResync ? (since) => latestResync.current?.(since) : undefined,
    );
  }, [destination, subscribe, hasResync]);
}

export function useRealtimeConnected() {
  return useContext(RealtimeContext).connected;
}
