import Button from '@mui/material/Button';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { AuthLayout } from '@/components/layout/auth-layout';
import { SupportContact } from './support-contact';

/** The general error page for an unexpected failure. */
export function SomethingWentWrongPage() {
  return (
    <AuthLayout width={520}>
      <Stack spacing={2.5} sx={{ alignItems: 'center', textAlign: 'center' }}>
        <Typography variant="h1">Oops! Something went wrong</Typography>
        <Typography color="text.secondary">Please refresh the page. If the problem continues, contact us.</Typography>
        <SupportContact />
        <Button variant="contained" onClick={() => window.location.assign('/')}>
          Refresh
        </Button>
      </Stack>
    </AuthLayout>
  );
}
