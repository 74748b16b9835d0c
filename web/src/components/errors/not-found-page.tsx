import type { ReactNode } from 'react';
import Button from '@mui/material/Button';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { Link as RouterLink } from 'react-router';
import { AuthLayout } from '@/components/layout/auth-layout';
import { paths } from '@/config/paths';
import { SupportContact } from './support-contact';

/** The 404 page for unknown routes and route errors. */
export function NotFoundPage() {
  return (
    <AuthLayout width={520}>
      <NotFound />
    </AuthLayout>
  );
}

/** The 404 text on its own. */
export function NotFound() {
  return (
    <HelpNotice title="Oops! Page Not Found (404)">
      The page you are looking for does not exist or has moved. If you need help, get in touch with us.
    </HelpNotice>
  );
}

/** A page that cannot be shown: what happened, the support contact and the way home. */
export function HelpNotice({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Stack spacing={2.5} sx={{ alignItems: 'center', textAlign: 'center' }}>
      <Typography variant="h1">{title}</Typography>
      <Typography color="text.secondary">{children}</Typography>
      <SupportContact />
      <Button component={RouterLink} to={paths.home} variant="contained">
        Go to the homepage
      </Button>
    </Stack>
  );
}
