import { useCallback, useEffect, useLayoutEffect, useRef, useState, type ReactElement, type ReactNode, type Ref } from 'react';
import Box from '@mui/material/Box';
import ButtonBase from '@mui/material/ButtonBase';
import Typography from '@mui/material/Typography';
import KeyboardArrowDown from '@mui/icons-material/KeyboardArrowDown';
import KeyboardArrowUp from '@mui/icons-material/KeyboardArrowUp';
import type { Decimal } from '@/lib/decimal';
import { formatK, NO_PRICE, type LadderRow } from '@/lib/trading-format';

/**
 * Buy, price and sell columns: the price column as wide as its text and centred, the sides
 * sharing the rest, none narrower than its text. A price never shrinks out of sight: a row
 * wider than its book scrolls sideways in the ladder instead.
 */
const LADDER_COLUMNS = 'minmax(max-content, 1fr) max-content minmax(max-content, 1fr)';
/** A row's height with its border: a 15-row ladder (a 10-tick band) fits a 564 px book whole. */
const ROW_HEIGHT = 27;
/** The height of a one-line cue that says what is scrolled out of view above or below (it wraps when narrow). */
const CUE_HEIGHT = 24;

type Props = {
  rows: LadderRow[];
  /** The best prices as the book's frames say them (text with the tick's decimals), or null. */
  bestBuy: string | null;
  bestSell: string | null;
  onWork?: (price: Decimal, row: LadderRow) => void;
  /** A note under the column heads (the pre-open note). */
  note?: ReactNode;
  /** Shown instead of the rows while the book loads or when it cannot. */
  placeholder?: ReactNode;
  /** The row that carries the take tip, and how to wrap it. */
  tipRow?: LadderRow;
  withTip?: (row: ReactElement) => ReactNode;
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
        height: ROW_HEIGHT,
        boxSizing: 'border-box',
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

/** The prices with no orders left out between two rows far apart. */
function Gap({ ticks, above, below }: { ticks: number; above: string; below: string }) {
  return (
    <Typography
      variant="caption"
      role="separator"
      aria-label={`No orders from ${above} to ${below}: ${ticks} ${ticks === 1 ? 'tick' : 'ticks'} left out`}
      data-testid="ladder-gap"
      title={`No orders between ${above} and ${below}`}
      sx={{ display: 'block', textAlign: 'center', color: 'text.secondary', bgcolor: 'grey.100', borderBottom: 1, borderColor: 'divider', lineHeight: '18px' }}
    >
      ⋯ {ticks} {ticks === 1 ? 'tick' : 'ticks'} ⋯
    </Typography>
  );
}

/** What is out of view on one side of the ladder: its rows, and the own orders and best prices among them, nearest first. */
type Hidden = { count: number; own: boolean; best: string[]; notable: string[] };

/** The rows scrolled out of view (or under a cue, as high as `cues` says) above and below. */
function hiddenRows(el: HTMLElement, rows: LadderRow[], bestBuy: string | null, bestSell: string | null, cues: { above: number; below: number }) {
  const top = el.scrollTop;
  const bottom = top + el.clientHeight;
  const above: Hidden = { count: 0, own: false, best: [], notable: [] };
  const below: Hidden = { count: 0, own: false, best: [], notable: [] };
  const byPrice = new Map(rows.map((r) => [r.text, r]));
  const elements = Array.from(el.querySelectorAll<HTMLElement>('[data-testid="ladder-row"]'));
  // A cue covers an edge only when something is cut there.
  const cutAbove = elements.some((e) => e.offsetTop < top - 1);
  const cutBelow = elements.some((e) => e.offsetTop + e.offsetHeight > bottom + 1);
  for (const e of elements) {
    const text = e.dataset.price ?? '';
    const row = byPrice.get(text);
    const side = cutAbove && e.offsetTop < top + cues.above - 1 ? above : cutBelow && e.offsetTop + e.offsetHeight > bottom - cues.below + 1 ? below : undefined;
    if (!side || !row) continue;
    side.count += 1;
    const own = row.ownBuy > 0 || row.ownSell > 0;
    side.own ||= own;
    if (text === bestBuy) side.best.push('best buy');
    if (text === bestSell) side.best.push('best sell');
    if (own || text === bestBuy || text === bestSell) side.notable.push(text);
  }
  above.notable.reverse();
  return { above, below };
}

function Cue({ at, hidden, onClick, cueRef }: { at: 'above' | 'below'; hidden: Hidden; onClick: () => void; cueRef: Ref<HTMLButtonElement> }) {
  const what = [`${hidden.count} more ${hidden.count === 1 ? 'row' : 'rows'}`, ...(hidden.own ? ['your orders'] : []), ...hidden.best];
  const Arrow = at === 'above' ? KeyboardArrowUp : KeyboardArrowDown;
  return (
    <ButtonBase
      ref={cueRef}
      onClick={onClick}
      data-testid={`ladder-more-${at}`}
      aria-label={`Show ${at === 'above' ? 'higher' : 'lower'} prices: ${what.join(', ')}`}
      sx={{
        position: 'absolute',
        left: 0,
        right: 0,
        [at === 'above' ? 'top' : 'bottom']: 0,
        minHeight: CUE_HEIGHT,
        gap: 0.5,
        px: 1,
        py: 0.25,
        typography: 'caption',
        fontWeight: 600,
        color: hidden.own || hidden.best.length ? 'primary.main' : 'text.secondary',
        bgcolor: 'grey.100',
        [at === 'above' ? 'borderBottom' : 'borderTop']: 1,
        borderColor: 'divider',
        lineHeight: 1.4,
        textAlign: 'center',
        justifyContent: 'center',
      }}
    >
      <Arrow sx={{ fontSize: 16, flexShrink: 0 }} />
      <Box component="span">
        {what.join(' · ')}
      </Box>
    </ButtonBase>
  );
}

/**
 * The price ladder under its column heads: rows of the book, a marker where prices with no
 * orders are left out, the best prices (each brings its row into view), and a cue on each
 * edge naming what is scrolled out of view there (your orders, a best price) that brings
 * it into view: nothing of the book is cut off unsaid.
 */
export function Ladder({ rows, bestBuy, bestSell, onWork, note, placeholder, tipRow, withTip }: Props) {
  const ref = useRef<HTMLDivElement>(null);
  const [hidden, setHidden] = useState<ReturnType<typeof hiddenRows>>();
  // What the cues said last: a scroll that changes nothing of it renders nothing.
  const said = useRef('');
  // The cues' heights as last drawn (one line until drawn; two when a narrow book wraps them).
  const aboveCue = useRef<HTMLButtonElement>(null);
  const belowCue = useRef<HTMLButtonElement>(null);
  const measure = useCallback(() => {
    const el = ref.current;
    const cues = { above: aboveCue.current?.offsetHeight || CUE_HEIGHT, below: belowCue.current?.offsetHeight || CUE_HEIGHT };
    if (!el) return;
    const next = hiddenRows(el, rows, bestBuy, bestSell, cues);
    const key = JSON.stringify(next);
    if (key !== said.current) {
      said.current = key;
      setHidden(next);
    }
  }, [rows, bestBuy, bestSell]);

  // Start with the band in view: two rows above its first row at the top.
  const scrolled = useRef(false);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el || scrolled.current || rows.length === 0) return;
    scrolled.current = true;
    const first = el.querySelector<HTMLElement>('[data-testid="ladder-row"]:not([aria-disabled])');
    if (first) el.scrollTop = Math.max(0, first.offsetTop - 2 * ROW_HEIGHT);
  }, [rows]);

  useLayoutEffect(measure, [measure]);
  // A cue drawn taller than the line it was measured with covers more rows: count them.
  const counted = useRef('');
  useLayoutEffect(() => {
    const now = `${aboveCue.current?.offsetHeight ?? 0}/${belowCue.current?.offsetHeight ?? 0}`;
    if (now !== counted.current) {
      counted.current = now;
      measure();
    }
  }, [hidden, measure]);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, [measure]);

  /** Brings a row into the middle of the ladder. */
  const show = (text: string) => {
    const el = ref.current;
    const row = el?.querySelector<HTMLElement>(`[data-testid="ladder-row"][data-price="${CSS.escape(text)}"]`);
    if (!el || !row) return;
    el.scrollTop = Math.max(0, row.offsetTop - (el.clientHeight - row.offsetHeight) / 2);
    measure();
  };
  /** Brings the nearest own order or best price out of view on that side into view, or pages towards it. */
  const reveal = (side: Hidden, at: 'above' | 'below') => {
    const el = ref.current;
    const nearest = side.notable[0];
    if (!el) return;
    if (nearest) return show(nearest);
    el.scrollTop += (at === 'above' ? -1 : 1) * Math.max(ROW_HEIGHT, el.clientHeight - 2 * CUE_HEIGHT - ROW_HEIGHT);
    measure();
  };

  const best = (side: 'buy' | 'sell', price: string | null) => (
    <ButtonBase
      disabled={price === null}
      onClick={() => price && show(price)}
      aria-label={price ? `Best ${side} ${price}: show it on the ladder` : `No best ${side}`}
      title={`Best ${side}`}
      sx={{ justifySelf: side === 'buy' ? 'start' : 'end', typography: 'caption', fontWeight: 700, color: side === 'buy' ? 'success.main' : 'error.main', borderRadius: 0.5, px: 0.25, '&.Mui-disabled': { color: 'text.disabled' } }}
    >
      <span data-testid={`best-${side}`}>{price ?? NO_PRICE}</span>
    </ButtonBase>
  );

  return (
    <>
      <Box sx={{ display: 'grid', gridTemplateColumns: LADDER_COLUMNS, columnGap: 1, px: 1, py: 0.5, bgcolor: 'grey.50', borderBottom: 1, borderColor: 'divider', alignItems: 'center' }}>
        <Typography variant="overline" sx={{ lineHeight: 2 }}>Buy</Typography>
        <Typography variant="overline" sx={{ lineHeight: 2, textAlign: 'center' }}>Price</Typography>
        <Typography variant="overline" sx={{ lineHeight: 2, textAlign: 'right' }}>Sell</Typography>
        {best('buy', bestBuy)}
        <Typography variant="caption" color="text.secondary" sx={{ textAlign: 'center', lineHeight: '18px' }}>
          best
        </Typography>
        {best('sell', bestSell)}
      </Box>
      {note}
      <Box sx={{ flexGrow: 1, minHeight: 0, position: 'relative' }}>
        <Box ref={ref} data-testid="price-ladder" onScroll={measure} sx={{ height: '100%', overflow: 'auto', position: 'relative' }}>
          {placeholder ?? rows.map((row, n) => {
            const line = <Row row={row} onWork={onWork} />;
            const above = rows[n - 1];
            return (
              <Box key={row.text}>
                {row.gapAbove !== null && above && <Gap ticks={row.gapAbove} above={above.text} below={row.text} />}
                {row === tipRow && withTip ? withTip(line) : line}
              </Box>
            );
          })}
        </Box>
        {hidden && hidden.above.count > 0 && <Cue at="above" hidden={hidden.above} onClick={() => reveal(hidden.above, 'above')} cueRef={aboveCue} />}
        {hidden && hidden.below.count > 0 && <Cue at="below" hidden={hidden.below} onClick={() => reveal(hidden.below, 'below')} cueRef={belowCue} />}
      </Box>
    </>
  );
}
