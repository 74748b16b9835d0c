import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Chip from '@mui/material/Chip';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { Link as RouterLink } from 'react-router';
import { paths } from '@/config/paths';
import type { User } from '@/lib/api/get-me';
import { formatDateTime } from '@/lib/format-date';

const autoAcceptLabels: Record<string, string> = {
  INSTANT: 'Instant',
  ACCEPT_WITH_DELAY: 'Accept with delay',
  REJECT_WITH_DELAY: 'Reject with delay',
};

function Row({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <Box sx={{ display: 'grid', gridTemplateColumns: { xs: '1fr', sm: '220px 1fr' }, gap: 1, alignItems: 'baseline', py: 1.5, borderBottom: 1, borderColor: 'divider' }}>
      <Typography variant="body2" color="text.secondary" component="dt">
        {label}
      </Typography>
      <Typography component="dd" sx={{ m: 0, wordBreak: 'break-word' }}>
        {children}
      </Typography>
    </Box>
  );
}

/** Read-only account information. */
export function AccountInfo({ user }: { user: User }) {
  return (
    <Box sx={{ maxWidth: 880, mx: 'auto' }}>
      <Typography variant="h1" sx={{ mb: 3 }}>
        Account information
      </Typography>
      <Paper variant="outlined" sx={{ p: { xs: 3, md: 4 } }}>
        <Box component="dl" sx={{ m: 0 }}>
          <Row label="Name">{`${user.first_name} ${user.last_name}`.trim()}</Row>
          <Row label="Email">{user.email}</Row>
          <Row label="Company">{user.company_name}</Row>
          <Row label="Roles">
            <Stack direction="row" component="span" sx={{ gap: 1, flexWrap: 'wrap' }}>
              {user.roles.map((r: string) => (
                <Chip key={r} label={r} size="small" component="span" />
              ))}
            </Stack>
          </Row>
          <Row label="Match request">{user.auto_accept ? autoAcceptLabels[user.auto_accept] : 'Not set'}</Row>
          <Row label="Reliability Score">{`${user.reliability_score}%`}</Row>
          <Row label="Member since">{formatDateTime(user.created_at)}</Row>
        </Box>
        <Stack direction="row" sx={{ justifyContent: 'flex-end', mt: 3 }}>
          <Button component={RouterLink} to={paths.dashboard} variant="contained">
            Return to Dashboard
          </Button>
        </Stack>
      </Paper>
    </Box>
  );
}
