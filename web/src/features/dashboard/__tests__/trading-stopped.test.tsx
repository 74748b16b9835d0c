import dayjs from 'dayjs';
import { describe, expect, it } from 'vitest';
import { tradingStoppedText } from '@/features/dashboard/components/trading-stopped-alert';
import { addParent, stomp, trading } from '@/testing/mocks/order-handlers';
import { renderApp, screen } from '@/testing/test-utils';

/** Today at 10:42 local time, as the server would send it. */
const stoppedToday = () => dayjs().hour(10).minute(42).second(0).millisecond(0).toISOString();

const TEXT = 'Trading is stopped for your company (kill switch) since 10:42. New orders are refused until a venue admin re-enables it.';

describe('kill switch on the dashboard', () => {
  it('tells a trader of a stopped company why, on the empty dashboard', async () => {
    trading.status = { open: true, parent_orders_open: true, closing_soon: false, trading_stopped_at: stoppedToday() };
    renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    const alert = await screen.findByTestId('trading-stopped');
    expect(alert).toHaveTextContent(TEXT);
    expect(alert).toHaveAttribute('role', 'alert');
    expect(alert.className).toMatch(/colorError/);
  });

  it('shows nothing while the company trades', async () => {
    addParent();
    renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('heading', { name: 'Dashboard' })).toBeInTheDocument();
    await screen.findByRole('listitem', { name: /Buy Euribor/ });
    expect(screen.queryByTestId('trading-stopped')).not.toBeInTheDocument();
  });

  it('appears as soon as the stop cancels an order, without waiting for the next poll', async () => {
    const parent = addParent();
    renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    await screen.findByRole('listitem', { name: /Buy Euribor/ });
    await expect.poll(() => stomp.subscriptions.some((s) => s.destination === '/user/topic/orders')).toBe(true);
    expect(screen.queryByTestId('trading-stopped')).not.toBeInTheDocument();

    trading.status = { ...trading.status, trading_stopped_at: stoppedToday() };
    stomp.publish('/user/topic/orders', { type: 'ORDER_UPDATED', order_id: 'o-1', parent_order_id: parent.parent_order_id, instrument_id: 'i-1', state: 'CANCELLED' });
    expect(await screen.findByTestId('trading-stopped', {}, { timeout: 3_000 })).toHaveTextContent(TEXT);
  });

  it('gives the date as well when the stop began on an earlier day', () => {
    const at = '2026-11-20T15:05:00Z';
    expect(tradingStoppedText(at, new Date('2026-11-23T09:00:00Z'))).toBe(
      `Trading is stopped for your company (kill switch) since ${dayjs(at).format('DD/MM/YYYY HH:mm')}. New orders are refused until a venue admin re-enables it.`,
    );
    expect(tradingStoppedText(at, new Date(at))).toContain(`since ${dayjs(at).format('HH:mm')}.`);
  });
});
