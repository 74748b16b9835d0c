import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import ButtonBase from '@mui/material/ButtonBase';
import { Link as RouterLink } from 'react-router';
import type { User } from '@/lib/api/get-me';
import { useAppConfig } from '@/lib/api/get-config';
import { adminEntries } from './admin-drawer';

/**
 * The dashboard of a user who runs the venue and does not trade (a venue admin, sales, a
 * company admin without a trading role): the admin areas their role opens, never the
 * trader's Getting started and its tip to trade (issue 28).
 */
export function OperatorHome({ user }: { user: User }) {
  const { product_name } = useAppConfig();
  const entries = adminEntries(user).filter((e) => e.show);
  return (
    <Stack spacing={3}>
      <Typography variant="h1">Dashboard</Typography>
      <Typography color="text.secondary">
        Your account runs {product_name}; it does not trade. Choose where to go, here or from the menu.
      </Typography>
      <nav aria-label="Admin areas">
        <Stack direction="row" useFlexGap spacing={2} sx={{ flexWrap: 'wrap' }}>
          {entries.map((e) => (
            <Paper key={e.to} variant="outlined" sx={{ width: 220, '&:hover': { borderColor: 'primary.main' } }}>
              <ButtonBase
                component={RouterLink}
                to={e.to}
                sx={{ width: '100%', p: 2.5, justifyContent: 'flex-start', gap: 1.5, borderRadius: 1, '&:focus-visible': { outline: 2, outlineColor: 'primary.main' } }}
              >
                {e.icon}
                <Typography variant="subtitle1" sx={{ fontWeight: 600 }}>
                  {e.label}
                </Typography>
              </ButtonBase>
            </Paper>
          ))}
        </Stack>
      </nav>
    </Stack>
  );
}
