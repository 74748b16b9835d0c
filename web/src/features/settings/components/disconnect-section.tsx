import Box from '@mui/material/Box';
import FormControlLabel from '@mui/material/FormControlLabel';
import Paper from '@mui/material/Paper';
import Switch from '@mui/material/Switch';
import Typography from '@mui/material/Typography';
import { useToast } from '@/components/ui/toast';
import { useAppConfig } from '@/lib/api/get-config';
import type { User } from '@/lib/api/get-me';
import { useUpdateUser } from '@/lib/api/update-user';

/**
 * Cancel on disconnect (issue 29, ADR 0043): the trader's own choice, saved as it is
 * switched (a failed save is told by the app's error toast, and the switch shows the
 * stored choice). Off unless chosen, as on the exchanges for screen traders.
 */
export function DisconnectSection({ user }: { user: User }) {
  const { disconnect_grace_seconds: grace } = useAppConfig();
  const update = useUpdateUser();
  const { showToast } = useToast();
  const on = update.isPending && update.variables ? update.variables.body.cancel_on_disconnect === true : user.cancel_on_disconnect;
  const change = (next: boolean) =>
    update.mutate(
      { userId: user.user_id, body: { cancel_on_disconnect: next } },
      {
        onSuccess: () =>
          showToast({
            message: next ? 'Your working orders will be cancelled if you disconnect.' : 'Your working orders will stay if you disconnect.',
            type: 'success',
          }),
      },
    );
  return (
    <Paper variant="outlined" sx={{ p: 2 }} component="section" aria-label="Cancel on disconnect">
      <Box>
        <Typography sx={{ fontWeight: 600 }}>Cancel on disconnect</Typography>
        <Typography variant="body2" color="text.secondary">
          When every window you have open on the venue has lost its connection for {grace} seconds, we cancel your working orders and
          withdraw or decline your pending match requests. You are told of each order.
        </Typography>
      </Box>
      <FormControlLabel
        sx={{ mt: 1 }}
        control={<Switch checked={on} disabled={update.isPending} onChange={(e) => change(e.target.checked)} />}
        label="Cancel my working orders when I disconnect"
      />
    </Paper>
  );
}
