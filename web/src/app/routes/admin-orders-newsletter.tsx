import { NewslettersPanel } from '@/features/admin-newsletters/components/newsletters-panel';
import { canUseNewsletters } from '@/lib/permissions';
import { Guard } from '../admin-guard';

/** Admin spec section 6: the Orders newsletter, for upstairs-admin and upstairs-sales. */
export default function AdminOrdersNewsletterRoute() {
  return (
    <Guard allow={canUseNewsletters}>
      <NewslettersPanel />
    </Guard>
  );
}
