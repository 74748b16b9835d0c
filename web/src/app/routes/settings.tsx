import Box from '@mui/material/Box';
import { CounterpartyFilterSection } from '@/components/counterparty-filter-dialog';
import { useCurrentUser } from '@/lib/api/get-me';
import { canTrade } from '@/lib/permissions';
import { DisconnectSection } from '@/features/settings/components/disconnect-section';
import { SettingsForm } from '@/features/settings/components/settings-form';

export default function SettingsRoute() {
  const user = useCurrentUser();
  return (
    <>
      <SettingsForm key={user.user_id} user={user} />
      {user.auto_accept !== null && canTrade(user) && (
        <Box sx={{ maxWidth: 880, mx: 'auto', mt: 3, display: 'grid', gap: 3 }}>
          <DisconnectSection user={user} />
          <CounterpartyFilterSection
            owner="me"
            title="Your counterparty filter"
            description="Firms you never trade with, and the least reliability score of a firm you trade with. Your firm's own filter applies too."
          />
        </Box>
      )}
    </>
  );
}
