import type { ReactNode } from 'react';
import Paper from '@mui/material/Paper';
import { HelpNotice } from '@/components/errors/not-found-page';
import { useCurrentUser, type User } from '@/lib/api/get-me';

/**
 * A page the user's role does not open says so ('No access'), with whom to ask; an unknown
 * page stays the 404 page (admin spec). Issue 28: the 404 page read as a broken link.
 */
export function Guard({ allow, children }: { allow: (user: User) => boolean; children: ReactNode }) {
  const user = useCurrentUser();
  if (allow(user)) return children;
  return (
    <Paper variant="outlined" sx={{ p: { xs: 3, md: 6 }, maxWidth: 640, mx: 'auto', mt: 4 }}>
      <HelpNotice title="No access">
        Your account&apos;s role does not open this page. If you need it, ask your company admin, or get in touch with us.
      </HelpNotice>
    </Paper>
  );
}
