import { useCallback, useEffect, useMemo, useState, type ComponentProps } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import Badge from '@mui/material/Badge';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Divider from '@mui/material/Divider';
import IconButton from '@mui/material/IconButton';
import List from '@mui/material/List';
import ListItem from '@mui/material/ListItem';
import ListItemButton from '@mui/material/ListItemButton';
import ListItemText from '@mui/material/ListItemText';
import Popover from '@mui/material/Popover';
import Skeleton from '@mui/material/Skeleton';
import Typography from '@mui/material/Typography';
import NotificationsNoneOutlined from '@mui/icons-material/NotificationsNoneOutlined';
import { useInstrument } from '@/lib/api/get-instrument';
import { formatDateTime } from '@/lib/format-date';
import { useTopic } from '@/lib/realtime';
import { dec, toGrouped } from '@/lib/decimal';
import { formatPrice, truncateName } from '@/lib/trading-format';
import { tradingKeys } from '@/lib/api/trading-keys';
import { usePendingMatchRequests } from '@/lib/api/match-requests';
import type { MatchRequest } from '@/lib/api/dto';
import { formatCountdown, useSecondsLeft } from '@/lib/use-seconds-left';
import {
  notificationsQueryKey,
  notificationsQueryOptions,
  pushedNotification,
  useNotifications,
  withNotification,
  type Notification,
} from '../api/get-notifications';
import { useMarkRead } from '../api/mark-read';
import { MatchRequestDrawer } from './match-request-drawer';
import { NotificationView } from './notification-view';

/** Spec section 4: the menu is 408 to 432 px wide. */
export const MENU_WIDTH = 420;

/**
 * The history keeps what ended without a match (spec section 2), and, beyond the spec, the
 * trades made (issue 28.10, ADR 0038): a trader reads there what matched as well as what
 * did not, each with its side, quantity and price.
 */
const HISTORY: Notification['status'][] = [
  'TIMED_OUT', 'CANCELLED', 'REJECTED', 'SYSTEM_CANCELLED_PRICE_OUT_OF_TICK',
  'ACCEPTED', 'PARTIAL_BROKER_ACCEPTED', 'BROKER_ACCEPTED', 'PARTIAL_BROKER_FILLED', 'BROKER_FILLED',
];
/**
 * Notices that only tell, kept in the history too: a trade a broker declined, a price an
 * operator corrected (issue 28.7, 28.8), an order cancelled when its owner disconnected
 * (issue 29).
 */
const TOLD: Notification['type'][] = ['MATCH_REQUEST_BROKER_REJECTED', 'ORDER_PRICE_CORRECTED', 'ORDER_CANCELLED_ON_DISCONNECT'];

/** A notification's title in the menu's list: spec section 4, 'Notification titles in the list'. */
export function notificationTitle(n: Notification): string {
  if (n.rfq_id) return rfqTitle(n);
  if (TOLD.includes(n.type)) return notificationViewTitle(n);
  switch (n.status) {
    case 'REJECTED':
      return 'Match rejected';
    case 'TIMED_OUT':
      return 'Order expired';
    default:
      return notificationViewTitle(n);
  }
}

/**
 * A notification's title when it is shown on its own: the words spec section 4 gives
 * each status. The out-of-tick cancellation has one title for both sides; its text
 * differs for the requester and the responder.
 */
export function notificationViewTitle(n: Notification): string {
  if (n.rfq_id) return rfqTitle(n);
  if (n.type === 'MATCH_REQUEST_BROKER_REJECTED') return 'Trade declined by a broker';
  if (n.type === 'ORDER_PRICE_CORRECTED') return 'Limit price corrected';
  if (n.type === 'ORDER_CANCELLED_ON_DISCONNECT') return 'Order cancelled on disconnect';
  switch (n.status) {
    case 'PENDING':
      return 'Match request';
    case 'ACCEPTED':
      return 'Match request accepted';
    case 'PARTIAL_BROKER_ACCEPTED':
    case 'BROKER_ACCEPTED':
    case 'PARTIAL_BROKER_FILLED':
      return 'Trade matched';
    case 'BROKER_FILLED':
      return 'Trade filled';
    case 'REJECTED':
      return 'Match request rejected';
    case 'TIMED_OUT':
      return 'Match request expired';
    case 'CANCELLED':
      return 'Match request withdrawn';
    case 'SYSTEM_CANCELLED_PRICE_OUT_OF_TICK':
      return 'Match request cancelled';
    default:
      return 'Match request';
  }
}

