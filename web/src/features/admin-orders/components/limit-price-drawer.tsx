import { useForm } from 'react-hook-form';
import { zodResolver } from '@hookform/resolvers/zod';
import Box from '@mui/material/Box';
import Typography from '@mui/material/Typography';
import { FormDrawer, serverFieldError } from '@/components/form/form-drawer';
import { FormTextField } from '@/components/form/form-fields';
import { useToast } from '@/components/ui/toast';
import type { Instrument } from '@/lib/api/dto';
import { dec, toGrouped, toPlain } from '@/lib/decimal';
import { formatDateTime } from '@/lib/format-date';
import { useCorrectOrderPrice } from '../api/correct-order-price';
import type { AdminOrder } from '../api/get-admin-orders';
import { formatOrderPrice, shortOrderId } from '../lib/order-format';
import { limitPriceFormSchema, limitPriceRequest, limitPriceText, type LimitPriceForm } from '../lib/limit-price-form';

/** Admin spec sections 2 and 5: the admin corrects a working order's limit price, on the instrument's tick. */
export function LimitPriceDrawer({ order, instrument, onClose }: { order: AdminOrder; instrument: Instrument; onClose: () => void }) {
  const form = useForm<LimitPriceForm>({
    // Only a working order is corrected, and it always has a price.
    resolver: zodResolver(limitPriceFormSchema({ tickSize: instrument.tick_size, price: order.price ?? 0 })),
    mode: 'all',
    defaultValues: { limit_price: limitPriceText(order.price ?? 0, instrument.tick_size) },
  });
  const correct = useCorrectOrderPrice();
  const { showToast } = useToast();
  const tick = toPlain(dec(instrument.tick_size));

  const submit = (v: LimitPriceForm) =>
    correct.mutate(
      { orderId: order.order_id, body: limitPriceRequest(v) },
      {
        onSuccess: (o) => {
          showToast({ message: `Limit price of order ${shortOrderId(o.order_id)} set to ${formatOrderPrice(o.price, o.tick_size)}.` });
          onClose();
        },
      },
    );

  const facts: [string, string][] = [
    ['Order', order.order_id],
    ['Created by', `${order.created_by.email} (${order.created_by.company_name})`],
    ['Instrument', order.instrument.name],
    ['Side and quantity', `${order.direction === 'BUY' ? 'Buy' : 'Sell'} ${toGrouped(dec(order.quantity), 0)}`],
    ['Current price', formatOrderPrice(order.price, instrument.tick_size)],
    ['Tick size', tick],
    ['Updated', formatDateTime(order.updated_at)],
  ];

  return (
    <FormDrawer
      form={form}
      title={`Edit order ${shortOrderId(order.order_id)}`}
      submitLabel="Save limit price"
      pending={correct.isPending}
      error={correct.error}
      onSubmit={submit}
      onClose={onClose}
    >
      <Box component="dl" sx={{ display: 'grid', gridTemplateColumns: 'max-content 1fr', columnGap: 3, rowGap: 0.75, m: 0 }}>
        {facts.map(([term, value]) => (
          <Box key={term} sx={{ display: 'contents' }}>
            <Typography component="dt" variant="body2" color="text.secondary">
              {term}
            </Typography>
            <Typography component="dd" variant="body2" sx={{ m: 0, overflowWrap: 'anywhere', fontVariantNumeric: 'tabular-nums' }}>
              {value}
            </Typography>
          </Box>
        ))}
      </Box>
      <FormTextField
        control={form.control}
        name="limit_price"
        label="Limit price"
        required
        autoFocus
        helperText={`A multiple of the tick size, ${tick}`}
        serverError={serverFieldError(correct.error, 'limit_price')}
        slotProps={{ htmlInput: { inputMode: 'decimal' } }}
      />
    </FormDrawer>
  );
}
