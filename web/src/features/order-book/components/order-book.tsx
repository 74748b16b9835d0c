import { useEffect, useMemo, useRef } from 'react';
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
import type { Decimal } from '@/lib/decimal';
import { useTopic } from '@/lib/realtime';
import { OnboardingTip } from '@/components/ui/onboarding-tip';
import { useLiveInstrument } from '@/lib/api/get-instrument';
import type { components } from '@/lib/api/schema';
import { tradingKeys } from '@/lib/api/trading-keys';
import { buildLadder, closedText, formatHour, formatK, formatPrice, legLabels, operatingHours, truncateName, type LadderRow } from '@/lib/trading-format';
import { useBook, type Book } from '../api/get-book';
import { applyBookFrame, applyShareFrame, marketDataOf, type BookFrame } from '../lib/book-frames';
import { useMarketData } from '../api/get-market-data';

type PlatformStatus = components['schemas']['PlatformStatusDto'];

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
/**
 * Buy, price and sell columns: the price column as wide as its text and centred, the sides
 * sharing the rest, none narrower than its text. A price never shrinks out of sight: a row
 * wider than its book scrolls sideways in the ladder instead.
 */
const LADDER_COLUMNS = 'minmax(max-content, 1fr) max-content minmax(max-content, 1fr)';

type Props = {
  instrumentId: string;
  status: PlatformStatus | undefined;
  /** Set when the caller has quantity left to work on this instrument: a row was chosen. */
  onWork?: (price: Decimal, row: LadderRow) => void;
  onRemove?: () => void;
  /** Show the INTERACT_WITH_ORDERBOOK onboarding tip on this book. */
  showTip?: boolean;
  /** Show the TAKING_LIQUIDITY_IN_ORDERBOOK tip on the first row with another firm's quantity. */
  showTakeTip?: boolean;
};

/** Another firm's quantity rests on this row (what a take can hit). */
export function hasOthersLiquidity(row: LadderRow): boolean {
  return row.buy > row.ownBuy || row.sell > row.ownSell;
}

function Quantity({ value, own, side }: { value: number; own: number; side: 'buy' | 'sell' }) {
  return (
    <Box
      component="span"
      sx={{
        color: side === 'buy' ? 'success.main' : 'error.main',
        fontWeight: own ? 700 : 500,
        display: 'inline-flex',
        alignItems: 'center',
        gap: 0.5,
      }}
    >
      {own > 0 && (
        <Box component="span" title="Includes your orders" aria-label="Includes your orders" sx={{ width: 6, height: 6, borderRadius: '50%', bgcolor: 'primary.main' }} />
      )}
      {formatK(value)}
    </Box>
  );
}

