import { useEffect, useState } from 'react';
import Button from '@mui/material/Button';
import CircularProgress from '@mui/material/CircularProgress';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { AuthLayout } from '@/components/layout/auth-layout';
import { REAUTH_WAIT_MS } from '@/config/constants';

/** Shown while the user loads; after more than 10 s offers a Login button. */
export function PleaseWaitCard({ onLogin }: { onLogin: () => void }) {
  const [late, setLate] = useState(false);
  useEffect(() => {
    const t = setTimeout(() => setLate(true), REAUTH_WAIT_MS + 1);
    return () => clearTimeout(t);
  }, []);
  return (
    <AuthLayout>
      <Stack spacing={2.5} sx={{ alignItems: 'center', textAlign: 'center' }}>
        <Typography variant="h2" component="h1">
          Please Wait
        </Typography>
        <Typography color="text.secondary">
          Your session timed out. We are re-authenticating you, this will only take a moment.
        </Typography>
        {late ? (
          <Button variant="contained" onClick={onLogin} fullWidth>
            Login
          </Button>
        ) : (
          <CircularProgress aria-label="Loading" />
        )}
      </Stack>
    </AuthLayout>
  );
}