/** One line of what happened, with the requester and responder variants of the spec. */
function notificationText(n: Notification, tick?: number | string, name?: string): string {
  if (n.rfq_id) return rfqText(n);
  if (n.type === 'MATCH_REQUEST_BROKER_REJECTED') {
    return 'A broker declined the trade, so it did not go ahead: its quantity is back on your parent order.';
  }
  if (n.type === 'ORDER_CANCELLED_ON_DISCONNECT') {
    const on = name ? ` on ${truncateName(name)}` : '';
    return `You were disconnected, so the venue cancelled your working order${on}, as you chose: its quantity is back on your parent order.`;
  }
  if (n.type === 'ORDER_PRICE_CORRECTED') {
    const price = (p: number | null) => (p === null ? '—' : tick === undefined ? String(p) : formatPrice(p, tick));
    const on = name ? ` on ${truncateName(name)}` : '';
    return `The venue corrected the limit price of your working order${on} from ${price(n.old_price)} to ${price(n.new_price)}.`;
  }
  switch (n.status) {
    case 'PENDING':
      return 'A counterparty wants to match your working order.';
    case 'ACCEPTED':
      return n.role === 'REQUESTER' ? 'Your match request was accepted.' : 'You accepted the match request.';
    case 'PARTIAL_BROKER_ACCEPTED':
    case 'BROKER_ACCEPTED':
      return 'Matched: the brokers are confirming the trade.';
    case 'PARTIAL_BROKER_FILLED':
      return 'Matched: one broker has reported the fill.';
    case 'BROKER_FILLED':
      return 'Matched and filled: both brokers reported the trade.';
    case 'REJECTED':
      return 'Liquidity returned to the parent order.';
    case 'TIMED_OUT':
      return 'The match request expired; liquidity returned to the parent order.';
    case 'CANCELLED':
      return 'The counterparty withdrew the match request.';
    case 'SYSTEM_CANCELLED_PRICE_OUT_OF_TICK':
      return n.role === 'REQUESTER'
        ? 'The market moved away from your match request’s price.'
        : 'The market moved away from the price of the match request you received.';
    default:
      return '';
  }
}

/** An RFQ's notices: one received by a provider, a quote received, a quote accepted. */
function rfqTitle(n: Notification): string {
  switch (n.type) {
    case 'RFQ_QUOTE_RECEIVED':
      return 'Quote received';
    case 'RFQ_QUOTE_ACCEPTED':
      return 'Quote accepted';
    default:
      // An RFQ received, titled by how it ended for the provider (its text says more).
      switch (n.status) {
        case 'ACCEPTED':
          return 'Quote accepted';
        case 'REJECTED':
          return 'RFQ closed';
        case 'TIMED_OUT':
          return 'RFQ expired';
        case 'CANCELLED':
          return 'RFQ withdrawn';
        default:
          return 'New RFQ';
      }
  }
}

function rfqText(n: Notification): string {
  switch (n.type) {
    case 'RFQ_QUOTE_RECEIVED':
      return 'A liquidity provider quoted on your RFQ.';
    case 'RFQ_QUOTE_ACCEPTED':
      return 'Your quote was accepted: the trade is matched.';
    default:
      switch (n.status) {
        case 'PENDING':
          return 'A request for quote is waiting for your price.';
        case 'ACCEPTED':
          return 'The requester accepted your quote.';
        case 'REJECTED':
          return 'The RFQ was completed with another quote, or declined.';
        case 'TIMED_OUT':
          return 'The RFQ reached its deadline.';
        default:
          return 'The requester withdrew the RFQ.';
      }
  }
}

/** Side, quantity and price of a match request as one party sees them. */
type Terms = { direction?: 'BUY' | 'SELL' | null; quantity?: number | null; price?: number | null };

/** A match request's terms as its party sees them: 'Sell 1,500 @ -0.020'; '' for other notices. */
export function termsText(n: Terms, tick?: number | string): string {
  if (n.direction == null || n.quantity == null || n.price == null) return '';
  const side = n.direction === 'BUY' ? 'Buy' : 'Sell';
  const price = tick === undefined ? String(n.price) : formatPrice(n.price, tick);
  return `${side} ${toGrouped(dec(n.quantity), 0)} @ ${price}`;
}

