import { type ReactNode, useEffect, useMemo } from 'react';
import { Controller, useForm, useWatch, type Control } from 'react-hook-form';
import { zodResolver } from '@hookform/resolvers/zod';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Chip from '@mui/material/Chip';
import FormControl from '@mui/material/FormControl';
import FormControlLabel from '@mui/material/FormControlLabel';
import FormLabel from '@mui/material/FormLabel';
import IconButton from '@mui/material/IconButton';
import InputAdornment from '@mui/material/InputAdornment';
import MenuItem from '@mui/material/MenuItem';
import Radio from '@mui/material/Radio';
import RadioGroup from '@mui/material/RadioGroup';
import Skeleton from '@mui/material/Skeleton';
import Stack from '@mui/material/Stack';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
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
import { useLiveInstrument } from '@/lib/api/get-instrument';
import type { components } from '@/lib/api/schema';
import { formatPrice, truncateName } from '@/lib/trading-format';
import { useDebounced } from '@/lib/use-debounced';
import { useCreateOrder } from '../api/create-order';
import { useEditOrder } from '../api/edit-order';
import { type TakeBody, useDryRun, useTake } from '../api/take';
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
  takeDefaults,
  takeRequestBody,
  type OrderForm as OrderFormValues,
} from '../lib/order-form';

type ParentOrder = components['schemas']['ParentOrderDto'];

export type OrderDrawerTarget =
  | { kind: 'work'; instrument: Instrument; parents: ParentOrder[]; price: Decimal }
  /** Take the other side's liquidity at a price: `quantity` is what the row shows. */
  | { kind: 'take'; instrument: Instrument; parents: ParentOrder[]; price: Decimal; quantity: number }
  | { kind: 'edit'; instrument: Instrument; parent: ParentOrder; order: Order };

/** Spec section 8: a take that matches nothing. */
export const NOTHING_MATCHED = 'This trade could not be matched due to your trade criteria';
/** Spec section 5: the dry run follows the form 700 ms after its last change. */
export const DRY_RUN_DEBOUNCE_MS = 700;

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
  return target && <OrderForm key={target.kind === 'edit' ? target.order.order_id : `${target.kind}-${target.instrument.instrument_id}-${target.price.units}-${target.price.scale}`} target={target} onClose={onClose} />;
}

