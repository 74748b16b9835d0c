import { useState, type FormEvent } from 'react';
import Alert from '@mui/material/Alert';
import Autocomplete from '@mui/material/Autocomplete';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import FormControl from '@mui/material/FormControl';
import FormHelperText from '@mui/material/FormHelperText';
import FormLabel from '@mui/material/FormLabel';
import Stack from '@mui/material/Stack';
import TextField from '@mui/material/TextField';
import ToggleButton from '@mui/material/ToggleButton';
import ToggleButtonGroup from '@mui/material/ToggleButtonGroup';
import Typography from '@mui/material/Typography';
import { DrawerHeader, SideDrawer } from '@/components/ui/side-drawer';
import { ApiError } from '@/lib/api-errors';
import { useCurrentUser } from '@/lib/api/get-me';
import { useDebounced } from '@/lib/use-debounced';
import { INSTRUMENT_FILTER_DEBOUNCE_MS } from '@/config/constants';
import type { Direction, Instrument } from '@/lib/api/dto';
import { useInstruments } from '@/lib/api/get-instruments';
import { parseQuantity } from '@/lib/order-validation';
import { truncateName } from '@/lib/trading-format';
import { useCreateParentOrder } from '../api/create-parent-order';

/** Spec section 5: the maximum parent quantity without a multiplier. */
export const DEFAULT_MAX_PARENT_QUANTITY = 100_000;

/** Spec section 5 (parent order form). */
export function parentQuantityError(text: string, min: number, multiplier: number | null): string | null {
  if (text.trim() === '') return null;
  const q = parseQuantity(text);
  const max = multiplier ? multiplier * min : DEFAULT_MAX_PARENT_QUANTITY;
  if (q === null || q < min) return `The minimum block size is ${min}`;
  if (q > max) return `The maximum quantity is ${max}`;
  return null;
}

/** '[status]: ' plus the server data (spec section 8). */
function createError(error: unknown): string {
  if (!(error instanceof ApiError)) return '[0]: The parent order could not be created.';
  const data = error.detail ?? (typeof error.data === 'string' ? error.data : JSON.stringify(error.data ?? ''));
  return `[${error.status}]: ${data}`;
}

type Props = { open: boolean; onClose: () => void; onCreated?: (instrumentId: string) => void };

export function CreateParentOrderDrawer({ open, onClose, onCreated }: Props) {
  return (
    <SideDrawer open={open} onClose={onClose}>
      {open && <CreateParentOrderForm onClose={onClose} onCreated={onCreated} />}
    </SideDrawer>
  );
}

function CreateParentOrderForm({ onClose, onCreated }: { onClose: () => void; onCreated?: (instrumentId: string) => void }) {
  const user = useCurrentUser();
  const [direction, setDirection] = useState<Direction | null>(null);
  const [directionTouched, setDirectionTouched] = useState(false);
  const [search, setSearch] = useState('');
  const filter = useDebounced(search, INSTRUMENT_FILTER_DEBOUNCE_MS);
  const instruments = useInstruments(filter);
  const [instrument, setInstrument] = useState<Instrument | null>(null);
  const [quantity, setQuantity] = useState('');
  const [instructions, setInstructions] = useState('');
  const create = useCreateParentOrder();

  const qtyError = instrument ? parentQuantityError(quantity, instrument.min_quantity, user.parent_order_limit_multiplier ?? null) : null;
  const directionError = directionTouched && !direction ? 'Direction is required' : null;
  const valid = direction !== null && instrument !== null && quantity.trim() !== '' && qtyError === null;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setDirectionTouched(true);
    if (!valid || !instrument) return;
    create.mutate(
      {
        direction,
        instrument_id: instrument.instrument_id,
        quantity: parseQuantity(quantity) ?? 0,
        broker_instructions: instructions.trim() || null,
      },
      {
        onSuccess: (p) => {
          onCreated?.(p.instrument_id);
          onClose();
        },
      },
    );
  };

  return (
    <Box component="form" onSubmit={submit} noValidate sx={{ display: 'flex', flexDirection: 'column', height: '100%' }}>
      <DrawerHeader title="Create Parent order" onClose={onClose} />
      <Stack spacing={3} sx={{ p: 3, flexGrow: 1, overflowY: 'auto' }}>
        <FormControl error={directionError !== null}>
          <FormLabel id="direction-label" sx={{ mb: 1 }}>
            Direction
          </FormLabel>
          <ToggleButtonGroup
            exclusive
            fullWidth
            aria-labelledby="direction-label"
            value={direction}
            onChange={(_, v: Direction | null) => {
              setDirectionTouched(true);
              if (v) setDirection(v);
            }}
          >
            <ToggleButton value="BUY" color="success">
              Buy
            </ToggleButton>
            <ToggleButton value="SELL" color="error">
              Sell
            </ToggleButton>
          </ToggleButtonGroup>
          {directionError && <FormHelperText>{directionError}</FormHelperText>}
        </FormControl>
        <Autocomplete
          options={instruments.data ?? []}
          loading={instruments.isFetching}
          value={instrument}
          onChange={(_, v) => {
            setInstrument(v);
            setDirectionTouched(true);
            if (!v) setQuantity('');
          }}
          inputValue={search}
          onInputChange={(_, v) => setSearch(v)}
          filterOptions={(x) => x}
          getOptionLabel={(i) => i.name}
          isOptionEqualToValue={(a, b) => a.instrument_id === b.instrument_id}
          getOptionKey={(i) => i.instrument_id}
          noOptionsText={instruments.isFetching ? 'Searching…' : 'No instrument matches'}
          renderOption={({ key, ...props }, i) => (
            <li key={key} {...props}>
              <Box>
                <Typography variant="body2">{truncateName(i.name)}</Typography>
                <Typography variant="caption" color="text.secondary">
                  Min block {i.min_quantity} · tick {String(i.tick_size)}
                </Typography>
              </Box>
            </li>
          )}
          renderInput={(params) => <TextField {...params} label="Instrument" placeholder="Search by name" />}
        />
        <TextField
          label="Quantity"
          value={quantity}
          onChange={(e) => setQuantity(e.target.value)}
          disabled={!instrument}
          error={qtyError !== null}
          helperText={qtyError ?? (instrument ? `Minimum block size ${instrument.min_quantity}` : 'Choose an instrument first')}
          slotProps={{ htmlInput: { inputMode: 'numeric' } }}
          fullWidth
        />
        <TextField
          label="Broker instructions"
          value={instructions}
          onChange={(e) => setInstructions(e.target.value)}
          multiline
          minRows={3}
          helperText="Optional"
          fullWidth
        />
        {create.isError && <Alert severity="error">{createError(create.error)}</Alert>}
      </Stack>
      <Box sx={{ p: 3, borderTop: 1, borderColor: 'divider' }}>
        <Button type="submit" variant="contained" fullWidth disabled={!valid || create.isPending}>
          Create parent order
        </Button>
      </Box>
    </Box>
  );
}
