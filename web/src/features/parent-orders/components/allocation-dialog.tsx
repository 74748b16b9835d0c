import { useEffect, useMemo, useState } from 'react';
import { useFieldArray, useForm, useWatch } from 'react-hook-form';
import { zodResolver } from '@hookform/resolvers/zod';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import CircularProgress from '@mui/material/CircularProgress';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogContentText from '@mui/material/DialogContentText';
import DialogTitle from '@mui/material/DialogTitle';
import FormHelperText from '@mui/material/FormHelperText';
import IconButton from '@mui/material/IconButton';
import MenuItem from '@mui/material/MenuItem';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import Add from '@mui/icons-material/Add';
import DeleteOutlined from '@mui/icons-material/DeleteOutlined';
import { serverErrorText, serverFieldError } from '@/components/form/form-drawer';
import { FormTextField } from '@/components/form/form-fields';
import { useToast } from '@/components/ui/toast';
import { ApiError } from '@/lib/api-errors';
import type { Account } from '@/lib/api/company-accounts';
import { useCompanyAccounts } from '@/lib/api/company-accounts';
import type { CompanyRef, Instrument, Order } from '@/lib/api/dto';
import { useCurrentUser } from '@/lib/api/get-me';
import { formatPrice } from '@/lib/trading-format';
import { useAllocation, type Allocation } from '../api/get-allocation';
import { useSaveAllocation } from '../api/save-allocation';
import {
  allocatedTotal,
  allocationBody,
  allocationDefaults,
  allocationErrors,
  allocationFormSchema,
  brokerAnswer,
  MAX_LINES,
  type AllocationContext,
  type AllocationForm,
} from '../lib/allocation-form';

const number = new Intl.NumberFormat('en-GB');

type Props = {
  order: Order;
  instrument: Instrument;
  /** The firm's brokers (the parent order's eligible ones): the give-up choices are the others than the order's. */
  brokers: readonly CompanyRef[];
  onClose: () => void;
};

/**
 * 'Allocate trade' (ADR 0045): the trader splits the fill of their matched child order
 * across the firm's open accounts and may give it up to another of its brokers. Each save
 * is a new version, sent to the executing broker, whose answer shows here.
 */
export function AllocationDialog({ order, instrument, brokers, onClose }: Props) {
  const user = useCurrentUser();
  // As pushed: the broker's answer reaches it while the dialog is open.
  const allocation = useAllocation(order.order_id);
  const accounts = useCompanyAccounts(user.company_id);
  const failed = allocation.isError ? allocation.error : accounts.isError ? accounts.error : null;
  const ready = allocation.data !== undefined && accounts.data !== undefined;
  // Esc and a click beside it close it only while nothing was changed: a changed form
  // closes through Cancel, never by a stray key (as the form drawers).
  const [dirty, setDirty] = useState(false);
  return (
    <Dialog
      open
      onClose={() => !dirty && onClose()}
      aria-labelledby="allocation-title"
      fullWidth
      // Wider than 'sm': an account's code and name read whole in its field.
      slotProps={{ paper: { sx: { maxWidth: 720 } } }}
    >
      <DialogTitle id="allocation-title">Allocate trade</DialogTitle>
      {failed ? (
        <>
          <DialogContent>
            <Alert severity="error">{serverErrorText(failed)}</Alert>
          </DialogContent>
          <DialogActions>
            <Button onClick={onClose}>Cancel</Button>
          </DialogActions>
        </>
      ) : !ready ? (
        <DialogContent sx={{ display: 'flex', justifyContent: 'center', py: 4 }}>
          <CircularProgress aria-label="Loading the allocation" />
        </DialogContent>
      ) : (
        <AllocationFormView
          order={order}
          instrument={instrument}
          brokers={brokers}
          allocation={allocation.data}
          accounts={accounts.data}
          onDirty={setDirty}
          onClose={onClose}
        />
      )}
    </Dialog>
  );
}

type FormProps = Props & { allocation: Allocation | null; accounts: Account[]; onDirty: (dirty: boolean) => void };

