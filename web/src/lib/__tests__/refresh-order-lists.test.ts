import { QueryClient } from '@tanstack/react-query';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LISTS_COALESCE_MS, refreshOrderLists, tradingKeys } from '@/lib/api/trading-keys';

afterEach(() => {
  vi.useRealTimers();
});

describe('refreshOrderLists', () => {
  it("reads each list once for a write's frames and its answer, and again for a later write", () => {
    vi.useFakeTimers();
    const client = new QueryClient();
    const invalidate = vi.spyOn(client, 'invalidateQueries').mockResolvedValue();
    const keys = () => invalidate.mock.calls.map(([filters]) => filters?.queryKey);
    // A child's frame, its parent's frame, then the write's answer.
    refreshOrderLists(client, ['parentOrders', 'orders']);
    refreshOrderLists(client, ['parentOrders']);
    refreshOrderLists(client, ['parentOrders', 'orders']);
    expect(invalidate).not.toHaveBeenCalled();
    vi.advanceTimersByTime(LISTS_COALESCE_MS);
    expect(keys()).toEqual([tradingKeys.parentOrders, tradingKeys.orders]);
    // A parent's change alone leaves the child orders as they are.
    refreshOrderLists(client, ['parentOrders']);
    vi.advanceTimersByTime(LISTS_COALESCE_MS);
    expect(keys()).toEqual([tradingKeys.parentOrders, tradingKeys.orders, tradingKeys.parentOrders]);
  });
});
