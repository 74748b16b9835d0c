import { useState } from 'react';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import CircularProgress from '@mui/material/CircularProgress';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogTitle from '@mui/material/DialogTitle';
import ToggleButton from '@mui/material/ToggleButton';
import ToggleButtonGroup from '@mui/material/ToggleButtonGroup';
import Typography from '@mui/material/Typography';
import { serverErrorText } from '@/components/form/form-drawer';
import type { Instrument } from '@/lib/api/dto';
import { cmp, dec, decimalsOf, ticksBetween, toFixed, type Decimal } from '@/lib/decimal';
import { formatDateTime, formatDateTimeSeconds } from '@/lib/format-date';
import { BAND_PERIODS, useBandHistory, type BandPoint } from '../api/get-band-history';

const WIDTH = 640;
const HEIGHT = 240;
const PAD = { left: 8, right: 8, top: 12, bottom: 12 };

/** The band's steps in pixels: time across, ticks from the lowest bid up (no float prices). */
export function bandPaths(points: BandPoint[], tick: Decimal, from: number, to: number) {
  if (points.length === 0) return null;
  const bids = points.map((p) => dec(p.min_tick_price));
  const offers = points.map((p) => dec(p.max_tick_price));
  const low = bids.reduce((a, b) => (cmp(b, a) < 0 ? b : a));
  const high = offers.reduce((a, b) => (cmp(b, a) > 0 ? b : a));
  const span = Math.max(ticksBetween(low, high, tick), 1);
  const x = (ms: number) => PAD.left + ((Math.min(Math.max(ms, from), to) - from) / Math.max(to - from, 1)) * (WIDTH - PAD.left - PAD.right);
  const y = (d: Decimal) => HEIGHT - PAD.bottom - (ticksBetween(low, d, tick) / span) * (HEIGHT - PAD.top - PAD.bottom);
  const step = (side: Decimal[]) =>
    side
      .map((d, n) => {
        const start = x(Date.parse(points[n]!.at));
        const end = x(n + 1 < points.length ? Date.parse(points[n + 1]!.at) : to);
        return `${n === 0 ? 'M' : 'L'}${start.toFixed(1)},${y(d).toFixed(1)} L${end.toFixed(1)},${y(d).toFixed(1)}`;
      })
      .join(' ');
  return { bid: step(bids), offer: step(offers), low, high };
}

/**
 * An instrument's band (the exchange's best bid and offer) over the last hour, day or week
 * (issue 30): its history, kept apart from the action log, as steps.
 */
export function BandChartDialog({ instrument, onClose }: { instrument: Instrument; onClose: () => void }) {
  const [hours, setHours] = useState<number>(24);
  const [to, setTo] = useState(() => new Date());
  const history = useBandHistory(instrument.instrument_id, hours, to);
  // From the period's start, or from the first band when the instrument is younger.
  const first = history.data?.[0];
  const from = Math.max(to.getTime() - hours * 3_600_000, first ? Date.parse(first.at) : 0);
  const tick = dec(instrument.tick_size);
  const paths = history.data ? bandPaths(history.data, tick, from, to.getTime()) : null;
  const price = (d: Decimal) => toFixed(d, decimalsOf(tick));
  // An hour reads to the second, longer periods to the minute.
  const when = (t: number | Date) => (hours === 1 ? formatDateTimeSeconds(new Date(t)) : formatDateTime(new Date(t)));
  return (
    <Dialog open onClose={onClose} aria-labelledby="band-chart-title" maxWidth="md" fullWidth>
      <DialogTitle id="band-chart-title">{`Band of ${instrument.name}`}</DialogTitle>
      <DialogContent>
        <ToggleButtonGroup
          size="small"
          exclusive
          value={hours}
          aria-label="Period"
          onChange={(_, h: number | null) => {
            if (h === null) return;
            setHours(h);
            setTo(new Date());
          }}
          sx={{ mb: 2 }}
        >
          {BAND_PERIODS.map((p) => (
            <ToggleButton key={p.hours} value={p.hours}>
              {p.label}
            </ToggleButton>
          ))}
        </ToggleButtonGroup>
        {history.isError ? (
          <Alert severity="error">{serverErrorText(history.error)}</Alert>
        ) : history.isPending ? (
          <Box sx={{ display: 'flex', justifyContent: 'center', py: 6 }}>
            <CircularProgress aria-label="Loading the band" />
          </Box>
        ) : !paths ? (
          <Typography color="text.secondary">No band was set in this period.</Typography>
        ) : (
          <Box>
            <Box sx={{ display: 'flex', justifyContent: 'space-between', typography: 'caption', color: 'text.secondary' }}>
              <span>{`Highest offer ${price(paths.high)}`}</span>
              <span>{`${history.data.length} ${history.data.length === 1 ? 'point' : 'points'}`}</span>
            </Box>
            <Box
              component="svg"
              role="img"
              aria-label={`Best bid and offer of ${instrument.name} from ${when(from)} to ${when(to)}: from ${price(paths.low)} to ${price(paths.high)}`}
              viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
              sx={{ width: '100%', height: 'auto', display: 'block', bgcolor: 'grey.50', borderRadius: 1 }}
            >
              <path d={paths.offer} fill="none" stroke="#c62828" strokeWidth={1.5} data-testid="band-offer" />
              <path d={paths.bid} fill="none" stroke="#2e7d32" strokeWidth={1.5} data-testid="band-bid" />
            </Box>
            <Box sx={{ display: 'flex', justifyContent: 'space-between', typography: 'caption', color: 'text.secondary' }}>
              <span>{`Lowest bid ${price(paths.low)}`}</span>
              <span />
            </Box>
            <Box sx={{ display: 'flex', justifyContent: 'space-between', typography: 'caption', color: 'text.secondary', mt: 0.5 }}>
              <span>{when(from)}</span>
              <span>
                <Box component="span" sx={{ color: '#2e7d32' }}>
                  ■
                </Box>{' '}
                Best bid{' '}
                <Box component="span" sx={{ color: '#c62828', ml: 1 }}>
                  ■
                </Box>{' '}
                Best offer
              </span>
              <span>{when(to)}</span>
            </Box>
          </Box>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>Close</Button>
      </DialogActions>
    </Dialog>
  );
}
