import { useForm, useWatch } from 'react-hook-form';
import { zodResolver } from '@hookform/resolvers/zod';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { FormTextField } from '@/components/form/form-fields';
import { toFixed, toPlain, dec, decimalsOf } from '@/lib/decimal';
import { calculateBlock, calculatorSchema, CALCULATOR_DEFAULTS, formatNotional } from '../lib/block-calculator';

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
  const { control } = useForm({ resolver: zodResolver(calculatorSchema), mode: 'onChange', defaultValues: CALCULATOR_DEFAULTS });
  const [average, size, tick] = useWatch({ control, name: ['average', 'size', 'tick'] });
  const r = calculateBlock(average, size, tick);
  const places = r.ok ? decimalsOf(dec(tick)) : 0;
  return (
    <Stack spacing={3} sx={{ maxWidth: 720 }}>
      <Typography variant="h1">Block Calculator</Typography>
      <Paper variant="outlined" sx={{ p: 3 }}>
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2}>
          <FormTextField control={control} name="average" label="Average price" helperText=" " slotProps={{ htmlInput: { inputMode: 'decimal' } }} />
          <FormTextField control={control} name="size" label="Block size" helperText=" " slotProps={{ htmlInput: { inputMode: 'numeric' } }} />
          <FormTextField control={control} name="tick" label="Tick size" helperText=" " slotProps={{ htmlInput: { inputMode: 'decimal' } }} />
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
