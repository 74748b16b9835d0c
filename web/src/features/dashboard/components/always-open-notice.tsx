import Alert from '@mui/material/Alert';
import type { PlatformStatus } from '@/lib/api/get-platform-status';

/**
 * The demo runs the venue around the clock (DESIGN, trading hours): the dashboard says so
 * plainly instead of showing trading hours that do not apply.
 */
export function AlwaysOpenNotice({ status }: { status: PlatformStatus | undefined }) {
  if (!status?.always_open) return null;
  return (
    <Alert severity="info" role="status" data-testid="always-open-notice">
      Demo: the venue is open around the clock, every day. Orders, matching and RFQs never stop for the close.
    </Alert>
  );
}
