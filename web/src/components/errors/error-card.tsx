import Button from '@mui/material/Button';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import ErrorOutline from '@mui/icons-material/ErrorOutlineOutlined';
import { ApiError } from '@/lib/api-errors';

function describe(error: unknown): string {
  if (error instanceof ApiError) {
    const data = typeof error.data === 'string' ? error.data : JSON.stringify(error.data ?? '');
    return `${error.status}: ${data}`;
  }
  // Spelling as in the spec.
  return 'An unknown error has occured.';
}

/** Generic error card with Retry (spec section 2, error pages). */
export function ErrorCard({ error, onRetry }: { error: unknown; onRetry: () => void }) {
  return (
    <Paper variant="outlined" sx={{ p: 4, maxWidth: 560, mx: 'auto' }} role="alert">
      <Stack spacing={2} sx={{ alignItems: 'center', textAlign: 'center' }}>
        <ErrorOutline color="error" sx={{ fontSize: 40 }} />
        <Typography variant="h3" component="h2">
          Oops! There was an error.
        </Typography>
        <Typography variant="body2" color="text.secondary" sx={{ wordBreak: 'break-word' }}>
          {describe(error)}
        </Typography>
        <Button variant="contained" onClick={onRetry}>
          Retry
        </Button>
      </Stack>
    </Paper>
  );
}
