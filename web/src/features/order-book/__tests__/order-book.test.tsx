import { within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { db } from '@/testing/mocks/db';
import { addParent, exchangeStatus, stomp, trading, type MockInstrument } from '@/testing/mocks/order-handlers';
import { renderApp, screen } from '@/testing/test-utils';

const ALL_TIPS_READ = [
  {
    key: 'TOOLTIPS',
    value: ['FIRST_PARENT_ORDER', 'INTERACT_WITH_ORDERBOOK', 'LEAVING_LIQUIDITY_IN_ORDERBOOK', 'FIRST_ICEBERG_ORDER'].map((key) => ({ key, read: true })),
  },
];


function signIn(options: { fakeTimers?: boolean } = {}) {
  db.user().ui_metadata = ALL_TIPS_READ;
  return renderApp('/dashboard', { signedInAs: 'trader@acme.test', ...options });
}

async function book(name: RegExp | string) {
  return screen.findByRole('region', { name: typeof name === 'string' ? `Order book ${name}` : name });
}

const rowTexts = (region: HTMLElement) => within(region).getAllByTestId('ladder-row').map((r) => r.getAttribute('data-price'));

describe('order book', () => {
  it('shows the ladder from min − 2 to max + 2 ticks in k, own marks and the placeholder price', async () => {
    addParent();
    trading.levels.set('i-1', [
      { price: -0.025, buy_quantity: 2100, sell_quantity: 0, own_buy_quantity: 1000, own_sell_quantity: 0 },
      { price: -0.02, buy_quantity: 0, sell_quantity: 500, own_buy_quantity: 0, own_sell_quantity: 0 },
    ]);
    signIn();
    const region = await book('Euribor 3M Dec26-Mar27');
    await expect.poll(() => rowTexts(region).length).toBe(10);
    expect(rowTexts(region)).toEqual(['-0.005', '-0.010', '-0.015', '-0.020', '-0.025', '-0.030', '-0.035', '-0.040', '-0.045', '-0.050']);
    const rows = within(region).getAllByTestId('ladder-row');
    expect(rows[0]).toHaveAttribute('aria-disabled', 'true');
    expect(rows[0]).not.toHaveAttribute('role', 'button');
    expect(rows[4]).toHaveAttribute('role', 'button');
    expect(rows[4]).toHaveTextContent('2.1k');
    expect(within(rows[4] as HTMLElement).getByLabelText('Includes your orders')).toBeInTheDocument();
    expect(within(rows[3] as HTMLElement).queryByLabelText('Includes your orders')).not.toBeInTheDocument();
    expect(within(region).getByTestId('best-buy')).toHaveTextContent('-0.025');
    expect(within(region).getByTestId('best-sell')).toHaveTextContent('-0.020');
    expect(within(region).getByText('Dec26')).toBeInTheDocument();
    expect(within(region).getByText('Mar27')).toBeInTheDocument();
  });

  it('shows the placeholder, the cut name and the reversed legs', async () => {
    addParent({ instrument_id: 'i-2', quantity: 5000, quantities: { tradable: 5000, working: 0, matched: 0 } });
    signIn();
    const region = await book('Euro-Bund Dec26-Mar27 calendar spread block');
    expect(await within(region).findByText('Euro-Bund Dec26-Mar27 calendar spre…')).toBeInTheDocument();
    expect(within(region).getByTestId('best-buy')).toHaveTextContent('--.---');
    expect(within(region).getByText('Reversed')).toBeInTheDocument();
    const legs = within(region).getAllByText(/^(Dec26|Mar27)$/).map((e) => e.textContent);
    expect(legs).toEqual(['Mar27', 'Dec26']);
  });

  it('shows at most 4 books, newest parent first, and a card brings its book back', async () => {
    for (const n of [3, 4, 5]) {
      trading.instruments.push({ ...(trading.instruments[0] as MockInstrument), instrument_id: `i-${n}`, name: `Instrument ${n}` });
    }
    ['i-1', 'i-2', 'i-3', 'i-4', 'i-5'].forEach((instrument_id, n) => addParent({ instrument_id, created_at: `2026-11-23T10:0${n}:00Z` }));
    const { user } = signIn();
    await book('Instrument 5');
    await expect.poll(() => screen.getAllByRole('region', { name: /^Order book/ }).map((r) => r.getAttribute('aria-label'))).toEqual([
      'Order book Instrument 5', 'Order book Instrument 4', 'Order book Instrument 3', 'Order book Euro-Bund Dec26-Mar27 calendar spread block',
    ]);
    expect(screen.queryByRole('button', { name: 'Add order book' })).not.toBeInTheDocument();
    // The fifth is not dropped in silence (issue 28.12).
    expect(screen.getByTestId('hidden-books')).toHaveTextContent('One more instrument has parent orders: 4 books show at once.');
    await user.click(screen.getByRole('button', { name: 'Show the order book of Euribor 3M Dec26-Mar27' }));
    expect((await book('Euribor 3M Dec26-Mar27')).getAttribute('aria-label')).toBe('Order book Euribor 3M Dec26-Mar27');
    expect(screen.getAllByRole('region', { name: /^Order book/ })[0]).toHaveAttribute('aria-label', 'Order book Euribor 3M Dec26-Mar27');
    expect(screen.getAllByRole('region', { name: /^Order book/ })).toHaveLength(4);
  });

  it('works a row from the keyboard', async () => {
    addParent();
    const { user } = signIn();
    const row = await within(await book('Euribor 3M Dec26-Mar27')).findByRole('button', { name: 'Price -0.030' });
    row.focus();
    await user.keyboard('{Enter}');
    const form = (await screen.findByRole('heading', { name: 'Work order' })).closest('form') as HTMLElement;
    expect(within(form).getByRole('textbox', { name: 'Limit price' })).toHaveValue('-0.030');
  });

  it('writes pushed frames into the screen without reading again, and reads again after a missed frame', async () => {
    addParent();
    trading.levels.set('i-1', [{ price: -0.025, buy_quantity: 2000, sell_quantity: 0, own_buy_quantity: 1000, own_sell_quantity: 0 }]);
    signIn();
    const region = await book('Euribor 3M Dec26-Mar27');
    await expect.poll(() => stomp.subscriptions.map((s) => s.destination)).toContain('/topic/instruments/i-1/book');
    await expect.poll(() => stomp.subscriptions.map((s) => s.destination)).toContain('/user/topic/book-shares');
    expect(stomp.connectHeaders[0]?.Authorization).toMatch(/^Bearer /);
    await within(region).findByRole('button', { name: 'Price -0.025, buy 2k' });
    const reads = () => trading.requests.filter((r) => r.method === 'GET' && /^\/api\/instruments\/i-1(\/book|\/market-data)?$/.test(r.path)).length;
    const before = reads();
    expect(within(region).queryByText('3k')).not.toBeInTheDocument();
    // Another firm sells 3,000 at -0.030 and the band moves: the frame carries it all.
    const frame = (seq: number, sell: number) => ({
      seq, instrument_id: 'i-1', tick_size: 0.005, min_tick_price: -0.045, max_tick_price: -0.02, best_buy_price: -0.025, best_sell_price: -0.03,
      levels: [
        { price: -0.025, buy_quantity: 2000, sell_quantity: 0 },
        { price: -0.03, buy_quantity: 0, sell_quantity: sell },
      ],
    });
    stomp.publish('/topic/instruments/i-1/book', frame(1, 3000));
    expect(await within(region).findByRole('button', { name: 'Price -0.030, sell 3k' })).toBeInTheDocument();
    // The own share read before stays marked; the band's new low edge shows its rows.
    expect(within(within(region).getByRole('button', { name: 'Price -0.025, buy 2k' })).getByLabelText('Includes your orders')).toBeInTheDocument();
    expect(await within(region).findByRole('button', { name: /^Price -0\.045/ })).toBeInTheDocument();
    // Our share leaves: its frame says so, still with no read.
    stomp.publish('/user/topic/book-shares', { seq: 1, instrument_id: 'i-1', levels: [] });
    await expect.poll(() => within(region).queryByLabelText('Includes your orders')).toBeNull();
    stomp.publish('/topic/instruments/i-1/book', frame(2, 4000));
    expect(await within(region).findByRole('button', { name: 'Price -0.030, sell 4k' })).toBeInTheDocument();
    expect(reads()).toBe(before);

    // Frame 3 never came: after frame 4 the screen reads the book, market data and instrument again.
    trading.levels.set('i-1', [{ price: -0.03, buy_quantity: 0, sell_quantity: 6000, own_buy_quantity: 0, own_sell_quantity: 0 }]);
    stomp.publish('/topic/instruments/i-1/book', frame(4, 5000));
    expect(await within(region).findByRole('button', { name: 'Price -0.030, sell 6k' })).toBeInTheDocument();
    await expect.poll(() => reads()).toBeGreaterThanOrEqual(before + 3);
  });

  it('says when prices are stale, from the read and from a frame, and clears it when they return', async () => {
    addParent();
    trading.instruments[0]!.prices_stale = true;
    signIn();
    const region = await book('Euribor 3M Dec26-Mar27');
    const note = 'No recent exchange price: takes and accepts wait until prices return.';
    expect(await within(region).findByText('Prices stale')).toBeInTheDocument();
    expect(within(region).getByRole('status')).toHaveTextContent(note);
    await expect.poll(() => stomp.subscriptions.map((s) => s.destination)).toContain('/topic/instruments/i-1/book');
    const frame = (seq: number, stale: boolean) => ({
      seq, instrument_id: 'i-1', tick_size: 0.005, min_tick_price: -0.04, max_tick_price: -0.015, best_buy_price: null, best_sell_price: null,
      prices_stale: stale, levels: [],
    });
    stomp.publish('/topic/instruments/i-1/book', frame(1, false));
    await expect.poll(() => within(region).queryByText('Prices stale')).toBeNull();
    expect(within(region).queryByText(note)).not.toBeInTheDocument();
    stomp.publish('/topic/instruments/i-1/book', frame(2, true));
    expect(await within(region).findByText('Prices stale')).toBeInTheDocument();
  });

  it('overlays the closed message and offers no row outside hours', async () => {
    addParent();
    trading.status = { open: false, parent_orders_open: false, closing_soon: false };
    signIn();
    const region = await book('Euribor 3M Dec26-Mar27');
    expect(await within(region).findByText('Upstairs is closed')).toBeInTheDocument();
    await expect.poll(() => rowTexts(region).length).toBe(10);
    expect(within(region).queryAllByRole('button', { name: /^Price/ })).toHaveLength(0);
  });

  describe("on an exchange's calendar (ADR 0052)", () => {
    const BUND = 'Euro-Bund Dec26-Mar27 calendar spread block';

    it("overlays the exchange's holiday and next opening; an instrument on the venue's hours stays open", async () => {
      // Friday 25 December 2026, 10:00 UK time.
      vi.useFakeTimers({ shouldAdvanceTime: true, now: new Date('2026-12-25T10:00:00Z') });
      addParent();
      addParent({ instrument_id: 'i-2', quantity: 5000, quantities: { tradable: 5000, working: 0, matched: 0 } });
      // The Bund's MIC has no calendar: it follows the venue's, open now.
      trading.instruments[1]!.exchange_iso_code = 'XLON';
      trading.status = {
        open: true,
        parent_orders_open: true,
        closing_soon: false,
        exchanges: [exchangeStatus({ open: false, parent_orders_open: false, holiday: { date: '2026-12-25', name: 'Christmas Day' }, next_open: '2026-12-28T08:00:00Z' })],
      };
      signIn();
      const euribor = await book('Euribor 3M Dec26-Mar27');
      const overlay = await within(euribor).findByText('ICE Futures Europe is closed');
      expect(within(euribor).getByText('Closed today for Christmas Day. It opens again on Monday 28 December at 8:00 AM UK time.')).toBeInTheDocument();
      expect(within(euribor).getByText('Operating hours are 8:00 AM to 6:00 PM (UK time, Monday to Friday only).')).toBeInTheDocument();
      expect(overlay.closest('[role="status"]')).not.toBeNull();
      expect(within(euribor).queryByText('Upstairs is closed')).not.toBeInTheDocument();
      await expect.poll(() => rowTexts(euribor).length).toBe(10);
      expect(within(euribor).queryAllByRole('button', { name: /^Price/ })).toHaveLength(0);

      const bund = await book(BUND);
      await expect.poll(() => within(bund).queryAllByRole('button', { name: /^Price/ }).length).toBeGreaterThan(0);
      expect(within(bund).queryByText(/is closed/)).not.toBeInTheDocument();
    });

    it("lets orders be worked on an open exchange while the venue's own hours are closed, and says when it opens", async () => {
      addParent();
      addParent({ instrument_id: 'i-2', quantity: 5000, quantities: { tradable: 5000, working: 0, matched: 0 } });
      trading.instruments[1]!.exchange_iso_code = 'XEUR';
      trading.status = {
        open: false,
        parent_orders_open: false,
        closing_soon: false,
        exchanges: [
          exchangeStatus(),
          exchangeStatus({ mic: 'XEUR', name: 'Eurex', time_zone: 'Europe/Berlin', open_time: '01:10', close_time: '22:00', open: false, parent_orders_open: true }),
        ],
      };
      signIn();
      const euribor = await book('Euribor 3M Dec26-Mar27');
      await expect.poll(() => within(euribor).queryAllByRole('button', { name: /^Price/ }).length).toBeGreaterThan(0);
      expect(within(euribor).queryByText(/is closed/)).not.toBeInTheDocument();
      // Before Eurex's open: orders may be worked, and wait for it.
      const bund = await book(BUND);
      expect(await within(bund).findByText('Opens at 1:10 AM: orders you work now wait for the open.')).toBeInTheDocument();
      await expect.poll(() => within(bund).queryAllByRole('button', { name: /^Price/ }).length).toBeGreaterThan(0);
      expect(within(bund).queryByText(/is closed/)).not.toBeInTheDocument();
    });

    it("follows the venue's calendar for an instrument whose MIC has no exchange", async () => {
      addParent();
      trading.instruments[0]!.exchange_iso_code = 'XLON';
      trading.status = { open: false, parent_orders_open: false, closing_soon: false, exchanges: [exchangeStatus()] };
      signIn();
      const euribor = await book('Euribor 3M Dec26-Mar27');
      expect(await within(euribor).findByText('Upstairs is closed')).toBeInTheDocument();
      expect(within(euribor).getByText('Operating hours are 9:00 AM to 5:00 PM (UK time, Monday to Friday only).')).toBeInTheDocument();
    });
  });
});
