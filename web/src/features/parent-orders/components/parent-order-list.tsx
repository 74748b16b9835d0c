import { Fragment, useEffect, useRef, useState } from 'react';
import { keyframes } from '@mui/material/styles';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Chip from '@mui/material/Chip';
import IconButton from '@mui/material/IconButton';
import Link from '@mui/material/Link';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Tooltip from '@mui/material/Tooltip';
import Typography from '@mui/material/Typography';
import Add from '@mui/icons-material/Add';
import CancelOutlined from '@mui/icons-material/CancelOutlined';
import UndoOutlined from '@mui/icons-material/UndoOutlined';
import Close from '@mui/icons-material/Close';
import RequestQuoteOutlined from '@mui/icons-material/RequestQuoteOutlined';
import AccountTreeOutlined from '@mui/icons-material/AccountTreeOutlined';
import { useToast } from '@/components/ui/toast';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import type { CompanyRef, Instrument, Order } from '@/lib/api/dto';
import { useCurrentUser } from '@/lib/api/get-me';
import { useLiveInstrument } from '@/lib/api/get-instrument';
import { allocationSummary, formatPrice, inBand, stateLabel, truncateName } from '@/lib/trading-format';
import { useAnswerMatchRequest, usePendingMatchRequests } from '@/lib/api/match-requests';
import { formatCountdown, useSecondsLeft } from '@/lib/use-seconds-left';
import { mutateThen } from '@/lib/api/mutate-then';
import { useCancelOrder } from '../api/cancel-order';
import { useCancelParentOrder } from '../api/cancel-parent-order';
import { useAllocation, type Allocation } from '../api/get-allocation';
import type { ParentOrder } from '../api/get-parent-orders';
import { ALLOCATABLE_STATES, brokerAnswer } from '../lib/allocation-form';
import { AllocationDialog } from './allocation-dialog';
import { LoadFromExecutionSystem } from './load-from-execution-system';

const glow = keyframes`
  from { box-shadow: 0 0 0 3px rgba(25, 118, 210, 0.6); }
  to { box-shadow: 0 0 0 3px rgba(25, 118, 210, 0); }
`;

/** Spec section 9: the parent order list is at most 470 px high. */
export const LIST_MAX_HEIGHT = 470;

const number = new Intl.NumberFormat('en-GB');
const CANCELLABLE = ['WORKING', 'AWAITING_MATCH'];

type ListProps = {
  /** Newest first. */
  parents: ParentOrder[];
  /** The parent order just created on this screen: its card is scrolled into view and marked. */
  created?: string | null;
  orders: Order[];
  /**
   * Whether an instrument's calendar is open now (ADR 0052: its exchange's, else the venue's):
   * child orders are edited and RFQs sent only then. Undefined while the instrument loads.
   */
  isOpen: (instrument: Instrument | undefined) => boolean;
  canCreate: boolean;
  onAdd: () => void;
  onEdit: (order: Order, parent: ParentOrder) => void;
  /** Brings the parent's order book among the books shown. */
  onShowBook: (instrumentId: string) => void;
  /** Opens the Create RFQ drawer for the parent. */
  onRfq: (parent: ParentOrder) => void;
};

/** The parent orders on the left of the dashboard, each with its own child orders. */
export function ParentOrderList({ parents, created = null, orders, isOpen, canCreate, onAdd, onEdit, onShowBook, onRfq }: ListProps) {
  return (
    <Stack spacing={1.5} sx={{ width: { xs: '100%', md: 340 }, flex: '0 0 auto' }}>
      <Stack direction="row" sx={{ alignItems: 'center', justifyContent: 'space-between' }}>
        <Typography variant="h3" component="h2">
          Parent orders
        </Typography>
        <Button size="small" variant="contained" startIcon={<Add />} onClick={onAdd} disabled={!canCreate}>
          Add parent order
        </Button>
      </Stack>
      <LoadFromExecutionSystem compact disabled={!canCreate} />
      {parents.length === 0 && (
        <Paper variant="outlined" sx={{ p: 2 }}>
          <Typography variant="body2" color="text.secondary">
            No active orders yet. Add a parent order to work it in the book.
          </Typography>
        </Paper>
      )}
      <Stack spacing={1.5} sx={{ maxHeight: LIST_MAX_HEIGHT, overflowY: 'auto', pr: 0.5 }} role="list" aria-label="Parent orders">
        {parents.map((p) => (
          <ParentOrderCard
            key={p.parent_order_id}
            parent={p}
            created={p.parent_order_id === created}
            orders={orders.filter((o) => o.parent_order_id === p.parent_order_id)}
            isOpen={isOpen}
            onEdit={(o) => onEdit(o, p)}
            onShowBook={() => onShowBook(p.instrument_id)}
            onRfq={() => onRfq(p)}
          />
        ))}
      </Stack>
    </Stack>
  );
}