function OrderForm({ target, onClose }: { target: OrderDrawerTarget; onClose: () => void }) {
  const { showToast } = useToast();
  const user = useCurrentUser();
  const company = useCompany(user.company_id);
  const create = useCreateOrder();
  const edit = useEditOrder();
  // The band follows the book's frames while the drawer is open, so the form checks the
  // price against the band of now (issue 28), as the server will.
  const live = useLiveInstrument(target.instrument.instrument_id);
  const instrument = live.data ?? target.instrument;
  const tick = dec(instrument.tick_size);
  const places = decimalsOf(tick);
  const editing = target.kind === 'edit';
  const taking = target.kind === 'take';
  const take = useTake();
  const original = target.kind === 'edit' ? target.order : null;
  // The target is fixed for the form's life (the drawer is keyed on it); the schema changes with the band.
  const context = useMemo(() => ({ instrument, parents: target.kind === 'edit' ? [target.parent] : target.parents, original }), [target, instrument, original]);
  const schema = useMemo(() => orderFormSchema(context), [context]);
  const form = useForm<OrderFormValues>({
    resolver: zodResolver(schema),
    mode: 'onChange',
    defaultValues: target.kind === 'edit' ? orderFormDefaults(context, '') : target.kind === 'work' ? orderFormDefaults(context, toFixed(target.price, places)) : takeDefaults(context, toFixed(target.price, places), target.quantity),
  });
  const { control, trigger } = form;
  // Spec section 5: the price and quantity messages show from the opening (the row or the
  // order may break the rules), and again whenever the band moves.
  useEffect(() => {
    void trigger();
  }, [trigger, instrument.min_tick_price, instrument.max_tick_price, instrument.tick_size]);

  const { parents } = context;
  const parentId = useWatch({ control, name: 'parent_order_id' });
  const brokerChoice = useWatch({ control, name: 'broker_id' });
  const parent = chosenParent(parents, parentId);
  const available = availableQuantity(parent, original);
  const eligible = parent?.eligible_brokers ?? [];
  const brokerId = effectiveBroker(brokerChoice, parent, company.data?.default_broker?.company_id);
  const saving = editing ? edit : taking ? take : create;
  const pending = create.isPending || edit.isPending || take.isPending;
  const tip = useNextTip(editing || taking ? [] : ['LEAVING_LIQUIDITY_IN_ORDERBOOK', 'FIRST_ICEBERG_ORDER']);
  const values = useWatch({ control });
  // The dry run follows the valid form, 700 ms after its last change (compared as text, so
  // a re-render with the same values does not restart the wait).
  const takeJson = taking && form.formState.isValid && parent ? JSON.stringify(takeRequestBody(values as OrderFormValues, parent, brokerId)) : null;
  const debouncedJson = useDebounced(takeJson, DRY_RUN_DEBOUNCE_MS);
  const settled = takeJson !== null && takeJson === debouncedJson;
  const dryRunBody = useMemo(() => (settled && debouncedJson ? (JSON.parse(debouncedJson) as TakeBody) : null), [settled, debouncedJson]);
  const dryRun = useDryRun(dryRunBody);

  /** Works the form's quantity at its price: what 'Leave passive' does when nothing matches. */
  const workPassive = (f: OrderFormValues) => {
    if (!parent) return;
    create.mutate(createOrderBody({ ...f, iceberg: false }, instrument, parent, brokerId), {
      onSuccess: (o) => {
        showToast({ message: `Your order to ${o.direction === 'BUY' ? 'buy' : 'sell'} ${number.format(o.quantity)} at ${formatPrice(o.price, instrument.tick_size)} is working.` });
        onClose();
      },
    });
  };

  const step = (ticks: number) => {
    const current = parseDecimal(form.getValues('price'));
    if (current) form.setValue('price', toFixed(addTicks(current, tick, ticks), places), { shouldValidate: true, shouldDirty: true });
  };

  const submit = (values: OrderFormValues) => {
    if (!parent) return;
    if (taking) {
      take.mutate(takeRequestBody(values, parent, brokerId), {
        onSuccess: (sent) => {
          const quantity = sent.reduce((n, m) => n + m.quantity, 0);
          showToast({
            message: sent.length === 1 ? 'Match request sent' : `${sent.length} match requests sent`,
            description: `${number.format(quantity)} at ${sent.map((m) => formatPrice(m.price, instrument.tick_size)).join(', ')}: the counterparty has 5 minutes to answer.`,
          });
          onClose();
        },
        onError: (e) => {
          // Spec section 8: the liquidity went meanwhile; the toast's action works the quantity at that price.
          if (!(e instanceof ApiError && e.detail === NOTHING_MATCHED)) return;
          onClose();
          showToast({ message: NOTHING_MATCHED, type: 'info', keepOpen: true, action: { label: 'Leave passive', onClick: () => workPassive(values) } });
        },
      });
      return;
    }
    if (original) {
      const changed = orderChanges(values, original);
      if (Object.keys(changed).length === 0) return onClose();
      edit.mutate(
        { orderId: original.order_id, body: editOrderBody(values, original) },
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
      title={editing ? 'Edit order' : taking ? 'Take liquidity' : 'Work order'}
      submitLabel={editing ? 'Apply changes' : taking ? 'Send match request' : 'Place order'}
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
      {!taking && (
        <FormTextField
          control={control}
          name="min_execution"
          label="Minimum execution size"
          helperText="Optional: no fill below this size, except the last of the order"
          serverError={serverFieldError(saving.error, 'min_execution')}
          slotProps={{ htmlInput: { inputMode: 'numeric' } }}
        />
      )}
      {!taking && (
        <OnboardingTip step="FIRST_ICEBERG_ORDER" show={tip === 'FIRST_ICEBERG_ORDER'} placement="left" inDrawer>
          <FormSwitch control={control} name="iceberg" label="Iceberg (show only the minimum block)" />
        </OnboardingTip>
      )}
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
      {taking && (
        <DryRun
          ready={takeJson !== null}
          settled={settled}
          query={dryRun}
          tickSize={instrument.tick_size}
          leavePassive={
            <Button variant="outlined" onClick={() => workPassive(form.getValues())} disabled={pending}>
              Leave passive
            </Button>
          }
        />
      )}
    </FormDrawer>
  );
}

/** Spec section 3: what the take would hit, best price first; nothing of the other firm but its broker. */
type DryRunProps = { ready: boolean; settled: boolean; query: ReturnType<typeof useDryRun>; tickSize: number; leavePassive: ReactNode };

function DryRun({ ready, settled, query, tickSize, leavePassive }: DryRunProps) {
  const waiting = ready && (!settled || query.isFetching);
  return (
    <Box component="section" aria-label="Match preview" aria-busy={waiting}>
      <Typography variant="overline" color="text.secondary">
        Match preview
      </Typography>
      {!ready ? (
        <Typography variant="body2" color="text.secondary">
          Enter a valid price and quantity to see what you would match.
        </Typography>
      ) : waiting && !query.data ? (
        <Stack spacing={0.5}>
          <Skeleton height={28} />
          <Skeleton height={28} />
        </Stack>
      ) : query.isError ? (
        <Typography variant="body2" color="error">
          {saveError(query.error)}
        </Typography>
      ) : query.data && query.data.length === 0 ? (
        <Stack spacing={1.5} sx={{ alignItems: 'flex-start' }}>
          <Typography variant="body2" color="text.secondary" role="status">
            {NOTHING_MATCHED}
          </Typography>
          {leavePassive}
        </Stack>
      ) : (
        <Table size="small" aria-label="Orders you would match" sx={{ opacity: waiting ? 0.6 : 1 }}>
          <TableHead>
            <TableRow>
              <TableCell>Price</TableCell>
              <TableCell align="right">Quantity</TableCell>
              <TableCell>Broker</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {(query.data ?? []).map((b, n) => (
              <TableRow key={n}>
                <TableCell>{formatPrice(b.price, tickSize)}</TableCell>
                <TableCell align="right">
                  {number.format(b.quantity)}
                  {/* The preview shows an iceberg's visible block; the take may reach more. */}
                  {b.responding_order_iceberg && <Chip size="small" label="Iceberg: may fill more" variant="outlined" sx={{ ml: 1 }} />}
                </TableCell>
                <TableCell>{b.responding_broker_name}</TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      )}
    </Box>
  );
}