function Row({ row, onWork }: { row: LadderRow; onWork?: (price: Decimal, row: LadderRow) => void }) {
  const clickable = row.tradable && onWork !== undefined;
  return (
    <Box
      role={clickable ? 'button' : undefined}
      tabIndex={clickable ? 0 : undefined}
      aria-disabled={row.tradable ? undefined : true}
      aria-label={`Price ${row.text}${row.buy ? `, buy ${formatK(row.buy)}` : ''}${row.sell ? `, sell ${formatK(row.sell)}` : ''}`}
      data-price={row.text}
      data-testid="ladder-row"
      onClick={clickable ? () => onWork(row.price, row) : undefined}
      onKeyDown={
        clickable
          ? (e) => {
              if (e.key === 'Enter' || e.key === ' ') {
                e.preventDefault();
                onWork(row.price, row);
              }
            }
          : undefined
      }
      sx={{
        display: 'grid',
        gridTemplateColumns: LADDER_COLUMNS,
        columnGap: 1,
        minWidth: 'max-content',
        alignItems: 'center',
        minHeight: 30,
        px: 1,
        borderBottom: 1,
        borderColor: 'divider',
        fontVariantNumeric: 'tabular-nums',
        bgcolor: row.tradable ? 'background.paper' : 'action.hover',
        color: row.tradable ? 'text.primary' : 'text.disabled',
        cursor: clickable ? 'pointer' : 'default',
        '&:hover': clickable ? { bgcolor: 'action.selected' } : undefined,
        '&:focus-visible': { outline: 2, outlineColor: 'primary.main', outlineOffset: -2 },
      }}
    >
      <Box sx={{ textAlign: 'left' }}>
        <Quantity value={row.buy} own={row.ownBuy} side="buy" />
      </Box>
      <Box sx={{ textAlign: 'center', fontWeight: 600 }}>{row.text}</Box>
      <Box sx={{ textAlign: 'right' }}>
        <Quantity value={row.sell} own={row.ownSell} side="sell" />
      </Box>
    </Box>
  );
}

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

  // Start with the band in view.
  const ladderRef = useRef<HTMLDivElement>(null);
  const scrolled = useRef(false);
  useEffect(() => {
    const el = ladderRef.current;
    if (!el || scrolled.current || rows.length === 0) return;
    scrolled.current = true;
    const first = el.querySelector<HTMLElement>('[data-testid="ladder-row"]:not([aria-disabled])');
    if (first) el.scrollTop = Math.max(0, first.offsetTop - el.offsetTop - 60);
  }, [rows]);

  // Before the open (from 05:30) orders may be worked: they wait and go live at the open.
  const preOpen = status !== undefined && !status.open && status.parent_orders_open;
  const closed = status !== undefined && !status.open && !status.parent_orders_open;
  const i = instrument.data;
  const takeTipRow = showTakeTip && !closed && onWork ? rows.find((r) => r.tradable && hasOthersLiquidity(r)) : undefined;
  return (
    <Paper
      variant="outlined"
      component="section"
      aria-label={i ? `Order book ${i.name}` : 'Order book'}
      sx={{ height: BOOK_HEIGHT, flex: '1 1 0', minWidth: BOOK_MIN_WIDTH, maxWidth: BOOK_MAX_WIDTH, display: 'flex', flexDirection: 'column', position: 'relative', overflow: 'hidden' }}
    >
      <Box sx={{ px: 2, pt: 1.5, pb: 1, borderBottom: 1, borderColor: 'divider' }}>
        <Stack direction="row" spacing={1} sx={{ alignItems: 'flex-start' }}>
          <Box sx={{ flexGrow: 1, minWidth: 0 }}>
            {i ? (
              <OnboardingTip step="INTERACT_WITH_ORDERBOOK" show={showTip} placement="bottom-start">
                <Typography variant="subtitle1" component="h3" title={i.name} sx={{ fontWeight: 700, lineHeight: 1.3, wordBreak: 'break-word' }}>
                  {truncateName(i.name)}
                </Typography>
              </OnboardingTip>
            ) : (
              <Skeleton width="80%" />
            )}
            <Stack direction="row" spacing={0.5} sx={{ flexWrap: 'wrap', mt: 0.5 }} useFlexGap>
              {i && legLabels(i).map((leg) => <Chip key={leg} size="small" label={leg} variant="outlined" />)}
              {i?.reversed_spread && <Chip size="small" label="Reversed" color="warning" variant="outlined" />}
            </Stack>
          </Box>
          {onRemove && (
            <IconButton size="small" aria-label="Remove order book" onClick={onRemove}>
              <Close fontSize="small" />
            </IconButton>
          )}
        </Stack>
        <Stack direction="row" useFlexGap sx={{ justifyContent: 'space-between', flexWrap: 'wrap', columnGap: 1.5, mt: 1 }}>
          <Typography variant="caption" color="text.secondary" sx={{ whiteSpace: 'nowrap' }}>
            Best buy{' '}
            <Box component="b" sx={{ color: 'success.main' }} data-testid="best-buy">
              {i ? formatPrice(market.data?.best_buy_price, i.tick_size) : formatPrice(null, 0)}
            </Box>
          </Typography>
          <Typography variant="caption" color="text.secondary" sx={{ whiteSpace: 'nowrap' }}>
            Best sell{' '}
            <Box component="b" sx={{ color: 'error.main' }} data-testid="best-sell">
              {i ? formatPrice(market.data?.best_sell_price, i.tick_size) : formatPrice(null, 0)}
            </Box>
          </Typography>
        </Stack>
      </Box>
      <Box sx={{ display: 'grid', gridTemplateColumns: LADDER_COLUMNS, columnGap: 1, px: 1, py: 0.5, bgcolor: 'grey.50', borderBottom: 1, borderColor: 'divider' }}>
        <Typography variant="overline" sx={{ lineHeight: 2 }}>Buy</Typography>
        <Typography variant="overline" sx={{ lineHeight: 2, textAlign: 'center' }}>Price</Typography>
        <Typography variant="overline" sx={{ lineHeight: 2, textAlign: 'right' }}>Sell</Typography>
      </Box>
      {preOpen && (
        <Typography role="status" variant="caption" sx={{ px: 1.5, py: 0.75, bgcolor: 'action.hover', color: 'text.secondary', borderBottom: 1, borderColor: 'divider' }}>
          Opens at {formatHour(status.open_time)}: orders you work now wait for the open.
        </Typography>
      )}
      <Box ref={ladderRef} data-testid="price-ladder" sx={{ flexGrow: 1, overflow: 'auto', position: 'relative' }}>
        {book.isPending || instrument.isPending ? (
          <Stack spacing={1} sx={{ p: 2 }}>
            {Array.from({ length: 8 }, (_, n) => <Skeleton key={n} height={24} />)}
          </Stack>
        ) : book.isError || instrument.isError ? (
          <Typography color="error" sx={{ p: 2 }}>
            The order book could not be loaded.
          </Typography>
        ) : (
          rows.map((row) =>
            row === takeTipRow ? (
              <OnboardingTip key={row.text} step="TAKING_LIQUIDITY_IN_ORDERBOOK" show placement="left" fullWidth>
                <Row row={row} onWork={closed ? undefined : onWork} />
              </OnboardingTip>
            ) : (
              <Row key={row.text} row={row} onWork={closed ? undefined : onWork} />
            ),
          )
        )}
      </Box>
      {closed && (
        <Box
          role="status"
          sx={{ position: 'absolute', inset: 0, top: 96, bgcolor: 'rgba(255,255,255,0.88)', display: 'flex', flexDirection: 'column', alignItems: 'center', justifyContent: 'center', textAlign: 'center', p: 3, gap: 1 }}
        >
          <NightsStayOutlined color="action" sx={{ fontSize: 40 }} />
          <Typography variant="h3" component="p">
            {product_name} is closed
          </Typography>
          {closedText(status) && <Typography variant="body2">{closedText(status)}</Typography>}
          <Typography variant="body2" color="text.secondary">
            {operatingHours(status)}
          </Typography>
        </Box>
      )}
    </Paper>
  );
}
