import type { ReactNode } from 'react';
import Box from '@mui/material/Box';
import Paper from '@mui/material/Paper';
import { Link as RouterLink } from 'react-router';
import { Logo } from '@/components/ui/logo';
import { paths } from '@/config/paths';

/** Centred card used by the public account screens and error pages. */
export function AuthLayout({ children, width = 480 }: { children: ReactNode; width?: number }) {
  return (
    <Box
      component="main"
      sx={{
        minHeight: '100vh',
        display: 'flex',
        flexDirection: 'column',
        alignItems: 'center',
        justifyContent: 'center',
        gap: 3,
        px: 2,
        py: 6,
        background: 'linear-gradient(160deg, #eef2fa 0%, #f7f9fc 60%, #e6eef9 100%)',
      }}
    >
      <RouterLink to={paths.login} aria-label="Home" style={{ textDecoration: 'none' }}>
        <Logo />
      </RouterLink>
      <Paper elevation={0} sx={{ width: '100%', maxWidth: width, p: { xs: 3, sm: 5 }, border: 1, borderColor: 'divider', borderRadius: 3 }}>
        {children}
      </Paper>
    </Box>
  );
}
