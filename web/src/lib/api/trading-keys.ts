import { useQueryClient } from '@tanstack/react-query';
import { instrumentsQueryKey } from './get-instruments';

/** Query keys the trading features share: an order change in one refreshes the lists and books of the others. */
export const tradingKeys = {
  parentOrders: ['parent-orders'] as const,
  orders: ['orders'] as const,
  book: (instrumentId: string) => [...instrumentsQueryKey, 'book', instrumentId] as const,
  marketData: (instrumentId: string) => [...instrumentsQueryKey, 'market-data', instrumentId] as const,
};

/** After any order change: the lists, and the book and market data of its instrument. */
export function useRefreshOrders() {
  const queryClient = useQueryClient();
  return (instrumentId?: string) => {
    void queryClient.invalidateQueries({ queryKey: tradingKeys.parentOrders });
    void queryClient.invalidateQueries({ queryKey: tradingKeys.orders });
    if (instrumentId) {
      void queryClient.invalidateQueries({ queryKey: tradingKeys.book(instrumentId) });
      void queryClient.invalidateQueries({ queryKey: tradingKeys.marketData(instrumentId) });
    }
  };
}