/** A notification shown on its own, its prices written with its instrument's tick. */
function ShownNotification(props: Omit<ComponentProps<typeof NotificationView>, 'title' | 'text'>) {
  const instrument = useInstrument(props.notification.instrument_id);
  const n = props.notification;
  const terms = termsText(n, instrument.data?.tick_size);
  const text = notificationText(n, instrument.data?.tick_size, instrument.data?.name);
  return <NotificationView {...props} title={notificationViewTitle(n)} text={terms ? `${terms}. ${text}` : text} />;
}

function Item({ n, onOpen }: { n: Notification; onOpen: (n: Notification) => void }) {
  const instrument = useInstrument(n.instrument_id);
  return (
    <ListItem disablePadding sx={{ bgcolor: n.read ? undefined : 'action.hover' }} data-testid="notification">
      <ListItemButton alignItems="flex-start" sx={{ px: 2 }} onClick={() => onOpen(n)}>
        <ListItemText
          primary={notificationTitle(n)}
          slotProps={{ primary: { sx: { fontWeight: 600 } } }}
          secondary={
            <>
              <Box component="span" sx={{ display: 'block' }}>
                {instrument.data ? truncateName(instrument.data.name) : <Skeleton component="span" width={140} />}
              </Box>
              {termsText(n) && (
                <Box component="span" sx={{ display: 'block', color: 'text.primary', fontWeight: 500 }} data-testid="notification-terms">
                  {termsText(n, instrument.data?.tick_size)}
                </Box>
              )}
              <Box component="span" sx={{ display: 'block' }}>
                {notificationText(n, instrument.data?.tick_size)}
              </Box>
              <Box component="span" sx={{ display: 'block' }}>
                {formatDateTime(n.created_at)}
              </Box>
            </>
          }
        />
      </ListItemButton>
    </ListItem>
  );
}

/** One of the caller's own pending match requests, as its taker: its terms and its countdown. */
function OwnRequest({ m, onOpen }: { m: MatchRequest; onOpen: (id: string) => void }) {
  const instrument = useInstrument(m.instrument_id);
  const seconds = useSecondsLeft(m.expired_at);
  const tick = instrument.data?.tick_size;
  const terms = termsText(m, tick);
  return (
    <ListItem disablePadding data-testid="own-request">
      <ListItemButton alignItems="flex-start" sx={{ px: 2 }} onClick={() => onOpen(m.order_match_request_id)} aria-label={`Your match request ${terms}: review or withdraw`}>
        <ListItemText
          primary="Your match request"
          slotProps={{ primary: { sx: { fontWeight: 600 } } }}
          secondary={
            <>
              <Box component="span" sx={{ display: 'block' }}>
                {instrument.data ? truncateName(instrument.data.name) : <Skeleton component="span" width={140} />}
              </Box>
              <Box component="span" sx={{ display: 'block', color: 'text.primary', fontWeight: 500 }}>
                {terms}
              </Box>
              <Box component="span" sx={{ display: 'block' }} role="timer">
                Waiting for the counterparty · {seconds === null ? '–' : formatCountdown(seconds)} left
              </Box>
            </>
          }
        />
      </ListItemButton>
    </ListItem>
  );
}

/** The caller's pending match requests as their taker (issue 29): seen and withdrawn from here. */
function OwnRequests({ onOpen }: { onOpen: (id: string) => void }) {
  const pending = usePendingMatchRequests();
  const mine = (pending.data ?? []).filter((m) => m.role === 'REQUESTER');
  if (mine.length === 0) return null;
  return (
    <>
      <Divider />
      <Box component="section" aria-label="Your requests">
        <Typography variant="overline" color="text.secondary" sx={{ px: 2, display: 'block' }}>
          Your requests
        </Typography>
        <List dense disablePadding>
          {mine.map((m) => (
            <OwnRequest key={m.order_match_request_id} m={m} onOpen={onOpen} />
          ))}
        </List>
      </Box>
    </>
  );
}