type CardProps = { parent: ParentOrder; created: boolean; orders: Order[]; isOpen: (instrument: Instrument | undefined) => boolean; onEdit: (o: Order) => void; onShowBook: () => void; onRfq: () => void };

function ParentOrderCard({ parent, created, orders, isOpen, onEdit, onShowBook, onRfq }: CardProps) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (created) ref.current?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }, [created]);
  // Its band follows the book's frames, as the ladder's does: 'Outside band' changes with it.
  const instrument = useLiveInstrument(parent.instrument_id);
  const cancel = useCancelParentOrder();
  const { showToast } = useToast();
  const [confirming, setConfirming] = useState(false);
  const buy = parent.direction === 'BUY';
  const { tradable, working, matched } = parent.quantities;
  const name = instrument.data?.name ?? '…';
  const open = isOpen(instrument.data);
  return (
    <Paper
      ref={ref}
      variant="outlined"
      role="listitem"
      aria-label={`${buy ? 'Buy' : 'Sell'} ${name}`}
      data-created={created || undefined}
      sx={{
        p: 2,
        borderLeft: 4,
        borderLeftColor: buy ? 'success.main' : 'error.main',
        // A new card glows once, then looks like the others.
        ...(created && { animation: `${glow} 3s ease-out` }),
      }}
    >
      <Stack direction="row" spacing={1} sx={{ alignItems: 'center' }}>
        <Chip size="small" label={buy ? 'Buy' : 'Sell'} color={buy ? 'success' : 'error'} />
        <Box sx={{ flexGrow: 1 }} />
        <Chip size="small" variant="outlined" label={stateLabel(parent.state)} />
        {parent.state === 'ACTIVE' && (
          <Tooltip title={open ? 'Request quotes (RFQ)' : 'RFQs can be sent while the platform is open'}>
            <span>
              <IconButton size="small" aria-label="Request quotes" disabled={!open || tradable === 0} onClick={onRfq}>
                <RequestQuoteOutlined fontSize="small" />
              </IconButton>
            </span>
          </Tooltip>
        )}
        {parent.state === 'ACTIVE' && (
          <Tooltip title={matched > 0 ? 'Part of this order is matched; it can no longer be cancelled' : 'Cancel parent order'}>
            <span>
              <IconButton size="small" aria-label="Cancel parent order" disabled={matched > 0} onClick={() => setConfirming(true)}>
                <Close fontSize="small" />
              </IconButton>
            </span>
          </Tooltip>
        )}
      </Stack>
      {/* The whole name (cut after 35 characters, spec section 3) on its own line, so
          contracts that differ at the end can be told apart (issue 28.12). */}
      <Link
        component="button"
        type="button"
        variant="subtitle2"
        color="inherit"
        underline="hover"
        title={name}
        aria-label={`Show the order book of ${name}`}
        onClick={onShowBook}
        sx={{ display: 'block', mt: 1, fontWeight: 700, textAlign: 'left', overflowWrap: 'anywhere' }}
      >
        {truncateName(name)}
      </Link>
      <Box sx={{ display: 'grid', gridTemplateColumns: 'repeat(4, 1fr)', mt: 1.5, gap: 1 }}>
        {(
          [
            ['Quantity', parent.quantity],
            ['Remaining', tradable],
            ['Working', working],
            ['Matched', matched],
          ] as const
        ).map(([label, value]) => (
          <Box key={label}>
            <Typography variant="caption" color="text.secondary" component="div">
              {label}
            </Typography>
            <Typography variant="body2" sx={{ fontWeight: 600, fontVariantNumeric: 'tabular-nums' }} data-testid={`parent-${label.toLowerCase()}`}>
              {number.format(value)}
            </Typography>
          </Box>
        ))}
      </Box>
      {parent.min_execution != null && (
        <Typography variant="caption" color="text.secondary" component="p" sx={{ mt: 1 }}>
          Minimum execution size: {number.format(parent.min_execution)}
        </Typography>
      )}
      {parent.broker_instructions && (
        <Typography variant="caption" color="text.secondary" component="p" sx={{ mt: 1 }}>
          Broker instructions: {parent.broker_instructions}
        </Typography>
      )}
      {orders.length > 0 && instrument.data && (
        <Stack spacing={0.5} sx={{ mt: 1.5 }} role="list" aria-label="Child orders">
          {orders.map((o) => (
            <ChildOrderRow key={o.order_id} order={o} instrument={instrument.data} brokers={parent.eligible_brokers} open={open} onEdit={() => onEdit(o)} />
          ))}
        </Stack>
      )}
      <ConfirmDialog
        open={confirming}
        title="Cancel parent order?"
        text="The parent order and its working child orders will be cancelled."
        confirmLabel="Yes, cancel"
        pending={cancel.isPending}
        onClose={() => setConfirming(false)}
        onConfirm={() =>
          mutateThen(
            cancel,
            { parentOrderId: parent.parent_order_id, instrumentId: parent.instrument_id },
            {
              onSuccess: () => showToast({ message: 'Parent order cancelled.' }),
              onSettled: () => setConfirming(false),
            },
          )
        }
      />
    </Paper>
  );
}

