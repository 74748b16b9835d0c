import { useQueryClient, type QueryClient } from '@tanstack/react-query';
import { useRealtimeConnected } from '@/lib/realtime';
import { instrumentsQueryKey } from './get-instruments';

/** Query keys the trading features share: an order change in one refreshes the lists and books of the others. */
export const tradingKeys = {
  parentOrders: ['parent-orders'] as const,
  orders: ['orders'] as const,
  matchRequests: ['order-match-requests'] as const,
  pendingMatchRequests: ['order-match-requests', 'PENDING'] as const,
  notifications: ['notifications'] as const,
  book: (instrumentId: string) => [...instrumentsQueryKey, 'book', instrumentId] as const,
  marketData: (instrumentId: string) => [...instrumentsQueryKey, 'market-data', instrumentId] as const,
};

/** How long a burst of order changes is gathered into one read of the lists. */
export const LISTS_COALESCE_MS = 25;

const queued = new WeakMap<QueryClient, Set<'parentOrders' | 'orders'>>();

/**
 * Reads the order lists again once for a burst: one write sends its child's and its
 * parent's frames after its commit, and its answer comes a few ms later; each asks here,
 * and the lists are read once, after the last of them (ADR 0029).
 */
export function refreshOrderLists(queryClient: QueryClient, lists: ('parentOrders' | 'orders')[]) {
  let set = queued.get(queryClient);
  if (!set) {
    const mine = new Set<'parentOrders' | 'orders'>();
    queued.set(queryClient, (set = mine));
    setTimeout(() => {
      queued.delete(queryClient);
      for (const key of mine) void queryClient.invalidateQueries({ queryKey: tradingKeys[key] });
    }, LISTS_COALESCE_MS);
  }
  for (const key of lists) set.add(key);
}

/**
 * After any order change: the lists (gathered with the write's frames), the caller's
 * pending match requests, and while the
 * socket is down the book and market data of its instrument (while it is up, the book's
 * frames carry the change: ADR 0029).
 */
export function useRefreshOrders() {
  const queryClient = useQueryClient();
  const connected = useRealtimeConnected();
  return (instrumentId?: string) => {
    refreshOrderLists(queryClient, ['parentOrders', 'orders']);
    // A take made a request of the caller's, or a cancel withdrew one.
    void queryClient.invalidateQueries({ queryKey: tradingKeys.pendingMatchRequests });
    if (instrumentId && !connected) {
      void queryClient.invalidateQueries({ queryKey: tradingKeys.book(instrumentId) });
      void queryClient.invalidateQueries({ queryKey: tradingKeys.marketData(instrumentId) });
    }
  };
}
