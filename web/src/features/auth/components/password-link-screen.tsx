import { useState } from 'react';
import Button from '@mui/material/Button';
import CircularProgress from '@mui/material/CircularProgress';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { useNavigate } from 'react-router';
import { paths } from '@/config/paths';
import { useAppConfig } from '@/lib/api/get-config';
import { usePasswordLink } from '../api/check-password-link';
import { CreatePasswordForm } from './create-password-form';
import { LinkExpired } from './link-expired';

type Mode = 'activate' | 'password' | 'reset';

/**
 * Checks an e-mailed link on load, then shows the expired screen, the
 * activation welcome (mode 'activate') or the password form.
 */
export function PasswordLinkScreen({ hash, mode }: { hash: string | null; mode: Mode }) {
  // The page binds the link: activation pages take activation links, the reset page reset links.
  const purpose = mode === 'reset' ? 'RESET' : 'ACTIVATION';
  const link = usePasswordLink(hash, purpose);
  const { product_name } = useAppConfig();
  const navigate = useNavigate();
  const [expired, setExpired] = useState(false);
  const newAccount = mode !== 'reset' && link.data?.purpose !== 'RESET';

  if (!hash || expired || link.isError) return <LinkExpired newAccount={newAccount} />;
  if (link.isPending) {
    return (
      <Stack sx={{ alignItems: 'center', py: 4 }}>
        <CircularProgress aria-label="Checking your link" />
      </Stack>
    );
  }
  if (mode === 'activate') {
    return (
      <Stack spacing={2.5} sx={{ alignItems: 'center', textAlign: 'center' }}>
        <Typography variant="h1">Welcome to {product_name}!</Typography>
        <Typography color="text.secondary">Create a password to activate your account</Typography>
        <Button
          variant="contained"
          size="large"
          fullWidth
          onClick={() => navigate(`${paths.password}?hash=${encodeURIComponent(hash)}`)}
        >
          Create
        </Button>
      </Stack>
    );
  }
  return <CreatePasswordForm hash={hash} purpose={purpose} onExpired={() => setExpired(true)} />;
}
