import type { ReactNode } from 'react';
import Box from '@mui/material/Box';
import Container from '@mui/material/Container';
import type { User } from '@/lib/api/get-me';
import { TopBar } from './top-bar';

/** Signed-in page chrome; `actions` go in the top bar (the app passes the features' ones). */
export function AppLayout({ user, actions, children }: { user: User; actions?: ReactNode; children: ReactNode }) {
  return (
    <Box sx={{ minHeight: '100vh', bgcolor: 'background.default' }}>
      <TopBar user={user} actions={actions} />
      <Container component="main" maxWidth="xl" sx={{ py: 4 }}>
        {children}
      </Container>
    </Box>
  );
}
