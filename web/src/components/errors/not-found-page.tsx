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

/** The 404 text on its own: inside the signed-in layout, for pages the user may not see. */
export function NotFound() {
  return (
    <Stack spacing={2.5} sx={{ alignItems: 'center', textAlign: 'center' }}>
      <Typography variant="h1">Oops! Page Not Found (404)</Typography>
      <Typography color="text.secondary">
        The page you are looking for does not exist or has moved. If you need help, get in touch with us.
      </Typography>
      <SupportContact />
      <Button component={RouterLink} to={paths.home} variant="contained">
        Go to the homepage
      </Button>
    </Stack>
  );
}
