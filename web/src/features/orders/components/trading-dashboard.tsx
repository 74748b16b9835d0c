import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import Autocomplete from '@mui/material/Autocomplete';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import ButtonBase from '@mui/material/ButtonBase';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogTitle from '@mui/material/DialogTitle';
import Stack from '@mui/material/Stack';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import AddchartOutlined from '@mui/icons-material/AddchartOutlined';
import { ErrorCard } from '@/components/errors/error-card';
import { PageLoader } from '@/components/ui/page-loader';
import { EmptyDashboard } from './empty-dashboard';
import { useCurrentUser } from '@/lib/api/get-me';
import type { Decimal } from '@/lib/decimal';
import { useTopic } from '@/lib/realtime';
import { useDebounced } from '@/lib/use-debounced';
import { instrumentQuery, keys, useInstruments, useOrders, useParentOrders, usePlatformStatus } from '../api/queries';
import type { Instrument, Order, ParentOrder } from '../api/schemas';
import { truncateName } from '../lib/format';
import { ClosingWarning } from './closing-warning';
import { CreateParentOrderDrawer, INSTRUMENT_FILTER_DEBOUNCE_MS } from './create-parent-order-drawer';
import { OnboardingTip, useNextTip } from './onboarding-tip';
import { BOOK_HEIGHT, BOOK_MIN_WIDTH, OrderBook } from './order-book';
import { OrderDrawer, type OrderDrawerTarget } from './order-drawer';
import { ParentOrderList } from './parent-order-list';

/** Spec section 2: up to 4 order books side by side. */
export const MAX_BOOKS = 4;

/** Books the trader added by hand (besides those of their parent orders), kept per user in this browser. */
function useAddedBooks(userId: string) {
  const key = `upstairs.books.${userId}`;
  const [ids, setIds] = useState<string[]>(() => {
    try {
      const v: unknown = JSON.parse(localStorage.getItem(key) ?? '[]');
      return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
    } catch {
      return [];
    }
  });
  const save = (next: string[]) => {
    localStorage.setItem(key, JSON.stringify(next));
    setIds(next);
  };
  return {
    ids,
    add: (id: string) => !ids.includes(id) && save([...ids, id]),
    remove: (id: string) => save(ids.filter((x) => x !== id)),
  };
}

/** The add tile beside the books, or a plain button on the empty dashboard. */
function AddBook({ onAdd, variant = 'tile' }: { onAdd: (id: string) => void; variant?: 'tile' | 'button' }) {
  const [open, setOpen] = useState(false);
  const [search, setSearch] = useState('');
  const filter = useDebounced(search, INSTRUMENT_FILTER_DEBOUNCE_MS);
  const instruments = useInstruments(filter, open);
  const [choice, setChoice] = useState<Instrument | null>(null);
  const close = () => {
    setOpen(false);
    setChoice(null);
    setSearch('');
  };
  return (
    <>
      {variant === 'button' ? (
        <Button variant="outlined" onClick={() => setOpen(true)} startIcon={<AddchartOutlined />}>
          Add order book
        </Button>
      ) : (
        <ButtonBase
          onClick={() => setOpen(true)}
          sx={{ height: BOOK_HEIGHT, flex: '1 1 0', minWidth: BOOK_MIN_WIDTH, maxWidth: 340, border: 2, borderStyle: 'dashed', borderColor: 'divider', borderRadius: 2, flexDirection: 'column', gap: 1, color: 'text.secondary', '&:hover': { borderColor: 'primary.main', color: 'primary.main' } }}
        >
          <AddchartOutlined sx={{ fontSize: 40 }} />
          <Typography variant="subtitle1">Add order book</Typography>
        </ButtonBase>
      )}
      <Dialog open={open} onClose={close} maxWidth="xs" fullWidth aria-labelledby="add-book-title">
        <DialogTitle id="add-book-title">Add order book</DialogTitle>
        <DialogContent>
          <Autocomplete
            sx={{ mt: 1 }}
            options={instruments.data ?? []}
            loading={instruments.isFetching}
            value={choice}
            onChange={(_, v) => setChoice(v)}
            inputValue={search}
            onInputChange={(_, v) => setSearch(v)}
            filterOptions={(x) => x}
            getOptionLabel={(i) => truncateName(i.name)}
            getOptionKey={(i) => i.instrument_id}
            isOptionEqualToValue={(a, b) => a.instrument_id === b.instrument_id}
            renderInput={(params) => <TextField {...params} label="Instrument" autoFocus />}
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={close}>Cancel</Button>
          <Button
            variant="contained"
            disabled={!choice}
            onClick={() => {
              if (choice) onAdd(choice.instrument_id);
              close();
            }}
          >
            Add
          </Button>
        </DialogActions>
      </Dialog>
    </>
  );
}

