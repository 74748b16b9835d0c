import type { ReactNode } from 'react';
import Box from '@mui/material/Box';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import Inventory2Outlined from '@mui/icons-material/Inventory2Outlined';
import RocketLaunchOutlined from '@mui/icons-material/RocketLaunchOutlined';
import NightsStayOutlined from '@mui/icons-material/NightsStayOutlined';
import { useAppConfig } from '@/lib/api/get-config';
import { anyCalendar, type PlatformStatus } from '@/lib/api/get-platform-status';
import { closedText, operatingHours } from '@/lib/trading-format';
import { AlwaysOpenNotice } from './always-open-notice';
import { TradingStoppedAlert } from './trading-stopped-alert';

type Props = {
  /** GET /platform/status (the server's calendar): whether the venue is open, and its hours; undefined while loading. */
  status: PlatformStatus | undefined;
  /** The 'Add parent order' button. */
  action?: ReactNode;
  /** Shown under the heading: a liquidity provider's RFQs, which need no parent order. */
  aside?: ReactNode;
};

/** Dashboard without parent orders: Getting started and 'No active orders yet' (closed panel outside hours). */
export function EmptyDashboard({ status, action, aside }: Props) {
  const { product_name } = useAppConfig();
  return (
    <Stack spacing={3}>
      <Typography variant="h1">Dashboard</Typography>
      <TradingStoppedAlert status={status} />
      <AlwaysOpenNotice status={status} />
      {aside}
      {status && !anyCalendar(status, 'open') && (
        <Paper variant="outlined" sx={{ p: 3, display: 'flex', gap: 2, alignItems: 'center' }} role="status">
          <NightsStayOutlined color="action" />
          <Box>
            <Typography variant="h3" component="h2">
              {product_name} is closed
            </Typography>
            {closedText(status) && <Typography variant="body2">{closedText(status)}</Typography>}
            <Typography variant="body2" color="text.secondary">
              {operatingHours(status)}
            </Typography>
          </Box>
        </Paper>
      )}
      <Box sx={{ display: 'grid', gridTemplateColumns: { xs: '1fr', md: '1fr 1fr' }, gap: 3 }}>
        <Paper variant="outlined" sx={{ p: 4 }}>
          <Stack spacing={2} sx={{ alignItems: 'flex-start' }}>
            <RocketLaunchOutlined color="primary" sx={{ fontSize: 36 }} />
            <Typography variant="h2">Getting started</Typography>
            <Typography color="text.secondary">
              Load your parent orders from your execution system, or click Add Parent Order to create one by hand.
            </Typography>
            {action}
          </Stack>
        </Paper>
        <Paper variant="outlined" sx={{ p: 4, display: 'flex', flexDirection: 'column', alignItems: 'center', justifyContent: 'center', textAlign: 'center' }}>
          <Inventory2Outlined color="disabled" sx={{ fontSize: 48, mb: 1 }} />
          <Typography variant="h2">No active orders yet</Typography>
          <Typography color="text.secondary" sx={{ mt: 1 }}>
            Your parent orders and order books will appear here.
          </Typography>
        </Paper>
      </Box>
    </Stack>
  );
}
