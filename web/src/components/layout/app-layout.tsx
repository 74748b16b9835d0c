import type { ReactNode } from 'react';
import Box from '@mui/material/Box';
import Container from '@mui/material/Container';
import type { User } from '@/lib/api/get-me';
import { TopBar } from './top-bar';

/** Signed-in page chrome. */
export function AppLayout({ user, children }: { user: User; children: ReactNode }) {
  return (
    <Box sx={{ minHeight: '100vh', bgcolor: 'background.default' }}>
      <TopBar user={user} />
      <Container component="main" maxWidth="xl" sx={{ py: 4 }}>
        {children}
      </Container>
    </Box>
  );
}
