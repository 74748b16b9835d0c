import { BillingPanel } from '@/features/admin-billing/components/billing-panel';
import { canReadBilling } from '@/lib/permissions';
import { Guard } from '../admin-guard';

/** DESIGN section 4: Billing is for the admin and for sales (read). */
export default function AdminBillingRoute() {
  return (
    <Guard allow={canReadBilling}>
      <BillingPanel />
    </Guard>
  );
}
