import { useState } from 'react';
import Button from '@mui/material/Button';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogContentText from '@mui/material/DialogContentText';
import DialogTitle from '@mui/material/DialogTitle';
import { useAppConfig } from '@/lib/api/get-config';
import type { PlatformStatus } from '@/lib/api/get-platform-status';
import { formatHour, operatingHours, zoneLabel } from '@/lib/trading-format';

export const CLOSING_WARNING_KEY = 'upstairs.closing-warning';

/** The calendar date in the venue's time zone, so "once a day" follows the venue's day. */
function venueDate(now: Date, timeZone: string) {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
}

/** Spec section 9: a warning when at most 15 minutes remain, once per day (stored by date). */
export function ClosingWarning({ status, now = new Date() }: { status: PlatformStatus; now?: Date }) {
  const { product_name } = useAppConfig();
  const today = venueDate(now, status.time_zone);
  const [dismissed, setDismissed] = useState(() => localStorage.getItem(CLOSING_WARNING_KEY) === today);
  const open = status.closing_soon && status.open && !dismissed;
  const close = () => {
    localStorage.setItem(CLOSING_WARNING_KEY, today);
    setDismissed(true);
  };
  return (
    <Dialog open={open} onClose={close} aria-labelledby="closing-title" maxWidth="xs" fullWidth>
      <DialogTitle id="closing-title">{product_name} closes soon</DialogTitle>
      <DialogContent>
        <DialogContentText>
          {product_name} closes at {formatHour(status.close_time)} {zoneLabel(status.time_zone)}. {operatingHours(status)} Working orders expire at the
          close and their quantity returns to the parent order.
        </DialogContentText>
      </DialogContent>
      <DialogActions>
        <Button variant="contained" onClick={close} autoFocus>
          OK
        </Button>
      </DialogActions>
    </Dialog>
  );
}
