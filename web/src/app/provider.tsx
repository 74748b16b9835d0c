import { useEffect, useState, type ReactNode } from 'react';
import CssBaseline from '@mui/material/CssBaseline';
import { ThemeProvider } from '@mui/material/styles';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { ApiErrorSnackbar } from '@/components/errors/api-error-snackbar';
import { ToastProvider } from '@/components/ui/toast';
import { ApiError, setLastErrorStatus } from '@/lib/api-errors';
import { onSessionEnd } from '@/lib/auth-token';
import { theme } from '@/lib/theme';

export function createQueryClient() {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // Client errors will not change on retry; network blips may.
        retry: (count, error) => !(error instanceof ApiError && error.status < 500) && count < 2,
        refetchOnWindowFocus: false,
      },
      mutations: { retry: false },
    },
  });
}

/** Theme, server-state cache, toasts and the API error snackbar. */
export function AppProvider({ children, queryClient }: { children: ReactNode; queryClient?: QueryClient }) {
  const [client] = useState(() => queryClient ?? createQueryClient());

  // A 401 or a logout resets all state.
  useEffect(
    () =>
      onSessionEnd(() => {
        client.clear();
        setLastErrorStatus(null);
      }),
    [client],
  );

  return (
    <ThemeProvider theme={theme}>
      <CssBaseline />
      <QueryClientProvider client={client}>
        <ToastProvider>
          {children}
          <ApiErrorSnackbar />
        </ToastProvider>
      </QueryClientProvider>
    </ThemeProvider>
  );
}