function Section({ title, items, empty, onOpen }: { title: string; items: Notification[]; empty?: string; onOpen: (n: Notification) => void }) {
  return (
    <Box component="section" aria-label={title}>
      <Typography variant="overline" color="text.secondary" sx={{ px: 2, display: 'block' }}>
        {title}
      </Typography>
      {items.length === 0 ? (
        empty && (
          <Typography variant="body2" color="text.secondary" sx={{ px: 2, pb: 1.5 }}>
            {empty}
          </Typography>
        )
      ) : (
        <List dense disablePadding>
          {items.map((n) => (
            <Item key={n.notification_id} n={n} onOpen={onOpen} />
          ))}
        </List>
      )}
    </Box>
  );
}

/**
 * One history entry per match request: the responder's notice of a request and the
 * notice of how it ended (a withdrawal, a time-out) tell of one request, so only the
 * latest is listed. The list comes newest first.
 */
export function latestPerRequest(items: Notification[]): Notification[] {
  const seen = new Set<string>();
  return items.filter((n) => {
    if (!n.order_match_request_id) return true;
    if (seen.has(n.order_match_request_id)) return false;
    seen.add(n.order_match_request_id);
    return true;
  });
}

/** What a notification tells: a match request's state, or one notice's own. */
const toldKey = (n: Notification) =>
  n.order_match_request_id ? `${n.order_match_request_id}:${n.status}` : n.notification_id;

/**
 * The bell of the top bar (spec section 2): a dot while a match request waits for an answer;
 * its menu lists the active and past notifications, arrives by the socket the moment they
 * are made, and opening it marks them read.
 */