/** The countdown of the caller's own match request, beside its 'Awaiting Match' order. */
function RequestTimer({ until }: { until: string }) {
  const seconds = useSecondsLeft(until);
  return (
    <Typography variant="caption" role="timer" aria-label="Time left for the counterparty" sx={{ fontVariantNumeric: 'tabular-nums', color: seconds !== null && seconds <= 30 ? 'error.main' : 'text.secondary' }}>
      {seconds === null ? '–' : formatCountdown(seconds)}
    </Typography>
  );
}

type RowProps = { order: Order; instrument: Instrument; brokers: readonly CompanyRef[]; open: boolean; onEdit: () => void };

function ChildOrderRow({ order, instrument, brokers, open, onEdit }: RowProps) {
  const tickSize = instrument.tick_size;
  const user = useCurrentUser();
  // The trader's own trade, until its broker confirms the fill, may be allocated (ADR 0045).
  const allocatable = order.created_by === user.user_id && ALLOCATABLE_STATES.includes(order.state);
  const [allocating, setAllocating] = useState(false);
  const cancel = useCancelOrder();
  const withdraw = useAnswerMatchRequest();
  const { showToast } = useToast();
  const [confirming, setConfirming] = useState(false);
  // The caller's own match request this order was made for, while it waits (issue 29).
  const awaiting = order.state === 'AWAITING_MATCH';
  const pending = usePendingMatchRequests({ enabled: awaiting });
  const request = awaiting ? pending.data?.find((m) => m.role === 'REQUESTER' && m.order_id === order.order_id) : undefined;
  const editable = order.state === 'WORKING' && open;
  // An RFQ's reserved quantity has no price until a quote is accepted.
  const summary =
    order.state === 'AWAITING_RFQ_ACCEPTANCE'
      ? `${number.format(order.quantity)} · RFQ`
      : `${number.format(order.quantity)} @ ${formatPrice(order.price, tickSize)}`;
  return (
    <Box role="listitem" sx={{ bgcolor: 'action.hover', borderRadius: 1 }}>
      <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, pl: 1 }}>
        <Box
          component={editable ? 'button' : 'div'}
          type={editable ? 'button' : undefined}
          onClick={editable ? onEdit : undefined}
          aria-label={editable ? `Edit order ${summary}` : undefined}
          sx={{
            flexGrow: 1,
            display: 'flex',
            alignItems: 'center',
            gap: 1,
            border: 0,
            bgcolor: 'transparent',
            font: 'inherit',
            color: 'inherit',
            textAlign: 'left',
            py: 0.75,
            cursor: editable ? 'pointer' : 'default',
            '&:focus-visible': { outline: 2, outlineColor: 'primary.main' },
          }}
        >
          <Typography variant="body2" sx={{ fontVariantNumeric: 'tabular-nums', fontWeight: 600 }}>
            {summary}
          </Typography>
          {order.iceberg && <Chip size="small" label="Iceberg" variant="outlined" />}
          {order.min_execution != null && (
            <Tooltip title="Minimum execution size: no fill below it, except the last of the order.">
              <Chip size="small" label={`Min ${number.format(order.min_execution)}`} variant="outlined" />
            </Tooltip>
          )}
          {order.waiting_for_open && (
            <Tooltip title="Worked before the open: it goes live at the open by itself.">
              <Chip size="small" color="info" label="Waits for the open" />
            </Tooltip>
          )}
          {order.state === 'WORKING' && !order.waiting_for_open && !inBand(order.price, instrument) && (
            <Tooltip title="The price is outside the current electronic band; this order cannot match until the band returns.">
              <Chip size="small" color="warning" label="Outside band" />
            </Tooltip>
          )}
          <Box sx={{ flexGrow: 1 }} />
          {request && <RequestTimer until={request.expired_at} />}
          <Chip size="small" label={stateLabel(order.state)} color={order.state === 'WORKING' ? 'primary' : 'default'} variant="outlined" />
        </Box>
        {request ? (
          <Tooltip title="Withdraw your match request">
            <IconButton size="small" aria-label={`Withdraw match request ${summary}`} onClick={() => setConfirming(true)}>
              <UndoOutlined fontSize="small" />
            </IconButton>
          </Tooltip>
        ) : (
          CANCELLABLE.includes(order.state) && (
            <IconButton size="small" aria-label={`Cancel order ${summary}`} onClick={() => setConfirming(true)}>
              <CancelOutlined fontSize="small" />
            </IconButton>
          )
        )}
      </Box>
      {allocatable && <AllocationLine order={order} summary={summary} onOpen={() => setAllocating(true)} />}
      {allocating && <AllocationDialog order={order} instrument={instrument} brokers={brokers} onClose={() => setAllocating(false)} />}
      <ConfirmDialog
        open={confirming}
        pending={request ? withdraw.isPending : cancel.isPending}
        onClose={() => setConfirming(false)}
        {...(request
          ? {
              title: 'Withdraw match request?',
              text: `Your match request ${summary} is withdrawn before the counterparty answers; its quantity goes back to the parent order.`,
              confirmLabel: 'Yes, withdraw',
              onConfirm: () =>
                mutateThen(
                  withdraw,
                  { id: request.order_match_request_id, state: 'CANCELLED' },
                  { onSuccess: () => showToast({ message: 'Match request withdrawn.' }), onSettled: () => setConfirming(false) },
                ),
            }
          : {
              title: 'Cancel order?',
              text: `Your order ${summary} will be cancelled and its quantity returned to the parent order.`,
              confirmLabel: 'Yes, cancel',
              onConfirm: () =>
                mutateThen(
                  cancel,
                  { orderId: order.order_id, instrumentId: order.instrument_id },
                  { onSuccess: () => showToast({ message: 'Order cancelled.' }), onSettled: () => setConfirming(false) },
                ),
            })}
      />
    </Box>
  );
}

