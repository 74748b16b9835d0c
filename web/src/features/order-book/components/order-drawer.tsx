import { useEffect, useMemo } from 'react';
import { Controller, useForm, useWatch, type Control } from 'react-hook-form';
import { zodResolver } from '@hookform/resolvers/zod';
import Box from '@mui/material/Box';
import Chip from '@mui/material/Chip';
import FormControl from '@mui/material/FormControl';
import FormControlLabel from '@mui/material/FormControlLabel';
import FormLabel from '@mui/material/FormLabel';
import IconButton from '@mui/material/IconButton';
import InputAdornment from '@mui/material/InputAdornment';
import MenuItem from '@mui/material/MenuItem';
import Radio from '@mui/material/Radio';
import RadioGroup from '@mui/material/RadioGroup';
import Stack from '@mui/material/Stack';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import Add from '@mui/icons-material/Add';
import Remove from '@mui/icons-material/Remove';
import { FormDrawer, serverFieldError } from '@/components/form/form-drawer';
import { FormSwitch, FormTextField } from '@/components/form/form-fields';
import { useToast } from '@/components/ui/toast';
import { ApiError } from '@/lib/api-errors';
import { addTicks, dec, decimalsOf, parseDecimal, toFixed, type Decimal } from '@/lib/decimal';
import { useCurrentUser } from '@/lib/api/get-me';
import { OnboardingTip, useNextTip } from '@/components/ui/onboarding-tip';
import type { Instrument, Order } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';
import { formatPrice, truncateName } from '@/lib/trading-format';
import { useCreateOrder } from '../api/create-order';
import { useEditOrder } from '../api/edit-order';
import { useCompany } from '../api/get-company';
import {
  availableQuantity,
  chosenParent,
  createOrderBody,
  editMessage,
  editOrderBody,
  effectiveBroker,
  orderChanges,
  orderFormDefaults,
  orderFormSchema,
  type OrderForm as OrderFormValues,
} from '../lib/order-form';

type ParentOrder = components['schemas']['ParentOrderDto'];

export type OrderDrawerTarget =
  | { kind: 'work'; instrument: Instrument; parents: ParentOrder[]; price: Decimal }
  | { kind: 'edit'; instrument: Instrument; parent: ParentOrder; order: Order };

const number = new Intl.NumberFormat('en-GB');

/** The server's error as spec section 8 shows it: its detail, else '[status]: ' plus its data. */
function saveError(error: unknown): string | null {
  if (!error) return null;
  const e = error instanceof ApiError ? error : new ApiError(0, undefined);
  return e.detail ?? `[${e.status}]: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data ?? 'The order could not be saved.')}`;
}

/** The limit price field with its one-tick stepper buttons (spec section 5); prices step as exact decimals. */
function PriceStepper({ control, tick, serverError, onStep }: { control: Control<OrderFormValues>; tick: Decimal; serverError?: string; onStep: (ticks: number) => void }) {
  return (
    <FormTextField
      control={control}
      name="price"
      label="Limit price"
      helperText={`Tick ${toFixed(tick, decimalsOf(tick))}`}
      serverError={serverError}
      slotProps={{
        htmlInput: { inputMode: 'decimal', 'aria-label': 'Limit price' },
        input: {
          startAdornment: (
            <InputAdornment position="start">
              <IconButton aria-label="Decrease price by one tick" edge="start" onClick={() => onStep(-1)}>
                <Remove />
              </IconButton>
            </InputAdornment>
          ),
          endAdornment: (
            <InputAdornment position="end">
              <IconButton aria-label="Increase price by one tick" edge="end" onClick={() => onStep(1)}>
                <Add />
              </IconButton>
            </InputAdornment>
          ),
        },
      }}
    />
  );
}

type Props = { target: OrderDrawerTarget | null; onClose: () => void };

/** The right-hand drawer to work the remaining quantity at a price, or to edit a working child order. */
export function OrderDrawer({ target, onClose }: Props) {
  // Keyed so each opening starts from the clicked row or the order's values.
  return target && <OrderForm key={target.kind === 'edit' ? target.order.order_id : `${target.instrument.instrument_id}-${target.price.units}-${target.price.scale}`} target={target} onClose={onClose} />;
}