function AllocationFormView({ order, instrument, brokers, allocation, accounts, onDirty, onClose }: FormProps) {
  const save = useSaveAllocation();
  const { showToast } = useToast();
  const context: AllocationContext = useMemo(
    () => ({ quantity: order.quantity, brokerId: order.broker_id, accounts, brokers }),
    [order.quantity, order.broker_id, accounts, brokers],
  );
  const schema = useMemo(() => allocationFormSchema(context), [context]);
  const form = useForm<AllocationForm>({ resolver: zodResolver(schema), mode: 'all', defaultValues: allocationDefaults(allocation, context) });
  const { control, formState, trigger } = form;
  useEffect(() => onDirty(formState.isDirty), [formState.isDirty, onDirty]);
  const lines = useFieldArray({ control, name: 'lines' });
  const values = useWatch({ control }) as AllocationForm;
  const allocated = allocatedTotal({ lines: values.lines ?? [] });
  // The rules read the lines together (an account twice, the total): every change checks the
  // whole form, from the opening on (an allocation may name an account since closed).
  const json = JSON.stringify(values);
  useEffect(() => {
    void trigger();
  }, [trigger, json]);
  const executing = brokers.find((b) => b.company_id === order.broker_id)?.name ?? 'the executing broker';
  const giveUps = brokers.filter((b) => b.company_id !== order.broker_id);
  // An account the allocation names that has since been closed stays choosable, with the server's message.
  const closed = (allocation?.lines ?? []).filter((l) => !accounts.some((a) => a.account_id === l.account_id));
  const options = [...accounts.map((a) => ({ id: a.account_id, label: `${a.code} — ${a.name}` })), ...closed.map((l) => ({ id: l.account_id, label: `${l.code} — ${l.name} (closed)` }))];
  const serverError = (field: string) => serverFieldError(save.error, field);
  const linesError = allocationErrors(values, context).lines ?? serverError('lines');
  // The server's detail, unless its field errors say it under their fields (a 409 has none).
  const saveError = save.error && !(save.error instanceof ApiError && save.error.fieldErrors.length > 0) ? serverErrorText(save.error) : null;

  // Rows move when one is added or removed: a server message would then stand under another row.
  const reshape = (change: () => void) => {
    save.reset();
    change();
  };

  const submit = (f: AllocationForm) => {
    if (save.isPending) return;
    save.mutate(
      { orderId: order.order_id, body: allocationBody(f) },
      {
        onSuccess: (a) => {
          showToast({ message: 'Allocation saved.', description: `Version ${a.version}: ${brokerAnswer(a).toLowerCase()}.` });
          onClose();
        },
      },
    );
  };

  return (
    <Box component="form" noValidate onSubmit={form.handleSubmit(submit)} aria-label="Allocate trade">
      <DialogContent sx={{ pt: 0 }}>
        <Stack spacing={2}>
          <DialogContentText>
            {`${order.direction === 'BUY' ? 'Bought' : 'Sold'} ${number.format(order.quantity)} ${instrument.name} at ${formatPrice(order.price, instrument.tick_size)}, executed by ${executing}. Split it across your firm's accounts.`}
          </DialogContentText>
          {allocation && (
            <Alert
              severity={allocation.broker_ack === 'ACCEPTED' ? 'success' : allocation.broker_ack === 'REJECTED' ? 'error' : 'info'}
              data-testid="allocation-status"
            >
              {`Version ${allocation.version}: ${brokerAnswer(allocation)}`}
            </Alert>
          )}
          {accounts.length === 0 && closed.length === 0 && (
            <Alert severity="warning">Your firm has no open account yet: ask the venue to open one.</Alert>
          )}
          <Stack spacing={1.5} role="list" aria-label="Accounts">
            {lines.fields.map((field, n) => (
              <Box
                key={field.id}
                role="group"
                aria-label={`Account line ${n + 1}`}
                sx={{ display: 'grid', gridTemplateColumns: { xs: '1fr', sm: '1fr 140px auto' }, gap: 1.5, alignItems: 'start' }}
              >
                <FormTextField
                  control={control}
                  name={`lines.${n}.account_id`}
                  select
                  label="Account"
                  size="small"
                  serverError={serverError(`lines[${n}].account_id`)}
                >
                  {options.map((o) => (
                    <MenuItem key={o.id} value={o.id}>
                      {o.label}
                    </MenuItem>
                  ))}
                </FormTextField>
                <FormTextField
                  control={control}
                  name={`lines.${n}.quantity`}
                  label="Quantity"
                  size="small"
                  serverError={serverError(`lines[${n}].quantity`)}
                  slotProps={{ htmlInput: { inputMode: 'numeric', autoComplete: 'off' } }}
                />
                <IconButton
                  aria-label={`Remove account line ${n + 1}`}
                  onClick={() => reshape(() => lines.remove(n))}
                  disabled={lines.fields.length === 1}
                  sx={{ mt: 0.25 }}
                >
                  <DeleteOutlined fontSize="small" />
                </IconButton>
              </Box>
            ))}
          </Stack>
          <Box>
            <Stack direction="row" spacing={2} sx={{ alignItems: 'center', justifyContent: 'space-between' }}>
              <Button
                size="small"
                startIcon={<Add />}
                onClick={() => reshape(() => lines.append({ account_id: '', quantity: String(Math.max(order.quantity - allocated, 0) || '') }))}
                disabled={lines.fields.length >= Math.min(MAX_LINES, options.length)}
              >
                Add account
              </Button>
              <Typography
                variant="body2"
                role="status"
                sx={{ fontVariantNumeric: 'tabular-nums', fontWeight: 600, color: allocated === order.quantity ? 'success.main' : 'text.secondary' }}
              >
                {`Allocated ${number.format(allocated)} of ${number.format(order.quantity)}`}
              </Typography>
            </Stack>
            {linesError && <FormHelperText error>{linesError}</FormHelperText>}
          </Box>
          <FormTextField
            control={control}
            name="give_up_broker_id"
            select
            label="Give-up broker"
            size="small"
            disabled={giveUps.length === 0 && !form.getValues('give_up_broker_id')}
            serverError={serverError('give_up_broker_id')}
            helperText={giveUps.length === 0 ? 'Your firm has no other broker' : `The broker that clears the trade instead of ${executing}`}
            slotProps={{ select: { displayEmpty: true }, inputLabel: { shrink: true } }}
          >
            <MenuItem value="">None</MenuItem>
            {giveUps.map((b) => (
              <MenuItem key={b.company_id} value={b.company_id}>
                {b.name}
              </MenuItem>
            ))}
          </FormTextField>
          {saveError && (
            <Alert severity="error" role="alert">
              {saveError}
            </Alert>
          )}
        </Stack>
      </DialogContent>
      <DialogActions sx={{ px: 3, pb: 2 }}>
        <Button onClick={onClose}>Cancel</Button>
        <Button type="submit" variant="contained" disabled={!formState.isValid || save.isPending}>
          Save
        </Button>
      </DialogActions>
    </Box>
  );
}