/** What the card says of an allocation: its version, each account's part (';' before all but the first), the give-up broker and the broker's answer. */
function allocationParts(a: Allocation): string[] {
  return [
    `v${a.version}`,
    ...a.lines.map((l, n) => `${n > 0 ? ';' : ''}${allocationSummary([l])}`),
    ...(a.give_up_broker ? [`Give-up: ${a.give_up_broker.name}`] : []),
    brokerAnswer(a),
  ];
}

/**
 * Under a trade the trader may allocate: the button to the allocation dialog and the
 * allocation with the broker's answer, as pushed (ADR 0045).
 */
function AllocationLine({ order, summary, onOpen }: { order: Order; summary: string; onOpen: () => void }) {
  const { data: allocation } = useAllocation(order.order_id);
  const label = allocation ? 'Allocation' : 'Allocate';
  return (
    <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, pl: 1, pr: 0.5, pb: 0.5 }}>
      <Typography variant="caption" color="text.secondary" sx={{ flexGrow: 1, minWidth: 0 }} data-testid="allocation-summary">
        {allocation &&
          // Lines break between the parts (after their separator), never inside an account's
          // code or the broker's answer.
          allocationParts(allocation).map((part, n, parts) => {
            const next = parts[n + 1];
            return (
              <Fragment key={n}>
                {n > 0 && ' '}
                <Box component="span" sx={{ whiteSpace: 'nowrap' }}>
                  {part.replace(/^;/, '')}
                  {next === undefined ? '' : next.startsWith(';') ? ';' : ' ·'}
                </Box>
              </Fragment>
            );
          })}
      </Typography>
      <Button size="small" startIcon={<AccountTreeOutlined />} aria-label={`${label} ${summary}`} onClick={onOpen} sx={{ flexShrink: 0 }}>
        {label}
      </Button>
    </Box>
  );
}
