import { useState, type FormEvent } from 'react';
import Alert from '@mui/material/Alert';
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
import Stack from '@mui/material/Stack';
import Switch from '@mui/material/Switch';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import Add from '@mui/icons-material/Add';
import Remove from '@mui/icons-material/Remove';
import { DrawerHeader, SideDrawer } from '@/components/ui/side-drawer';
import { useToast } from '@/components/ui/toast';
import { ApiError } from '@/lib/api-errors';
import { addTicks, dec, decimalsOf, parseDecimal, toFixed, type Decimal } from '@/lib/decimal';
import { useCurrentUser } from '@/lib/api/get-me';
import { OnboardingTip, useNextTip } from '@/components/ui/onboarding-tip';
import type { Instrument, Order } from '@/lib/api/dto';
import type { components } from '@/lib/api/schema';
import { parseQuantity, priceError, priceValue, quantityError } from '@/lib/order-validation';
import { formatPrice, truncateName } from '@/lib/trading-format';
import { useCreateOrder } from '../api/create-order';
import { useEditOrder } from '../api/edit-order';
import { useCompany } from '../api/get-company';

type ParentOrder = components['schemas']['ParentOrderDto'];

export type OrderDrawerTarget =
  | { kind: 'work'; instrument: Instrument; parents: ParentOrder[]; price: Decimal }
  | { kind: 'edit'; instrument: Instrument; parent: ParentOrder; order: Order };

const number = new Intl.NumberFormat('en-GB');

/** The success message of spec section 8 for what an edit changed. */
export function editMessage(changed: { quantity?: number; price?: string; residual?: boolean; iceberg?: boolean }): string {
  const keys = Object.keys(changed) as (keyof typeof changed)[];
  if (keys.length !== 1) return 'Changes applied to current order.';
  switch (keys[0]) {
    case 'quantity':
      return `Order quantity updated to ${number.format(changed.quantity ?? 0)}.`;
    case 'price':
      return `Limit price updated to ${changed.price}.`;
    case 'residual':
      return 'Residuals setting updated.';
    default:
      return 'Visibility preferences updated.';
  }
}

function PriceStepper({ value, onChange, tick, error }: { value: string; onChange: (v: string) => void; tick: Decimal; error: string | null }) {
  const places = decimalsOf(tick);
  const step = (n: number) => {
    const current = parseDecimal(value);
    if (current) onChange(toFixed(addTicks(current, tick, n), places));
  };
  return (
    <TextField
      label="Limit price"
      value={value}
      onChange={(e) => onChange(e.target.value)}
      error={error !== null}
      helperText={error ?? `Tick ${toFixed(tick, places)}`}
      slotProps={{
        htmlInput: { inputMode: 'decimal', 'aria-label': 'Limit price' },
        input: {
          startAdornment: (
            <InputAdornment position="start">
              <IconButton aria-label="Decrease price by one tick" edge="start" onClick={() => step(-1)}>
                <Remove />
              </IconButton>
            </InputAdornment>
          ),
          endAdornment: (
            <InputAdornment position="end">
              <IconButton aria-label="Increase price by one tick" edge="end" onClick={() => step(1)}>
                <Add />
              </IconButton>
            </InputAdornment>
          ),
        },
      }}
      fullWidth
    />
  );
}

type Props = { target: OrderDrawerTarget | null; onClose: () => void };

