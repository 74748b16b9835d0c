import { useCurrentUser } from '@/lib/api/get-me';
import { AccountInfo } from '@/features/account/components/account-info';

export default function AccountRoute() {
  const user = useCurrentUser();
  return <AccountInfo user={user} />;
}
