import { useState } from 'react';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import { toFixed, toPlain, dec, decimalsOf } from '@/lib/decimal';
import { calculateBlock, CALCULATOR_DEFAULTS, formatNotional } from '../lib/block-calculator';

function Output({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <Box>
      <Typography variant="body2" color="text.secondary">
        {label}
      </Typography>
      <Typography variant="h3" component="p" data-testid={testId} sx={{ fontVariantNumeric: 'tabular-nums' }}>
        {value}
      </Typography>
    </Box>
  );
}

/** Admin spec sections 2 and 9, formulas in ADR 0007: the price band of a block around its average price. */
export function BlockCalculator() {
  const [average, setAverage] = useState<string>(CALCULATOR_DEFAULTS.average);
  const [size, setSize] = useState<string>(CALCULATOR_DEFAULTS.size);
  const [tick, setTick] = useState<string>(CALCULATOR_DEFAULTS.tick);
  const r = calculateBlock(average, size, tick);
  const places = r.ok ? decimalsOf(dec(tick)) : 0;
  const error = (field: 'average' | 'size' | 'tick') => (!r.ok && r.field === field ? r.message : undefined);
  return (
    <Stack spacing={3} sx={{ maxWidth: 720 }}>
      <Typography variant="h1">Block Calculator</Typography>
      <Paper variant="outlined" sx={{ p: 3 }}>
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2}>
          <TextField label="Average price" value={average} onChange={(e) => setAverage(e.target.value)} error={!!error('average')} helperText={error('average') ?? ' '} slotProps={{ htmlInput: { inputMode: 'decimal' } }} fullWidth />
          <TextField label="Block size" value={size} onChange={(e) => setSize(e.target.value)} error={!!error('size')} helperText={error('size') ?? ' '} slotProps={{ htmlInput: { inputMode: 'numeric' } }} fullWidth />
          <TextField label="Tick size" value={tick} onChange={(e) => setTick(e.target.value)} error={!!error('tick')} helperText={error('tick') ?? ' '} slotProps={{ htmlInput: { inputMode: 'decimal' } }} fullWidth />
        </Stack>
      </Paper>
      <Paper variant="outlined" sx={{ p: 3 }} aria-live="polite">
        {r.ok ? (
          <Box sx={{ display: 'grid', gridTemplateColumns: { xs: '1fr', sm: 'repeat(3, 1fr)' }, gap: 3 }}>
            <Output label="Price band (±0.5 %)" value={`${toFixed(r.low, places)} – ${toFixed(r.high, places)}`} testId="band" />
            <Output label="Ticks in the band" value={`${r.ticks.toString()} (${r.levels.toString()} prices)`} testId="ticks" />
            <Output label="Notional" value={formatNotional(r.notional)} testId="notional" />
          </Box>
        ) : r.field === 'band' ? (
          <Alert severity="warning">{r.message}: no price of this tick lies within ±0.5 % of {toPlain(dec(average))}.</Alert>
        ) : (
          <Typography color="text.secondary">Enter an average price, a block size and a tick size to see the band.</Typography>
        )}
      </Paper>
      <Typography variant="body2" color="text.secondary">
        The band is the average price ±0.5 %, each end rounded inward to a whole tick; the notional is average price × block size.
      </Typography>
    </Stack>
  );
}
