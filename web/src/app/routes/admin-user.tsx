import { useCompanies } from '@/features/admin-companies/api/get-companies';
import { UsersPanel } from '@/features/admin-users/components/users-panel';
import { isAdmin } from '@/lib/permissions';
import { Guard } from '../admin-guard';

/** The users panel picks a user's company from the companies feature's list. */
function UsersWithCompanies() {
  const companies = useCompanies();
  return <UsersPanel companies={companies.data?.items ?? []} />;
}

export default function AdminUsersPanelRoute() {
  return (
    <Guard allow={isAdmin}>
      <UsersWithCompanies />
    </Guard>
  );
}
