import { useQueryClient } from '@tanstack/react-query';
import { useRealtimeConnected } from '@/lib/realtime';
import { instrumentsQueryKey } from './get-instruments';

/** Query keys the trading features share: an order change in one refreshes the lists and books of the others. */
export const tradingKeys = {
  parentOrders: ['parent-orders'] as const,
  orders: ['orders'] as const,
  book: (instrumentId: string) => [...instrumentsQueryKey, 'book', instrumentId] as const,
  marketData: (instrumentId: string) => [...instrumentsQueryKey, 'market-data', instrumentId] as const,
};

/**
 * After any order change: the lists, and while the socket is down the book and market data
 * of its instrument (while it is up, the book's frames carry the change: ADR 0029).
 */
export function useRefreshOrders() {
  const queryClient = useQueryClient();
  const connected = useRealtimeConnected();
  return (instrumentId?: string) => {
    // While the socket is up, the write's own frames (sent after its commit, before this
    // answer) have started the lists' read: this joins it instead of reading again.
    const lists = { cancelRefetch: !connected };
    void queryClient.invalidateQueries({ queryKey: tradingKeys.parentOrders }, lists);
    void queryClient.invalidateQueries({ queryKey: tradingKeys.orders }, lists);
    if (instrumentId && !connected) {
      void queryClient.invalidateQueries({ queryKey: tradingKeys.book(instrumentId) });
      void queryClient.invalidateQueries({ queryKey: tradingKeys.marketData(instrumentId) });
    }
  };
}
