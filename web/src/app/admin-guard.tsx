import type { ReactNode } from 'react';
import Paper from '@mui/material/Paper';
import { NotFound } from '@/components/errors/not-found-page';
import { useCurrentUser, type User } from '@/lib/api/get-me';

/** Admin spec section 6: a page the user may not see answers as an unknown page (404). */
export function Guard({ allow, children }: { allow: (user: User) => boolean; children: ReactNode }) {
  const user = useCurrentUser();
  if (allow(user)) return children;
  return (
    <Paper variant="outlined" sx={{ p: { xs: 3, md: 6 }, maxWidth: 640, mx: 'auto', mt: 4 }}>
      <NotFound />
    </Paper>
  );
}
