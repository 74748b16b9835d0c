import { OutboxPanel } from '@/features/admin-outbox/components/outbox-panel';
import { isAdmin } from '@/lib/permissions';
import { Guard } from '../admin-guard';

export default function AdminOutboxRoute() {
  return (
    <Guard allow={isAdmin}>
      <OutboxPanel />
    </Guard>
  );
}
