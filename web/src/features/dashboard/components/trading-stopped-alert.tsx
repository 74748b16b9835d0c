import { useQueryClient } from '@tanstack/react-query';
import Alert from '@mui/material/Alert';
import dayjs from 'dayjs';
import { platformStatusQueryOptions, type PlatformStatus } from '@/lib/api/get-platform-status';
import { formatDateTime } from '@/lib/format-date';
import { useTopic } from '@/lib/realtime';

/** The time of the stop: HH:mm on its day, with the date on a later one. */
function since(at: string, now: Date): string {
  const d = dayjs(at);
  return d.isSame(now, 'day') ? d.format('HH:mm') : formatDateTime(at);
}

export function tradingStoppedText(at: string, now = new Date()): string {
  return `Trading is stopped for your company (kill switch) since ${since(at, now)}. New orders are refused until a venue admin re-enables it.`;
}

/**
 * Tells a trader why their orders were cancelled and new ones are refused: their company
 * is stopped by the kill switch (DESIGN section 4; GET /platform/status trading_stopped_at).
 */
export function TradingStoppedAlert({ status }: { status: PlatformStatus | undefined }) {
  const queryClient = useQueryClient();
  // The stop cancels this trader's working orders, which the orders topic tells at once:
  // the status is read again on a cancellation rather than at the next poll.
  useTopic('/user/topic/orders', (message) => {
    if (message.type === 'ORDER_UPDATED' && message.state === 'CANCELLED') {
      void queryClient.invalidateQueries({ queryKey: platformStatusQueryOptions().queryKey });
    }
  });
  const at = status?.trading_stopped_at;
  if (!at) return null;
  return (
    <Alert severity="error" variant="filled" data-testid="trading-stopped" title={formatDateTime(at)}>
      {tradingStoppedText(at)}
    </Alert>
  );
}
