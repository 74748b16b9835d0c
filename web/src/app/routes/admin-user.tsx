import Stack from '@mui/material/Stack';
import { useCompanies } from '@/features/admin-companies/api/get-companies';
import { CounterpartyFilterSection } from '@/components/counterparty-filter-dialog';
import { OwnKillSwitch } from '@/features/admin-companies/components/own-kill-switch';
import { UsersPanel } from '@/features/admin-users/components/users-panel';
import { useCurrentUser } from '@/lib/api/get-me';
import { canManageUsers, isAdmin } from '@/lib/permissions';
import { Guard } from '../admin-guard';

/** The users panel picks a user's company from the companies feature's list (venue admins). */
function UsersWithCompanies() {
  const companies = useCompanies();
  return <UsersPanel companies={companies.data?.items ?? []} />;
}

/**
 * A company admin manages its own company's users only (DESIGN section 4): that company is
 * the one choice. Its counterparty filter and kill switch are here too.
 */
function OwnCompanyUsers() {
  const user = useCurrentUser();
  return (
    <Stack spacing={3}>
      <UsersPanel companies={[{ company_id: user.company_id, name: user.company_name }]} />
      <CounterpartyFilterSection
        owner={{ companyId: user.company_id }}
        title={`${user.company_name}'s counterparty filter`}
        description="Firms none of your traders trade with, and the least reliability score of a firm they trade with. Each trader may add their own."
      />
      <OwnKillSwitch companyId={user.company_id} />
    </Stack>
  );
}

export default function AdminUsersPanelRoute() {
  const user = useCurrentUser();
  return <Guard allow={canManageUsers}>{isAdmin(user) ? <UsersWithCompanies /> : <OwnCompanyUsers />}</Guard>;
}