export function NotificationsBell() {
  const queryClient = useQueryClient();
  const notifications = useNotifications();
  const markRead = useMarkRead();
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  // The notification shown on its own, and the match request under review in the drawer.
  const [viewing, setViewing] = useState<string | null>(null);
  const [reviewing, setReviewing] = useState<string | null>(null);
  // Closed views, by notice and by what they told (`toldKey`): a notice closed stays shut
  // whatever it says next, and a second notice telling the same thing (the responder's
  // notice of a request, now timed out, and the time-out's own) does not open either.
  const [dismissed, setDismissed] = useState<ReadonlySet<string>>(() => new Set());
  // A frame carries the notification as the list shows it: written in, not read again
  // (ADR 0029); the list is read again only on a reconnect or a missed frame.
  useTopic(
    '/user/topic/notifications',
    (body) => {
      const n = pushedNotification(body);
      // A read under way may answer from before the frame: it is read again instead.
      if (n && queryClient.isFetching({ queryKey: notificationsQueryKey }) === 0) {
        queryClient.setQueryData(notificationsQueryOptions().queryKey, (page) => withNotification(page, n));
      } else void queryClient.invalidateQueries({ queryKey: notificationsQueryKey });
      // What the notification tells of changed: a request under review reads it again.
      void queryClient.invalidateQueries({ queryKey: tradingKeys.matchRequests });
    },
    (since) =>
      void queryClient.invalidateQueries(
        { queryKey: notificationsQueryKey, predicate: (q) => q.state.dataUpdatedAt < since },
        { cancelRefetch: false },
      ),
  );

  const items = useMemo(() => notifications.data?.items ?? [], [notifications.data]);
  const active = items.filter((n) => n.status === 'PENDING');
  const history = latestPerRequest(items.filter((n) => HISTORY.includes(n.status) || TOLD.includes(n.type)));
  const open = (el: HTMLElement) => {
    setAnchor(el);
    // Marking refetches when it settles; with nothing to mark, refetch now.
    const unread = items.filter((n) => !n.read).map((n) => n.notification_id);
    if (unread.length > 0) markRead.mutate(unread);
    else void queryClient.invalidateQueries({ queryKey: notificationsQueryKey });
  };

  // A quote received on an RFQ that has ended since is no news: it goes to the history,
  // read, and never opens by itself (issue 28.10).
  const spent = items.filter((n) => !n.read && n.type === 'RFQ_QUOTE_RECEIVED' && n.status !== 'PENDING').map((n) => n.notification_id);
  const spentKey = spent.join(',');
  // Spec section 4: unread notifications open by themselves, pending first.
  const unseen = items.filter(
    (n) => !n.read && !spent.includes(n.notification_id) && !dismissed.has(n.notification_id) && !dismissed.has(toldKey(n)),
  );
  const next = (unseen.find((n) => n.status === 'PENDING') ?? unseen[0])?.notification_id ?? null;
  // Adjusted while rendering (not in an effect), so the view opens in the same paint.
  if (viewing === null && reviewing === null && anchor === null && next !== null) setViewing(next);
  const shown = items.find((n) => n.notification_id === viewing) ?? null;
  // Archived or gone meanwhile, or a quote whose RFQ has ended: nothing to show.
  if (viewing !== null && ((notifications.data && shown === null) || spent.includes(viewing))) setViewing(null);
  // Non-pending notifications are read once shown; a pending one when it is closed or reviewed.
  const shownReadable = shown !== null && !shown.read && shown.status !== 'PENDING' ? shown.notification_id : null;
  const { mutate: mark } = markRead;
  useEffect(() => {
    if (shownReadable) mark([shownReadable]);
  }, [shownReadable, mark]);
  useEffect(() => {
    if (spentKey) mark(spentKey.split(','));
  }, [spentKey, mark]);
  const closeView = useCallback(() => {
    if (!viewing) return;
    const n = items.find((x) => x.notification_id === viewing);
    setDismissed((d) => (n ? new Set(d).add(viewing).add(toldKey(n)) : new Set(d).add(viewing)));
    if (n && !n.read) mark([viewing]);
    setViewing(null);
  }, [viewing, items, mark]);
  const show = (n: Notification) => {
    setAnchor(null);
    setViewing(n.notification_id);
  };

  return (
    <>
      <IconButton
        aria-label={active.length > 0 ? `Notifications: ${active.length} pending` : 'Notifications'}
        aria-haspopup="dialog"
        aria-expanded={anchor ? 'true' : undefined}
        onClick={(e) => open(e.currentTarget)}
      >
        <Badge color="error" variant="dot" invisible={active.length === 0} data-testid="notifications-badge">
          <NotificationsNoneOutlined />
        </Badge>
      </IconButton>
      <Popover
        open={anchor !== null}
        anchorEl={anchor}
        onClose={() => setAnchor(null)}
        anchorOrigin={{ vertical: 'bottom', horizontal: 'right' }}
        transformOrigin={{ vertical: 'top', horizontal: 'right' }}
        slotProps={{ paper: { role: 'dialog', 'aria-label': 'Notifications', sx: { width: MENU_WIDTH, maxHeight: 560, mt: 1 } } }}
      >
        <Box sx={{ px: 2, pt: 2, pb: 1 }}>
          <Typography variant="h3" component="h2">
            Notifications
          </Typography>
          <Typography variant="caption" color="text.secondary">
            {formatDateTime(new Date().toISOString())}
          </Typography>
        </Box>
        <Divider />
        {notifications.isPending ? (
          <Box sx={{ p: 2 }}>
            <Skeleton height={48} />
            <Skeleton height={48} />
          </Box>
        ) : notifications.isError ? (
          <Typography color="error" sx={{ p: 2 }}>
            The notifications could not be loaded.
          </Typography>
        ) : (
          <>
            <Section title="Active" items={active} empty="You're all caught up! No new notifications" onOpen={show} />
            <OwnRequests
              onOpen={(id) => {
                setAnchor(null);
                setReviewing(id);
              }}
            />
            {history.length > 0 && (
              <>
                <Divider />
                <Section title="History" items={history} onOpen={show} />
              </>
            )}
          </>
        )}
        <Divider />
        <Box sx={{ p: 1.5, display: 'flex', justifyContent: 'flex-end' }}>
          <Button onClick={() => setAnchor(null)}>Close</Button>
        </Box>
      </Popover>
      {shown && (
        <ShownNotification
          key={shown.notification_id}
          notification={shown}
          onClose={closeView}
          onReview={() => {
            closeView();
            setReviewing(shown.order_match_request_id);
          }}
        />
      )}
      <MatchRequestDrawer
        id={reviewing}
        onClose={() => setReviewing(null)}
        onAccepted={() => {
          // The celebration: the received notification, now accepted, shown once more.
          const received = items.find((n) => n.order_match_request_id === reviewing && n.type === 'MATCH_REQUEST_RECEIVED');
          if (!received) return;
          queryClient.setQueryData(notificationsQueryOptions().queryKey, (page) =>
            page && { ...page, items: page.items.map((n) => (n.notification_id === received.notification_id ? { ...n, status: 'ACCEPTED' as const } : n)) },
          );
          show(received);
        }}
      />
    </>
  );
}