/** The trader dashboard of spec section 2: parent orders on the left, order books beside them. */
export function TradingDashboard() {
  const user = useCurrentUser();
  const queryClient = useQueryClient();
  const parents = useParentOrders();
  const orders = useOrders();
  const status = usePlatformStatus();
  const added = useAddedBooks(user.user_id);
  const [creating, setCreating] = useState(false);
  const [target, setTarget] = useState<OrderDrawerTarget | null>(null);
  // The book the trader asked for last (from a parent card or a new parent order) is shown first.
  const [pinned, setPinned] = useState<string | null>(null);

  // Our own order changes arrive at once; the 15 s polls stay as the fallback.
  // A child order's change moves its parent's quantities too; a parent's alone leaves the child orders as they are.
  useTopic('/user/topic/orders', (message) => {
    void queryClient.invalidateQueries({ queryKey: keys.parentOrders });
    if (message.type === 'ORDER_UPDATED') void queryClient.invalidateQueries({ queryKey: keys.orders });
  });

  const drawerOpen = creating || target !== null;
  // The first-parent-order tip belongs to the empty dashboard; with orders, the book's tip comes next.
  const firstTip = useNextTip(['FIRST_PARENT_ORDER']);
  const bookTip = useNextTip(['INTERACT_WITH_ORDERBOOK']);

  if (parents.isPending) return <PageLoader />;
  if (parents.isError) return <ErrorCard error={parents.error} onRetry={() => void parents.refetch()} />;

  const open = status.data?.open ?? false;
  const canCreate = status.data?.parent_orders_open ?? false;
  // GET /parent-orders?state=ACTIVE,FILLED: the list of spec section 4.
  const active = parents.data;
  // Newest parent orders first, so a new one's book is among the 4 shown.
  const newestFirst = [...active].sort((a, b) => b.created_at.localeCompare(a.created_at));
  const fromParents = [...new Set(newestFirst.map((p) => p.instrument_id))];
  const bookIds = [...new Set([...(pinned ? [pinned] : []), ...fromParents, ...added.ids])].slice(0, MAX_BOOKS);

  // The drawers work on the instrument's current band; a failed fetch is already in the error snackbar.
  const work = (instrumentId: string, workable: ParentOrder[], price: Decimal) =>
    queryClient.fetchQuery(instrumentQuery(instrumentId)).then(
      (instrument) => setTarget({ kind: 'work', instrument, parents: workable, price }),
      () => {},
    );
  const editOrder = (order: Order, parent: ParentOrder) =>
    queryClient.fetchQuery(instrumentQuery(order.instrument_id)).then(
      (instrument) => setTarget({ kind: 'edit', instrument, parent, order }),
      () => {},
    );

  const drawers = (
    <>
      <CreateParentOrderDrawer open={creating} onClose={() => setCreating(false)} onCreated={setPinned} />
      <OrderDrawer target={target} onClose={() => setTarget(null)} />
      {status.data && <ClosingWarning status={status.data} />}
    </>
  );

  if (active.length === 0 && bookIds.length === 0) {
    return (
      <>
        <EmptyDashboard
          open={status.data?.open ?? true}
          hours={status.data}
          action={
            <Stack direction="row" spacing={2} useFlexGap sx={{ flexWrap: 'wrap' }}>
              <OnboardingTip step="FIRST_PARENT_ORDER" show={firstTip !== null && !drawerOpen} placement="bottom">
                <Button variant="contained" onClick={() => setCreating(true)} disabled={!canCreate}>
                  Add parent order
                </Button>
              </OnboardingTip>
              <AddBook variant="button" onAdd={added.add} />
            </Stack>
          }
        />
        {drawers}
      </>
    );
  }

  return (
    <Stack spacing={3}>
      <Typography variant="h1">Dashboard</Typography>
      <Stack direction={{ xs: 'column', md: 'row' }} spacing={3} sx={{ alignItems: 'flex-start' }}>
        <ParentOrderList
          parents={active}
          orders={orders.data ?? []}
          open={open}
          canCreate={canCreate}
          onAdd={() => setCreating(true)}
          onEdit={(o, p) => void editOrder(o, p)}
          onShowBook={setPinned}
        />
        <Box sx={{ display: 'flex', gap: 2, flexGrow: 1, minWidth: 0, width: '100%', overflowX: 'auto', pb: 1 }}>
          {bookIds.map((id, n) => {
            const workable = active.filter((p) => p.instrument_id === id && p.state === 'ACTIVE' && p.quantities.tradable > 0);
            return (
              <OrderBook
                key={id}
                instrumentId={id}
                status={status.data}
                showTip={n === 0 && bookTip !== null && !drawerOpen}
                onWork={workable.length > 0 ? (price) => void work(id, workable, price) : undefined}
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
        </Box>
      </Stack>
      {drawers}
    </Stack>
  );
}