/** The right-hand drawer to work the remaining quantity at a price, or to edit a working child order. */
export function OrderDrawer({ target, onClose }: Props) {
  return (
    <SideDrawer open={target !== null} onClose={onClose}>
      {/* Keyed so each opening starts from the clicked row or the order's values. */}
      {target && <OrderForm key={target.kind === 'edit' ? target.order.order_id : `${target.instrument.instrument_id}-${target.price.units}-${target.price.scale}`} target={target} onClose={onClose} />}
    </SideDrawer>
  );
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
  const parents = target.kind === 'work' ? target.parents : [target.parent];

  const [parentId, setParentId] = useState(parents[0]?.parent_order_id ?? '');
  const parent = parents.find((p) => p.parent_order_id === parentId) ?? parents[0];
  const original = target.kind === 'edit' ? target.order : null;
  const [price, setPrice] = useState(toFixed(target.kind === 'edit' ? dec(target.order.price) : target.price, places));
  const [quantity, setQuantity] = useState(String(original ? original.quantity : (parent?.quantities.tradable ?? '')));
  const [iceberg, setIceberg] = useState(original?.iceberg ?? false);
  const [residual, setResidual] = useState(original?.residual ?? true);
  const defaultBroker = company.data?.default_broker?.company_id;
  const eligible = parent?.eligible_brokers ?? [];
  const [brokerChoice, setBrokerChoice] = useState<string | null>(original?.broker_id ?? null);
  const brokerId = brokerChoice ?? (eligible.some((b) => b.company_id === defaultBroker) ? defaultBroker : eligible[0]?.company_id) ?? '';
  const [serverError, setServerError] = useState<ApiError | null>(null);

  const available = (parent?.quantities.tradable ?? 0) + (original?.quantity ?? 0);
  const qtyError = quantityError(quantity, { min: instrument.min_quantity, available });
  const pxError = priceError(price, { tick: instrument.tick_size, min: instrument.min_tick_price, max: instrument.max_tick_price });
  const fieldError = (field: string) => serverError?.fieldErrors.find((e) => e.field === field)?.message ?? null;
  const pending = create.isPending || edit.isPending;
  const invalid = !parent || quantity.trim() === '' || price.trim() === '' || qtyError !== null || pxError !== null || !brokerId;
  const tip = useNextTip(editing ? [] : ['LEAVING_LIQUIDITY_IN_ORDERBOOK', 'FIRST_ICEBERG_ORDER']);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (invalid || !parent) return;
    setServerError(null);
    const q = parseQuantity(quantity) ?? 0;
    const p = parseDecimal(price);
    const onError = (err: unknown) => setServerError(err instanceof ApiError ? err : new ApiError(0, undefined));
    if (original) {
      const changed: Parameters<typeof editMessage>[0] = {};
      if (q !== original.quantity) changed.quantity = q;
      if (price !== toFixed(dec(original.price), places)) changed.price = price;
      if (residual !== original.residual) changed.residual = residual;
      if (iceberg !== original.iceberg) changed.iceberg = iceberg;
      if (Object.keys(changed).length === 0) return onClose();
      edit.mutate(
        { orderId: original.order_id, body: { quantity: q, limit_price: priceValue(p), residual, iceberg } },
        {
          onSuccess: () => {
            showToast({ message: editMessage(changed) });
            onClose();
          },
          onError,
        },
      );
    } else {
      create.mutate(
        {
          parent_order_id: parent.parent_order_id,
          instrument_id: instrument.instrument_id,
          direction: parent.direction,
          quantity: q,
          limit_price: priceValue(p),
          residual,
          iceberg,
          broker_id: brokerId,
        },
        {
          onSuccess: (o) => {
            showToast({ message: `Your order to ${o.direction === 'BUY' ? 'buy' : 'sell'} ${number.format(o.quantity)} at ${formatPrice(o.price, instrument.tick_size)} is working.` });
            onClose();
          },
          onError,
        },
      );
    }
  };

  const direction = parent?.direction;
  return (
    <Box component="form" onSubmit={submit} noValidate sx={{ display: 'flex', flexDirection: 'column', height: '100%' }}>
      <DrawerHeader title={editing ? 'Edit order' : 'Work order'} onClose={onClose} />
      <Stack spacing={2.5} sx={{ p: 3, flexGrow: 1, overflowY: 'auto' }}>
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
          <TextField select label="Parent order" value={parentId} onChange={(e) => setParentId(e.target.value)} fullWidth>
            {parents.map((p) => (
              <MenuItem key={p.parent_order_id} value={p.parent_order_id}>
                {p.direction === 'BUY' ? 'Buy' : 'Sell'} {number.format(p.quantity)} ({number.format(p.quantities.tradable)} remaining)
              </MenuItem>
            ))}
          </TextField>
        )}
        <PriceStepper value={price} onChange={setPrice} tick={tick} error={pxError ?? fieldError('limit_price')} />
        <TextField
          label="Quantity"
          value={quantity}
          onChange={(e) => setQuantity(e.target.value)}
          error={(qtyError ?? fieldError('quantity')) !== null}
          helperText={qtyError ?? fieldError('quantity') ?? ' '}
          slotProps={{ htmlInput: { inputMode: 'numeric' } }}
          fullWidth
        />
        <OnboardingTip step="FIRST_ICEBERG_ORDER" show={tip === 'FIRST_ICEBERG_ORDER'} placement="left" inDrawer>
          <FormControlLabel control={<Switch checked={iceberg} onChange={(e) => setIceberg(e.target.checked)} />} label="Iceberg (show only the minimum block)" />
        </OnboardingTip>
        <FormControl>
          <FormLabel id="residual-label">Residual</FormLabel>
          <RadioGroup row aria-labelledby="residual-label" value={residual ? 'yes' : 'no'} onChange={(e) => setResidual(e.target.value === 'yes')}>
            <FormControlLabel value="yes" control={<Radio />} label="Yes" />
            <FormControlLabel value="no" control={<Radio />} label="No" />
          </RadioGroup>
        </FormControl>
        <TextField
          select
          label="Broker"
          value={brokerId}
          onChange={(e) => setBrokerChoice(e.target.value)}
          disabled={editing}
          error={fieldError('broker_id') !== null || (!editing && eligible.length === 0)}
          helperText={fieldError('broker_id') ?? (eligible.length === 0 ? 'Your company has no broker yet; ask your administrator.' : ' ')}
          fullWidth
        >
          {eligible.map((b) => (
            <MenuItem key={b.company_id} value={b.company_id}>
              {b.name}
            </MenuItem>
          ))}
        </TextField>
        {serverError && (
          <Alert severity="error">
            {serverError.detail ?? `[${serverError.status}]: ${typeof serverError.data === 'string' ? serverError.data : JSON.stringify(serverError.data ?? 'The order could not be saved.')}`}
          </Alert>
        )}
      </Stack>
      <Stack direction="row" spacing={2} sx={{ p: 3, borderTop: 1, borderColor: 'divider' }}>
        <Button onClick={onClose} fullWidth>
          Cancel
        </Button>
        <OnboardingTip step="LEAVING_LIQUIDITY_IN_ORDERBOOK" show={tip === 'LEAVING_LIQUIDITY_IN_ORDERBOOK'} placement="top" fullWidth inDrawer>
          <Button type="submit" variant="contained" fullWidth disabled={invalid || pending}>
            {editing ? 'Apply changes' : 'Place order'}
          </Button>
        </OnboardingTip>
      </Stack>
    </Box>
  );
}
