import { createContext, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { Client, type StompSubscription } from '@stomp/stompjs';
import type { components } from '@/lib/api/schema';

/** Spec section 7: the socket reconnects after 5 seconds. */
export const RECONNECT_MS = 5_000;

type Listener = (body: unknown) => void;

type Realtime = {
  subscribe: (destination: string, listener: Listener) => () => void;
  /** True while the STOMP session is up; screens poll as the fallback either way. */
  connected: boolean;
};

const RealtimeContext = createContext<Realtime>({ subscribe: () => () => {}, connected: false });

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
  const subscriptions = useRef(new Map<string, StompSubscription>());
  // Subscribes a destination on the live connection; null while disconnected.
  const openRef = useRef<((destination: string) => void) | null>(null);

  useEffect(() => {
    const subs = subscriptions.current;
    const open = (client: Client, destination: string) => {
      if (subs.has(destination)) return;
      subs.set(
        destination,
        client.subscribe(destination, (message) => {
          const body = parse(message.body);
          listeners.current.get(destination)?.forEach((l) => l(body));
        }),
      );
    };
    const client = new Client({
      brokerURL: socketUrl(),
      connectHeaders: { Authorization: `Bearer ${token}` },
      reconnectDelay: RECONNECT_MS,
      onConnect: () => {
        subs.clear();
        openRef.current = (destination) => open(client, destination);
        listeners.current.forEach((_, destination) => open(client, destination));
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

  const value = useMemo<Realtime>(
    () => ({
      connected,
      subscribe: (destination, listener) => {
        let set = listeners.current.get(destination);
        if (!set) listeners.current.set(destination, (set = new Set()));
        set.add(listener);
        openRef.current?.(destination);
        return () => {
          set.delete(listener);
          if (set.size > 0) return;
          listeners.current.delete(destination);
          const sub = subscriptions.current.get(destination);
          subscriptions.current.delete(destination);
          if (sub && openRef.current) sub.unsubscribe();
        };
      },
    }),
    [connected],
  );

  return <RealtimeContext.Provider value={value}>{children}</RealtimeContext.Provider>;
}

/** What each destination carries: the payload types of the server's OpenAPI document. */
export type TopicMessage<D extends string> = D extends '/user/topic/orders'
  ? components['schemas']['OrderMessage']
  : D extends `/topic/instruments/${string}/book`
    ? components['schemas']['BookMessage']
    : D extends '/user/topic/notifications'
      ? components['schemas']['NotificationDto']
      : D extends '/user/topic/rfqs'
        ? components['schemas']['RfqMessage']
        : unknown;

/** Calls `listener` with each message on `destination` while mounted. */
export function useTopic<D extends string>(destination: D | null, listener: (body: TopicMessage<D>) => void) {
  const { subscribe } = useContext(RealtimeContext);
  const latest = useRef(listener);
  useEffect(() => {
    latest.current = listener;
  });
  useEffect(() => {
    if (!destination) return;
    // The server encodes each destination's messages from these types (crates/http/src/stomp/messages.rs).
    return subscribe(destination, (body) => latest.current(body as TopicMessage<D>));
  }, [destination, subscribe]);
}

export function useRealtimeConnected() {
  return useContext(RealtimeContext).connected;
}
