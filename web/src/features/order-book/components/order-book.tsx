import { useMemo } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import Box from '@mui/material/Box';
import Chip from '@mui/material/Chip';
import IconButton from '@mui/material/IconButton';
import Paper from '@mui/material/Paper';
import Skeleton from '@mui/material/Skeleton';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import Close from '@mui/icons-material/Close';
import NightsStayOutlined from '@mui/icons-material/NightsStayOutlined';
import { useAppConfig } from '@/lib/api/get-config';
import { dec, eq, type Decimal } from '@/lib/decimal';
import { useTopic } from '@/lib/realtime';
import { OnboardingTip } from '@/components/ui/onboarding-tip';
import { useLiveInstrument } from '@/lib/api/get-instrument';
import { calendarOf, type PlatformStatus } from '@/lib/api/get-platform-status';
import { tradingKeys } from '@/lib/api/trading-keys';
import { buildLadder, closedText, formatHour, formatPrice, legLabels, operatingHours, truncateName, type LadderRow } from '@/lib/trading-format';
import { hasOthersLiquidity, Ladder } from './ladder';
import { useBook, type Book } from '../api/get-book';
import { applyBookFrame, applyShareFrame, marketDataOf, type BookFrame } from '../lib/book-frames';
import { useMarketData } from '../api/get-market-data';

/** Spec section 9: an order book is 564 px high. */
export const BOOK_HEIGHT = 564;
/**
 * Four books fit beside the 340 px parent list down to a 1280 px window with a classic
 * scrollbar (1265 px of viewport: 1217 of content, 853 beside the list, 4 × 200 + 3 gaps);
 * in narrower windows the dashboard wraps them onto another row.
 */
export const BOOK_MIN_WIDTH = 200;
/** A book grows with the window up to this width. */
export const BOOK_MAX_WIDTH = 340;
type Props = {
  instrumentId: string;
  /** The platform status: the book follows its instrument's exchange's calendar there, else the venue's (ADR 0052). */
  status: PlatformStatus | undefined;
  /** Set when the caller has quantity left to work on this instrument: a row was chosen. */
  onWork?: (price: Decimal, row: LadderRow) => void;
  onRemove?: () => void;
  /** Show the INTERACT_WITH_ORDERBOOK onboarding tip on this book. */
  showTip?: boolean;
  /** Show the TAKING_LIQUIDITY_IN_ORDERBOOK tip on the first row with another firm's quantity. */
  showTakeTip?: boolean;
};

