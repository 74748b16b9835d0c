import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { ErrorCard } from '@/components/errors/error-card';
import { OnboardingTip, useNextTip } from '@/components/ui/onboarding-tip';
import { PageLoader } from '@/components/ui/page-loader';
import { AlwaysOpenNotice } from '@/features/dashboard/components/always-open-notice';
import { ClosingWarning } from '@/features/dashboard/components/closing-warning';
import { EmptyDashboard } from '@/features/dashboard/components/empty-dashboard';
import { TradingStoppedAlert } from '@/features/dashboard/components/trading-stopped-alert';
import { useAddedBooks } from '@/features/dashboard/hooks/use-added-books';
import { AddBook } from '@/features/order-book/components/add-book';
import { OrderBook } from '@/features/order-book/components/order-book';
import { OrderDrawer, type OrderDrawerTarget } from '@/features/order-book/components/order-drawer';
import { useOrders } from '@/features/parent-orders/api/get-orders';
import { useParentOrders, type ParentOrder } from '@/features/parent-orders/api/get-parent-orders';
import { allocationsQueryKey } from '@/features/parent-orders/api/get-allocation';
import { applyOrderFrame } from '@/features/parent-orders/api/order-frames';
import { CreateParentOrderDrawer } from '@/features/parent-orders/components/create-parent-order-drawer';
import { LoadFromExecutionSystem } from '@/features/parent-orders/components/load-from-execution-system';
import { ParentOrderList } from '@/features/parent-orders/components/parent-order-list';
import { ActiveRfqs } from '@/features/rfqs/components/active-rfqs';
import { CreateRfqDrawer, type RfqParent } from '@/features/rfqs/components/create-rfq-drawer';
import { IncomingRfqs } from '@/features/rfqs/components/incoming-rfqs';
import type { Instrument, Order } from '@/lib/api/dto';
import { useCurrentUser } from '@/lib/api/get-me';
import { anyCalendar, calendarOf, usePlatformStatus } from '@/lib/api/get-platform-status';
import { instrumentQueryOptions } from '@/lib/api/get-instrument';
import { tradingKeys } from '@/lib/api/trading-keys';
import type { Decimal } from '@/lib/decimal';
import type { LadderRow } from '@/lib/trading-format';
import { useTopic } from '@/lib/realtime';
import { canTrade } from '@/lib/permissions';
import { OperatorHome } from '@/components/layout/operator-home';

// The trader dashboard composes the dashboard, parent-orders and order-book features
// here, since features never import each other.

/** Spec section 2: up to 4 order books side by side. */
export const MAX_BOOKS = 4;

/** The dashboard: the trader's, or the operator's for a user who cannot trade. */
export default function DashboardRoute() {
  const user = useCurrentUser();
  return canTrade(user) ? <TraderDashboard /> : <OperatorHome user={user} />;
}

