import { OrdersPanel } from '@/features/admin-orders/components/orders-panel';
import { useCurrentUser } from '@/lib/api/get-me';
import { isAdmin, isOrderAdmin } from '@/lib/permissions';
import { Guard } from '../admin-guard';

function Orders() {
  const user = useCurrentUser();
  return <OrdersPanel canEdit={isAdmin(user)} />;
}

/** Admin spec section 6: the Orders panel is for the admin or the order-admin permission (sales); only the admin edits. */
export default function AdminOrdersRoute() {
  return (
    <Guard allow={isOrderAdmin}>
      <Orders />
    </Guard>
  );
}