/** One instrument's anonymous block book with its price ladder (spec sections 2 and 9). */
export function OrderBook({ instrumentId, status, onWork, onRemove, showTip = false, showTakeTip = false }: Props) {
  const { product_name } = useAppConfig();
  const queryClient = useQueryClient();
  // Its band follows the book's frames (useLiveInstrument writes it, as the parent cards read it).
  const instrument = useLiveInstrument(instrumentId);
  const book = useBook(instrumentId);
  const market = useMarketData(instrumentId);

  // Frames carry the state (ADR 0029): the anonymous book with the band and best prices,
  // and our company's own share on our own destination; they are written into the cache.
  // Only a missed frame or a reconnect reads the book and market data again (and the instrument, there).
  const resync = (since: number) => {
    const older = { predicate: (q: { state: { dataUpdatedAt: number } }) => q.state.dataUpdatedAt < since };
    for (const queryKey of [tradingKeys.book(instrumentId), tradingKeys.marketData(instrumentId)]) {
      // A read under way since the subscription is current: it is not started again.
      void queryClient.invalidateQueries({ queryKey, ...older }, { cancelRefetch: false });
    }
  };
  useTopic(
    `/topic/instruments/${instrumentId}/book`,
    (message) => {
      const frame = message as BookFrame;
      queryClient.setQueryData(tradingKeys.book(instrumentId), (old: Book | undefined) => applyBookFrame(old, frame));
      queryClient.setQueryData(tradingKeys.marketData(instrumentId), marketDataOf(frame));
    },
    resync,
  );
  useTopic(
    '/user/topic/book-shares',
    (frame) => {
      if (frame.instrument_id !== instrumentId) return;
      queryClient.setQueryData(tradingKeys.book(instrumentId), (old: Book | undefined) => applyShareFrame(old, frame));
    },
    resync,
  );

  const tick = instrument.data?.tick_size;
  const rows = useMemo(() => (book.data && tick !== undefined ? buildLadder(book.data, tick) : []), [book.data, tick]);

  const i = instrument.data;
  // The calendar of the instrument's exchange (by its MIC) when it has one, else the venue's;
  // unknown until the instrument is read, unless no exchange has a calendar.
  const calendar = status && (i || status.exchanges.length === 0) ? calendarOf(status, i?.exchange_iso_code) : undefined;
  // Before the open (from 05:30) orders may be worked: they wait and go live at the open.
  const preOpen = calendar !== undefined && !calendar.open && calendar.parent_orders_open;
  const closed = calendar !== undefined && !calendar.open && !calendar.parent_orders_open;
  // Issue 30 (ADR 0048): no recent exchange price, so nothing trades here until one comes.
  const stale = book.data?.prices_stale === true;
  const takeTipRow = showTakeTip && !closed && onWork ? rows.find((r) => r.tradable && hasOthersLiquidity(r)) : undefined;
  /** A best price as its row writes it, or null while its side is empty. */
  const bestText = (price: number | string | null | undefined) => {
    if (price === null || price === undefined || tick === undefined) return null;
    return rows.find((r) => eq(r.price, dec(price)))?.text ?? formatPrice(price, tick);
  };
  return (
    <Paper
      variant="outlined"
      component="section"
      aria-label={i ? `Order book ${i.name}` : 'Order book'}
      sx={{ height: BOOK_HEIGHT, flex: '1 1 0', minWidth: BOOK_MIN_WIDTH, maxWidth: BOOK_MAX_WIDTH, display: 'flex', flexDirection: 'column', position: 'relative', overflow: 'hidden' }}
    >
      {/* One height in every book (two lines of name, one of legs), so that ladders side by side start level. */}
      <Box sx={{ px: 1.5, pt: 1.5, pb: 1, borderBottom: 1, borderColor: 'divider' }}>
        <Stack direction="row" spacing={1} sx={{ alignItems: 'flex-start' }}>
          <Box sx={{ flexGrow: 1, minWidth: 0 }}>
            {i ? (
              <OnboardingTip step="INTERACT_WITH_ORDERBOOK" show={showTip} placement="bottom-start">
                <Typography
                  variant="subtitle1"
                  component="h3"
                  title={i.name}
                  sx={{ fontWeight: 700, lineHeight: 1.3, height: '2.6em', wordBreak: 'break-word', display: '-webkit-box', WebkitLineClamp: 2, WebkitBoxOrient: 'vertical', overflow: 'hidden' }}
                >
                  {truncateName(i.name)}
                </Typography>
              </OnboardingTip>
            ) : (
              <Skeleton width="80%" sx={{ height: '2.6em' }} />
            )}
            <Stack direction="row" spacing={0.5} sx={{ flexWrap: 'nowrap', overflow: 'hidden', height: 20, mt: 0.5, '& .MuiChip-root': { height: 20, fontSize: 12 }, '& .MuiChip-label': { px: 0.75 } }} useFlexGap>
              {i && legLabels(i).map((leg) => <Chip key={leg} size="small" label={leg} variant="outlined" />)}
              {i?.reversed_spread && <Chip size="small" label="Reversed" color="warning" variant="outlined" />}
              {stale && <Chip size="small" label="Prices stale" color="error" />}
            </Stack>
          </Box>
          {onRemove && (
            <IconButton size="small" aria-label="Remove order book" onClick={onRemove}>
              <Close fontSize="small" />
            </IconButton>
          )}
        </Stack>
      </Box>
      <Ladder
        rows={book.isPending || instrument.isPending || book.isError || instrument.isError ? [] : rows}
        bestBuy={bestText(market.data?.best_buy_price)}
        bestSell={bestText(market.data?.best_sell_price)}
        onWork={closed ? undefined : onWork}
        tipRow={takeTipRow}
        withTip={(line) => (
          <OnboardingTip step="TAKING_LIQUIDITY_IN_ORDERBOOK" show placement="left" fullWidth>
            {line}
          </OnboardingTip>
        )}
        note={
          stale ? (
            <Typography role="status" variant="caption" sx={{ px: 1.5, py: 0.75, bgcolor: 'action.hover', color: 'error.main', borderBottom: 1, borderColor: 'divider' }}>
              No recent exchange price: takes and accepts wait until prices return.
            </Typography>
          ) : (
            preOpen && (
              <Typography role="status" variant="caption" sx={{ px: 1.5, py: 0.75, bgcolor: 'action.hover', color: 'text.secondary', borderBottom: 1, borderColor: 'divider' }}>
                Opens at {formatHour(calendar.open_time)}: orders you work now wait for the open.
              </Typography>
            )
          )
        }
        placeholder={
          book.isError || instrument.isError ? (
            <Typography color="error" sx={{ p: 2 }}>
              The order book could not be loaded.
            </Typography>
          ) : book.isPending || instrument.isPending ? (
            <Stack spacing={1} sx={{ p: 2 }}>
              {Array.from({ length: 8 }, (_, n) => <Skeleton key={n} height={24} />)}
            </Stack>
          ) : undefined
        }
      />
      {closed && (
        <Box
          role="status"
          sx={{ position: 'absolute', inset: 0, top: 88, bgcolor: 'rgba(255,255,255,0.88)', display: 'flex', flexDirection: 'column', alignItems: 'center', justifyContent: 'center', textAlign: 'center', p: 3, gap: 1 }}
        >
          <NightsStayOutlined color="action" sx={{ fontSize: 40 }} />
          <Typography variant="h3" component="p">
            {calendar.exchange ? calendar.exchange.name : product_name} is closed
          </Typography>
          {closedText(calendar) && <Typography variant="body2">{closedText(calendar)}</Typography>}
          <Typography variant="body2" color="text.secondary">
            {operatingHours(calendar)}
          </Typography>
        </Box>
      )}
    </Paper>
  );
}
