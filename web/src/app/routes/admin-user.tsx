import { UsersPanel } from '@/features/admin/components/users-panel';
import { isAdmin } from '@/lib/permissions';
import { Guard } from '../admin-guard';

export default function AdminUsersPanelRoute() {
  return (
    <Guard allow={isAdmin}>
      <UsersPanel />
    </Guard>
  );
}
