import { CompaniesPanel } from '@/features/admin-companies/components/companies-panel';
import { isAdmin } from '@/lib/permissions';
import { Guard } from '../admin-guard';

export default function AdminCompaniesPanelRoute() {
  return (
    <Guard allow={isAdmin}>
      <CompaniesPanel />
    </Guard>
  );
}
