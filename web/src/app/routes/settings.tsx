import { useCurrentUser } from '@/lib/api/get-me';
import { SettingsForm } from '@/features/settings/components/settings-form';

export default function SettingsRoute() {
  const user = useCurrentUser();
  return <SettingsForm key={user.user_id} user={user} />;
}
