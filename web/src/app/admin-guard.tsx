import type { ReactNode } from 'react';
import Button from '@mui/material/Button';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { Link as RouterLink } from 'react-router';
import { SupportContact } from '@/components/errors/support-contact';
import { paths } from '@/config/paths';
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
      <Stack spacing={2.5} sx={{ alignItems: 'center', textAlign: 'center' }}>
        <Typography variant="h1">No access</Typography>
        <Typography color="text.secondary">
          Your account&apos;s role does not open this page. If you need it, ask your company admin, or get in touch with us.
        </Typography>
        <SupportContact />
        <Button component={RouterLink} to={paths.home} variant="contained">
          Go to the homepage
        </Button>
      </Stack>
    </Paper>
  );
}
