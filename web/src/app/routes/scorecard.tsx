import { ScorecardPage } from '@/features/scorecards/components/scorecard-page';
import { useCurrentUser } from '@/lib/api/get-me';
import { canReadScorecard, isOrderAdmin } from '@/lib/permissions';
import { Guard } from '../admin-guard';

/** Scorecards (issue 29): the firm's own, or, for the venue's staff, the venue's or one firm's. */
export default function ScorecardRoute() {
  const user = useCurrentUser();
  return (
    <Guard allow={canReadScorecard}>
      <ScorecardPage key={user.user_id} staff={isOrderAdmin(user)} />
    </Guard>
  );
}
