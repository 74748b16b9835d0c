import type { ReactNode } from 'react';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Paper from '@mui/material/Paper';
import Skeleton from '@mui/material/Skeleton';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import Add from '@mui/icons-material/Add';
import { ErrorCard } from '@/components/errors/error-card';

type Props = {
  title: string;
  createLabel?: string;
  onCreate?: () => void;
  filters?: ReactNode;
  query: { isPending: boolean; isError: boolean; error: unknown; refetch: () => unknown };
  empty: boolean;
  emptyText: string;
  /** The create or edit drawer, shown whatever the state of the list. */
  drawer?: ReactNode;
  children: ReactNode;
};

/** An admin panel: title, create button, filters, then the list with its loading, error and empty states. */
export function AdminPage({ title, createLabel, onCreate, filters, query, empty, emptyText, drawer, children }: Props) {
  return (
    <Stack spacing={3}>
      <Stack direction="row" sx={{ alignItems: 'center', justifyContent: 'space-between' }}>
        <Typography variant="h1">{title}</Typography>
        {onCreate && (
          <Button variant="contained" startIcon={<Add />} onClick={onCreate}>
            {createLabel}
          </Button>
        )}
      </Stack>
      {filters}
      {query.isPending ? (
        <Paper variant="outlined" sx={{ p: 2 }} aria-busy="true">
          {Array.from({ length: 6 }, (_, i) => (
            <Skeleton key={i} height={36} />
          ))}
        </Paper>
      ) : query.isError ? (
        <ErrorCard error={query.error} onRetry={() => void query.refetch()} />
      ) : empty ? (
        <Paper variant="outlined" sx={{ p: 4, textAlign: 'center' }}>
          <Typography color="text.secondary">{emptyText}</Typography>
        </Paper>
      ) : (
        <Box>{children}</Box>
      )}
      {drawer}
    </Stack>
  );
}
