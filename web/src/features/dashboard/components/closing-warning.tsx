import { useState } from 'react';
import Button from '@mui/material/Button';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogContentText from '@mui/material/DialogContentText';
import DialogTitle from '@mui/material/DialogTitle';
import { useAppConfig } from '@/lib/api/get-config';
import { calendarOf, type Calendar, type PlatformStatus } from '@/lib/api/get-platform-status';
import { formatHour, operatingHours, zoneLabel } from '@/lib/trading-format';

export const CLOSING_WARNING_KEY = 'upstairs.closing-warning';

/** Where the day a calendar's warning was last dismissed is kept: the venue's, or an exchange's. */
function warningKey(c: Calendar) {
  return c.exchange ? `${CLOSING_WARNING_KEY}.${c.exchange.mic}` : CLOSING_WARNING_KEY;
}

/** The calendar date in a calendar's time zone, so "once a day" follows its day. */
function localDay(now: Date, timeZone: string) {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
}

/**
 * Spec section 9: a warning when at most 15 minutes remain, once per day (stored by date),
 * for the venue's own calendar and for each exchange's (ADR 0052): its instruments' working
 * orders expire at its close.
 */
export function ClosingWarning({ status, now = new Date() }: { status: PlatformStatus; now?: Date }) {
  const { product_name } = useAppConfig();
  const [dismissed, setDismissed] = useState<string[]>([]);
  const calendars = [calendarOf(status, null), ...status.exchanges.map((e) => calendarOf(status, e.mic))];
  const seen = (c: Calendar) => dismissed.includes(warningKey(c)) || localStorage.getItem(warningKey(c)) === localDay(now, c.time_zone);
  const due = calendars.find((c) => c.closing_soon && c.open && !seen(c));
  if (!due) return null;
  const name = due.exchange?.name ?? product_name;
  const close = () => {
    localStorage.setItem(warningKey(due), localDay(now, due.time_zone));
    setDismissed((d) => [...d, warningKey(due)]);
  };
  return (
    <Dialog open onClose={close} aria-labelledby="closing-title" maxWidth="xs" fullWidth>
      <DialogTitle id="closing-title">{name} closes soon</DialogTitle>
      <DialogContent>
        <DialogContentText>
          {name} closes at {formatHour(due.close_time)} {zoneLabel(due.time_zone)}. {operatingHours(due)} Working orders
          {due.exchange ? ' on its instruments' : ''} expire at the close and their quantity returns to the parent order.
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
