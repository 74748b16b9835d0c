import Button from '@mui/material/Button';
import Stack from '@mui/material/Stack';
import Refresh from '@mui/icons-material/Refresh';
import { AdminPage } from '@/components/layout/admin-page';
import { useBilling } from '../api/get-billing';
import { BillingGrid } from './billing-grid';

/** Admin spec section 2: the Billing screen, one row per side of every trade. */
export function BillingPanel() {
  const billing = useBilling();
  const items = billing.data ?? [];
  const actions = (
    <Stack direction="row" sx={{ justifyContent: 'flex-end' }}>
      <Button variant="outlined" startIcon={<Refresh />} onClick={() => void billing.refetch()} disabled={billing.isFetching}>
        Refresh
      </Button>
    </Stack>
  );
  return (
    <AdminPage title="Billing" filters={actions} query={billing} empty={items.length === 0} emptyText="No trade to bill yet.">
      <BillingGrid items={items} loading={billing.isFetching} />
    </AdminPage>
  );
}
