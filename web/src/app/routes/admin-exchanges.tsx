import { ExchangesPanel } from '@/features/admin-exchanges/components/exchanges-panel';
import { isAdmin } from '@/lib/permissions';
import { Guard } from '../admin-guard';

export default function AdminExchangesRoute() {
  return (
    <Guard allow={isAdmin}>
      <ExchangesPanel />
    </Guard>
  );
}
