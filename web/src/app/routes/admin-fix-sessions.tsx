import { FixSessionsPanel } from '@/features/admin-fix-sessions/components/fix-sessions-panel';
import { isAdmin } from '@/lib/permissions';
import { Guard } from '../admin-guard';

export default function AdminFixSessionsRoute() {
  return (
    <Guard allow={isAdmin}>
      <FixSessionsPanel />
    </Guard>
  );
}