/** The trader dashboard of spec section 2: parent orders on the left, order books beside them. */
function TraderDashboard() {
  const user = useCurrentUser();
  const queryClient = useQueryClient();
  const parents = useParentOrders();
  const orders = useOrders();
  const status = usePlatformStatus();
  const added = useAddedBooks(user.user_id);
  const [creating, setCreating] = useState(false);
  const [target, setTarget] = useState<OrderDrawerTarget | null>(null);
  const [rfqParent, setRfqParent] = useState<RfqParent | null>(null);
  // The book the trader asked for last (from a parent card or a new parent order) is shown first.
  const [pinned, setPinned] = useState<string | null>(null);
  // The parent order created last on this screen: its card is brought into view and marked.
  const [created, setCreated] = useState<string | null>(null);

  // Our own order changes arrive at once, as the lists show them: written in, not read
  // again (ADR 0029). The lists still poll every 15 s: a colleague's changes reach only
  // them. 'Outside band' follows the pushed band itself (ADR 0034).
  useTopic(
    '/user/topic/orders',
    (message) => applyOrderFrame(queryClient, message),
    (since) => {
      // A read under way since the subscription is current: it is not started again.
      const older = { predicate: (q: { state: { dataUpdatedAt: number } }) => q.state.dataUpdatedAt < since };
      void queryClient.invalidateQueries({ queryKey: tradingKeys.parentOrders, ...older }, { cancelRefetch: false });
      void queryClient.invalidateQueries({ queryKey: tradingKeys.orders, ...older }, { cancelRefetch: false });
      void queryClient.invalidateQueries({ queryKey: allocationsQueryKey, ...older }, { cancelRefetch: false });
    },
  );

  const drawerOpen = creating || target !== null || rfqParent !== null;
  // The first-parent-order tip belongs to the empty dashboard; with orders, the book's tip comes next.
  const firstTip = useNextTip(['FIRST_PARENT_ORDER']);
  const bookTip = useNextTip(['INTERACT_WITH_ORDERBOOK', 'TAKING_LIQUIDITY_IN_ORDERBOOK']);

  if (parents.isPending) return <PageLoader />;
  if (parents.isError) return <ErrorCard error={parents.error} onRetry={() => void parents.refetch()} />;

  // A company stopped by the kill switch sends nothing new: its controls are disabled
  // while the alert says why (issue 28.14); cancels still work.
  const stopped = Boolean(status.data?.trading_stopped_at);
  // Each instrument follows its exchange's calendar, else the venue's (ADR 0052); with
  // exchange calendars, an instrument not read yet counts as closed.
  const isOpen = (instrument: Pick<Instrument, 'exchange_iso_code'> | undefined) => {
    const s = status.data;
    if (!s || stopped || (!instrument && s.exchanges.length > 0)) return false;
    return calendarOf(s, instrument?.exchange_iso_code).open;
  };
  // The server checks the chosen instrument's own calendar: any calendar taking parent orders will do here.
  const canCreate = status.data !== undefined && anyCalendar(status.data, 'parent_orders_open') && !stopped;
  // GET /parent-orders?state=ACTIVE,FILLED: the list of spec section 4.
  const active = parents.data;
  // Newest parent orders first, so a new one's book is among the 4 shown.
  const newestFirst = [...active].sort((a, b) => b.created_at.localeCompare(a.created_at));
  const fromParents = [...new Set(newestFirst.map((p) => p.instrument_id))];
  const wanted = [...new Set([...(pinned ? [pinned] : []), ...fromParents, ...added.ids])];
  const bookIds = wanted.slice(0, MAX_BOOKS);
  // Instruments of parent orders whose books do not fit: said, never dropped in silence (issue 28.12).
  const hidden = fromParents.filter((id) => !bookIds.includes(id)).length;

  // The drawers work on the instrument's current band; a failed fetch is already in the error snackbar.
  // A row with another firm's quantity on the far side of a parent opens the take drawer
  // for those parents; any other row works the quantity there.
  const work = (instrumentId: string, workable: ParentOrder[], price: Decimal, row: LadderRow) => {
    const far = (p: ParentOrder) => (p.direction === 'BUY' ? row.sell - row.ownSell : row.buy - row.ownBuy);
    return queryClient.fetchQuery(instrumentQueryOptions(instrumentId)).then(
      (instrument) => {
        // Nothing matches before the open of the instrument's calendar: there, a row only works the quantity.
        const takers = isOpen(instrument) ? workable.filter((p) => far(p) > 0) : [];
        const first = takers[0];
        setTarget(
          first
            ? { kind: 'take', instrument, parents: takers, price, quantity: far(first) }
            : { kind: 'work', instrument, parents: workable, price },
        );
      },
      () => {},
    );
  };
  const editOrder = (order: Order, parent: ParentOrder) =>
    queryClient.fetchQuery(instrumentQueryOptions(order.instrument_id)).then(
      (instrument) => setTarget({ kind: 'edit', instrument, parent, order }),
      () => {},
    );

  const requestQuotes = (p: ParentOrder) =>
    queryClient.fetchQuery(instrumentQueryOptions(p.instrument_id)).then(
      (instrument) =>
        setRfqParent({
          parent_order_id: p.parent_order_id,
          direction: p.direction,
          tradable: p.quantities.tradable,
          instrumentName: instrument.name,
          minQuantity: instrument.min_quantity,
        }),
      () => {},
    );

  const drawers = (
    <>
      <CreateRfqDrawer parent={rfqParent} onClose={() => setRfqParent(null)} />
      <ActiveRfqs />
      <CreateParentOrderDrawer
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(p) => {
          setPinned(p.instrument_id);
          setCreated(p.parent_order_id);
        }}
      />
      <OrderDrawer target={target} onClose={() => setTarget(null)} />
      {status.data && <ClosingWarning status={status.data} />}
    </>
  );

  if (active.length === 0 && bookIds.length === 0) {
    return (
      <>
        <EmptyDashboard
          status={status.data}
          aside={<IncomingRfqs />}
          action={
            <Stack spacing={2}>
              <Stack direction="row" spacing={2} useFlexGap sx={{ flexWrap: 'wrap' }}>
                <OnboardingTip step="FIRST_PARENT_ORDER" show={firstTip !== null && !drawerOpen} placement="bottom">
                  <Button variant="contained" onClick={() => setCreating(true)} disabled={!canCreate}>
                    Add parent order
                  </Button>
                </OnboardingTip>
                <AddBook variant="button" onAdd={added.add} />
              </Stack>
              <LoadFromExecutionSystem disabled={!canCreate} />
            </Stack>
          }
        />
        {drawers}
      </>
    );
  }

  // The drawers keep their place in the tree (the second child) in both views: the first
  // parent order's frame may switch the view while its create drawer is still open.
  return (
    <>
      <Stack spacing={3}>
        <Typography variant="h1">Dashboard</Typography>
        <TradingStoppedAlert status={status.data} />
        <AlwaysOpenNotice status={status.data} />
        <IncomingRfqs />
        <Stack direction={{ xs: 'column', md: 'row' }} spacing={3} sx={{ alignItems: 'flex-start' }}>
          <ParentOrderList
            parents={newestFirst}
            created={created}
            orders={orders.data ?? []}
            isOpen={isOpen}
            canCreate={canCreate}
            onAdd={() => setCreating(true)}
            onEdit={(o, p) => void editOrder(o, p)}
            onShowBook={setPinned}
            onRfq={(p) => void requestQuotes(p)}
          />
          {/* Four books fit in one row from a 1280 px window (BOOK_MIN_WIDTH); narrower, they wrap
              onto the next row rather than being cut off at the right edge. */}
          <Box
            data-testid="order-books"
            sx={{ display: 'flex', flexWrap: 'wrap', gap: 2, flexGrow: 1, minWidth: 0, width: '100%', overflowX: 'auto', pb: 1 }}
          >
            {bookIds.map((id, n) => {
              const workable = active.filter((p) => p.instrument_id === id && p.state === 'ACTIVE' && p.quantities.tradable > 0);
              return (
                <OrderBook
                  key={id}
                  instrumentId={id}
                  status={status.data}
                  showTip={n === 0 && bookTip === 'INTERACT_WITH_ORDERBOOK' && !drawerOpen}
                  showTakeTip={n === 0 && bookTip === 'TAKING_LIQUIDITY_IN_ORDERBOOK' && !drawerOpen}
                  onWork={workable.length > 0 && !stopped ? (price, row) => void work(id, workable, price, row) : undefined}
                  onRemove={
                    fromParents.includes(id)
                      ? undefined
                      : () => {
                          added.remove(id);
                          if (pinned === id) setPinned(null);
                        }
                  }
                />
              );
            })}
            {bookIds.length < MAX_BOOKS && <AddBook onAdd={added.add} />}
            {hidden > 0 && (
              <Typography variant="body2" color="text.secondary" role="status" sx={{ flexBasis: '100%' }} data-testid="hidden-books">
                {hidden === 1 ? 'One more instrument has' : `${hidden} more instruments have`} parent orders: {MAX_BOOKS} books show at
                once. Click an instrument&apos;s name on its parent card to show its book here.
              </Typography>
            )}
          </Box>
        </Stack>
      </Stack>
      {drawers}
    </>
  );
}

