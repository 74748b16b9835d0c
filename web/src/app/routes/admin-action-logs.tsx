import { ActionLogsPanel } from '@/features/admin-action-logs/components/action-logs-panel';
import { isAdmin } from '@/lib/permissions';
import { Guard } from '../admin-guard';

/** Admin spec section 6: Action logs are for the admin flag. */
export default function AdminActionLogsRoute() {
  return (
    <Guard allow={isAdmin}>
      <ActionLogsPanel />
    </Guard>
  );
}