function OrderForm({ target, onClose }: { target: OrderDrawerTarget; onClose: () => void }) {
  const { showToast } = useToast();
  const user = useCurrentUser();
  const company = useCompany(user.company_id);
  const create = useCreateOrder();
  const edit = useEditOrder();
  const { instrument } = target;
  const tick = dec(instrument.tick_size);
  const places = decimalsOf(tick);
  const editing = target.kind === 'edit';
  const original = target.kind === 'edit' ? target.order : null;
  // The target is fixed for the form's life (the drawer is keyed on it), so is the schema.
  const context = useMemo(() => ({ instrument, parents: target.kind === 'work' ? target.parents : [target.parent], original }), [target, instrument, original]);
  const schema = useMemo(() => orderFormSchema(context), [context]);
  const form = useForm<OrderFormValues>({
    resolver: zodResolver(schema),
    mode: 'onChange',
    defaultValues: orderFormDefaults(context, target.kind === 'work' ? toFixed(target.price, places) : ''),
  });
  const { control, trigger } = form;
  // Spec section 5: the price and quantity messages show from the opening (the row or the order may break the rules).
  useEffect(() => {
    void trigger();
  }, [trigger]);

  const { parents } = context;
  const parentId = useWatch({ control, name: 'parent_order_id' });
  const brokerChoice = useWatch({ control, name: 'broker_id' });
  const parent = chosenParent(parents, parentId);
  const available = availableQuantity(parent, original);
  const eligible = parent?.eligible_brokers ?? [];
  const brokerId = effectiveBroker(brokerChoice, parent, company.data?.default_broker?.company_id);
  const saving = editing ? edit : create;
  const pending = create.isPending || edit.isPending;
  const tip = useNextTip(editing ? [] : ['LEAVING_LIQUIDITY_IN_ORDERBOOK', 'FIRST_ICEBERG_ORDER']);

  const step = (ticks: number) => {
    const current = parseDecimal(form.getValues('price'));
    if (current) form.setValue('price', toFixed(addTicks(current, tick, ticks), places), { shouldValidate: true, shouldDirty: true });
  };

  const submit = (values: OrderFormValues) => {
    if (!parent) return;
    if (original) {
      const changed = orderChanges(values, original);
      if (Object.keys(changed).length === 0) return onClose();
      edit.mutate(
        { orderId: original.order_id, body: editOrderBody(values) },
        {
          onSuccess: () => {
            showToast({ message: editMessage(changed) });
            onClose();
          },
        },
      );
    } else {
      create.mutate(createOrderBody(values, instrument, parent, brokerId), {
        onSuccess: (o) => {
          showToast({ message: `Your order to ${o.direction === 'BUY' ? 'buy' : 'sell'} ${number.format(o.quantity)} at ${formatPrice(o.price, instrument.tick_size)} is working.` });
          onClose();
        },
      });
    }
  };

  const direction = parent?.direction;
  const brokerError = serverFieldError(saving.error, 'broker_id');
  return (
    <FormDrawer
      form={form}
      title={editing ? 'Edit order' : 'Work order'}
      submitLabel={editing ? 'Apply changes' : 'Place order'}
      pending={pending}
      error={saving.error}
      errorText={saveError}
      onSubmit={submit}
      onClose={onClose}
      wrapSubmit={(button) => (
        <OnboardingTip step="LEAVING_LIQUIDITY_IN_ORDERBOOK" show={tip === 'LEAVING_LIQUIDITY_IN_ORDERBOOK'} placement="top" fullWidth inDrawer>
          {button}
        </OnboardingTip>
      )}
    >
      <Box>
        <Typography variant="subtitle1" sx={{ fontWeight: 700 }} title={instrument.name}>
          {truncateName(instrument.name)}
        </Typography>
        <Stack direction="row" spacing={1} sx={{ alignItems: 'center', mt: 0.5 }}>
          {direction && <Chip size="small" color={direction === 'BUY' ? 'success' : 'error'} label={direction === 'BUY' ? 'Buy' : 'Sell'} />}
          <Typography variant="body2" color="text.secondary" data-testid="available">
            Available {number.format(available)} · Min block {number.format(instrument.min_quantity)} · Band{' '}
            {formatPrice(instrument.min_tick_price, instrument.tick_size)} – {formatPrice(instrument.max_tick_price, instrument.tick_size)}
          </Typography>
        </Stack>
      </Box>
      {!editing && parents.length > 1 && (
        <FormTextField control={control} name="parent_order_id" label="Parent order" select deps={['quantity']}>
          {parents.map((p) => (
            <MenuItem key={p.parent_order_id} value={p.parent_order_id}>
              {p.direction === 'BUY' ? 'Buy' : 'Sell'} {number.format(p.quantity)} ({number.format(p.quantities.tradable)} remaining)
            </MenuItem>
          ))}
        </FormTextField>
      )}
      <PriceStepper control={control} tick={tick} serverError={serverFieldError(saving.error, 'limit_price')} onStep={step} />
      <FormTextField
        control={control}
        name="quantity"
        label="Quantity"
        helperText=" "
        serverError={serverFieldError(saving.error, 'quantity')}
        slotProps={{ htmlInput: { inputMode: 'numeric' } }}
      />
      <OnboardingTip step="FIRST_ICEBERG_ORDER" show={tip === 'FIRST_ICEBERG_ORDER'} placement="left" inDrawer>
        <FormSwitch control={control} name="iceberg" label="Iceberg (show only the minimum block)" />
      </OnboardingTip>
      <Controller
        control={control}
        name="residual"
        render={({ field }) => (
          <FormControl>
            <FormLabel id="residual-label">Residual</FormLabel>
            <RadioGroup row aria-labelledby="residual-label" name={field.name} value={field.value ? 'yes' : 'no'} onChange={(e) => field.onChange(e.target.value === 'yes')}>
              <FormControlLabel value="yes" control={<Radio />} label="Yes" />
              <FormControlLabel value="no" control={<Radio />} label="No" />
            </RadioGroup>
          </FormControl>
        )}
      />
      <Controller
        control={control}
        name="broker_id"
        render={({ field }) => (
          <TextField
            select
            label="Broker"
            name={field.name}
            value={brokerId}
            inputRef={field.ref}
            onBlur={field.onBlur}
            onChange={(e) => field.onChange(e.target.value)}
            disabled={editing}
            error={brokerError !== undefined || (!editing && eligible.length === 0)}
            helperText={brokerError ?? (eligible.length === 0 ? 'Your company has no broker yet; ask your administrator.' : ' ')}
            fullWidth
          >
            {eligible.map((b) => (
              <MenuItem key={b.company_id} value={b.company_id}>
                {b.name}
              </MenuItem>
            ))}
          </TextField>
        )}
      />
    </FormDrawer>
  );
}
