import { useMemo, useState } from 'react';
import { Controller, useForm, useWatch } from 'react-hook-form';
import { zodResolver } from '@hookform/resolvers/zod';
import Autocomplete from '@mui/material/Autocomplete';
import Box from '@mui/material/Box';
import FormControl from '@mui/material/FormControl';
import FormHelperText from '@mui/material/FormHelperText';
import FormLabel from '@mui/material/FormLabel';
import TextField from '@mui/material/TextField';
import ToggleButton from '@mui/material/ToggleButton';
import ToggleButtonGroup from '@mui/material/ToggleButtonGroup';
import Typography from '@mui/material/Typography';
import { FormDrawer } from '@/components/form/form-drawer';
import { FormTextField } from '@/components/form/form-fields';
import { ApiError } from '@/lib/api-errors';
import { useCurrentUser } from '@/lib/api/get-me';
import { useDebounced } from '@/lib/use-debounced';
import { INSTRUMENT_FILTER_DEBOUNCE_MS } from '@/config/constants';
import type { Direction } from '@/lib/api/dto';
import { useInstruments } from '@/lib/api/get-instruments';
import { truncateName } from '@/lib/trading-format';
import { useToast } from '@/components/ui/toast';
import { useCreateParentOrder } from '../api/create-parent-order';
import type { ParentOrder } from '../api/get-parent-orders';
import { emptyParentOrderForm, parentOrderBody, parentOrderFormSchema, type ParentOrderForm } from '../lib/parent-order-form';

const quantityText = new Intl.NumberFormat('en-GB');

/** '[status]: ' plus the server data (spec section 8). */
function createError(error: unknown): string | null {
  if (!error) return null;
  if (!(error instanceof ApiError)) return '[0]: The parent order could not be created.';
  const data = error.detail ?? (typeof error.data === 'string' ? error.data : JSON.stringify(error.data ?? ''));
  return `[${error.status}]: ${data}`;
}

type Props = { open: boolean; onClose: () => void; onCreated?: (parent: ParentOrder) => void };

export function CreateParentOrderDrawer({ open, onClose, onCreated }: Props) {
  return open ? <CreateParentOrderForm onClose={onClose} onCreated={onCreated} /> : null;
}

function CreateParentOrderForm({ onClose, onCreated }: { onClose: () => void; onCreated?: (parent: ParentOrder) => void }) {
  const { showToast } = useToast();
  const user = useCurrentUser();
  const multiplier = user.parent_order_limit_multiplier ?? null;
  const schema = useMemo(() => parentOrderFormSchema(multiplier), [multiplier]);
  const form = useForm<ParentOrderForm>({ resolver: zodResolver(schema), mode: 'onChange', defaultValues: emptyParentOrderForm });
  const { control } = form;
  const instrument = useWatch({ control, name: 'instrument' });
  // The search text is not part of the order: it only filters the instrument options.
  const [search, setSearch] = useState('');
  const filter = useDebounced(search, INSTRUMENT_FILTER_DEBOUNCE_MS);
  const instruments = useInstruments(filter);
  const create = useCreateParentOrder();

  const submit = (values: ParentOrderForm) => {
    const body = parentOrderBody(values);
    if (!body) return;
    create.mutate(body, {
      onSuccess: (p) => {
        // Said at once, and the new card is brought into view by the dashboard (issue 28.13).
        showToast({
          message: 'Parent order created',
          description: `${p.direction === 'BUY' ? 'Buy' : 'Sell'} ${quantityText.format(p.quantity)} ${values.instrument?.name ?? ''}: work it from its order book.`,
        });
        onCreated?.(p);
        onClose();
      },
    });
  };

  return (
    <FormDrawer
      form={form}
      title="Create Parent order"
      submitLabel="Create parent order"
      pending={create.isPending}
      error={create.error}
      errorText={createError}
      cancelButton={false}
      onSubmit={submit}
      onClose={onClose}
    >
      {/* 'Direction is required' shows once a direction is clicked, an instrument chosen or submit tried. */}
      <Controller
        control={control}
        name="direction"
        render={({ field, fieldState }) => (
          <FormControl error={Boolean(fieldState.error)}>
            <FormLabel id="direction-label" sx={{ mb: 1 }}>
              Direction
            </FormLabel>
            <ToggleButtonGroup
              exclusive
              fullWidth
              aria-labelledby="direction-label"
              value={field.value}
              onChange={(_, v: Direction | null) => {
                if (v) field.onChange(v);
              }}
            >
              <ToggleButton value="BUY" color="success">
                Buy
              </ToggleButton>
              <ToggleButton value="SELL" color="error">
                Sell
              </ToggleButton>
            </ToggleButtonGroup>
            {fieldState.error && <FormHelperText>{fieldState.error.message}</FormHelperText>}
          </FormControl>
        )}
      />
      <Controller
        control={control}
        name="instrument"
        rules={{ deps: ['direction', 'quantity'] }}
        render={({ field }) => (
          <Autocomplete
            options={instruments.data ?? []}
            loading={instruments.isFetching}
            value={field.value}
            onChange={(_, v) => {
              if (!v) form.setValue('quantity', '');
              field.onChange(v);
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
        )}
      />
      <FormTextField
        control={control}
        name="quantity"
        label="Quantity"
        disabled={!instrument}
        helperText={instrument ? `Minimum block size ${instrument.min_quantity}` : 'Choose an instrument first'}
        slotProps={{ htmlInput: { inputMode: 'numeric' } }}
      />
      <FormTextField control={control} name="broker_instructions" label="Broker instructions" multiline minRows={3} helperText="Optional" />
    </FormDrawer>
  );
}
