import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import Stack from '@mui/material/Stack';
import { errorDetail } from '@/lib/api-errors';
import { usePullExecutionSystem } from '../api/pull-execution-system';

/** 'Load from your execution system': asks the firm's EMS for its working orders, which arrive as parent orders. */
export function LoadFromExecutionSystem({ disabled, compact = false }: { disabled?: boolean; compact?: boolean }) {
  const pull = usePullExecutionSystem();
  return (
    <Stack spacing={1} sx={{ alignItems: 'flex-start' }}>
      <Button
        variant={compact ? 'text' : 'outlined'}
        size={compact ? 'small' : 'medium'}
        onClick={() => pull.mutate()}
        disabled={disabled || pull.isPending}
      >
        Load from your execution system
      </Button>
      {pull.isSuccess && (
        <Alert severity="info" role="status">
          Asked your execution system for its working orders: they appear here as they arrive.
        </Alert>
      )}
      {pull.isError && (
        <Alert severity="warning" role="alert">
          {errorDetail(pull.error, 'Your execution system could not be asked for its orders. Try again.')}
        </Alert>
      )}
    </Stack>
  );
}
