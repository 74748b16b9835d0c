import { useMemo } from 'react';
import { Controller, useForm } from 'react-hook-form';
import { zodResolver } from '@hookform/resolvers/zod';
import Autocomplete from '@mui/material/Autocomplete';
import Chip from '@mui/material/Chip';
import FormControl from '@mui/material/FormControl';
import FormLabel from '@mui/material/FormLabel';
import TextField from '@mui/material/TextField';
import ToggleButton from '@mui/material/ToggleButton';
import ToggleButtonGroup from '@mui/material/ToggleButtonGroup';
import Typography from '@mui/material/Typography';
import { FormDrawer, serverFieldError } from '@/components/form/form-drawer';
import { FormSwitch, FormTextField } from '@/components/form/form-fields';
import { useToast } from '@/components/ui/toast';
import { RFQ_SENT_TOAST_MS } from '@/config/constants';
import { truncateName } from '@/lib/trading-format';
import { useCreateRfq } from '../api/create-rfq';
import { useLiquidityProviders } from '../api/get-liquidity-providers';
import { rfqError } from '../lib/errors';
import { emptyRfqForm, rfqBody, rfqFormSchema, type RfqForm } from '../lib/rfq-form';

/** The parent order an RFQ is sent from, with what the form needs of its instrument. */
export type RfqParent = {
  parent_order_id: string;
  direction: 'BUY' | 'SELL';
  tradable: number;
  instrumentName: string;
  minQuantity: number;
};

type Props = { parent: RfqParent | null; onClose: () => void };

/** The Create RFQ drawer of spec section 2. */
export function CreateRfqDrawer({ parent, onClose }: Props) {
  return parent ? <CreateRfqForm parent={parent} onClose={onClose} /> : null;
}

function CreateRfqForm({ parent, onClose }: { parent: RfqParent; onClose: () => void }) {
  const schema = useMemo(() => rfqFormSchema({ min: parent.minQuantity, tradable: parent.tradable }), [parent]);
  const form = useForm<RfqForm>({ resolver: zodResolver(schema), mode: 'onChange', defaultValues: emptyRfqForm });
  const { control } = form;
  const providers = useLiquidityProviders(true);
  const create = useCreateRfq();
  const { showToast } = useToast();

  const submit = (values: RfqForm) =>
    create.mutate(rfqBody(parent.parent_order_id, values), {
      onSuccess: () => {
        showToast({ message: 'Your RFQ has been sent', description: 'Waiting for quotes from liquidity providers', durationMs: RFQ_SENT_TOAST_MS });
        onClose();
      },
    });

  return (
    <FormDrawer
      form={form}
      title="Create RFQ"
      submitLabel="Send RFQ"
      pending={create.isPending}
      error={create.error}
      errorText={rfqError}
      onSubmit={submit}
      onClose={onClose}
    >
      <Typography variant="body2" color="text.secondary">
        {parent.direction === 'BUY' ? 'Buy' : 'Sell'} {truncateName(parent.instrumentName)} · {parent.tradable.toLocaleString('en-GB')} available
      </Typography>
      <Controller
        control={control}
        name="twoWay"
        render={({ field }) => (
          <FormControl>
            <FormLabel id="rfq-way-label" sx={{ mb: 1 }}>
              Quote
            </FormLabel>
            <ToggleButtonGroup exclusive fullWidth aria-labelledby="rfq-way-label" value={field.value ? 'two' : 'one'} onChange={(_, v: string | null) => v && field.onChange(v === 'two')}>
              <ToggleButton value="one">One way</ToggleButton>
              <ToggleButton value="two">Two way</ToggleButton>
            </ToggleButtonGroup>
          </FormControl>
        )}
      />
      <FormTextField
        control={control}
        name="minutes"
        label="Deadline (minutes)"
        helperText="From 1 to 15 minutes"
        serverError={serverFieldError(create.error, 'expires_in_seconds')}
        slotProps={{ htmlInput: { inputMode: 'numeric' } }}
      />
      <FormTextField
        control={control}
        name="quantity"
        label="Quantity"
        helperText={`Minimum block size ${parent.minQuantity}`}
        serverError={serverFieldError(create.error, 'quantity')}
        slotProps={{ htmlInput: { inputMode: 'numeric' } }}
      />
      <Controller
        control={control}
        name="providers"
        render={({ field, fieldState }) => {
          const options = providers.data ?? [];
          const message = fieldState.error?.message ?? serverFieldError(create.error, 'liquidity_provider_ids');
          return (
            <Autocomplete
              multiple
              options={options.map((o) => o.company_id)}
              value={field.value}
              loading={providers.isPending}
              onChange={(_, v) => field.onChange(v)}
              onBlur={field.onBlur}
              getOptionLabel={(id) => options.find((o) => o.company_id === id)?.name ?? id}
              noOptionsText={providers.isPending ? 'Loading…' : 'No liquidity provider'}
              renderValue={(ids, getItemProps) =>
                ids.map((id, index) => {
                  const { key, ...props } = getItemProps({ index });
                  return <Chip key={key} size="small" label={options.find((o) => o.company_id === id)?.name ?? id} {...props} />;
                })
              }
              renderInput={(params) => <TextField {...params} label="Liquidity providers" error={Boolean(message)} helperText={message} />}
            />
          );
        }}
      />
      <FormSwitch control={control} name="anonymous" label="Hide identity" />
    </FormDrawer>
  );
}
