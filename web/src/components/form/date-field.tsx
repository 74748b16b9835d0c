import { useState } from 'react';
import dayjs, { type Dayjs } from 'dayjs';
import 'dayjs/locale/en-gb';
import { AdapterDayjs } from '@mui/x-date-pickers/AdapterDayjs';
import { DesktopDatePicker } from '@mui/x-date-pickers/DesktopDatePicker';
import { DesktopDateTimePicker } from '@mui/x-date-pickers/DesktopDateTimePicker';
import { LocalizationProvider } from '@mui/x-date-pickers/LocalizationProvider';

/** Spec section 9: dates read DD/MM/YYYY, whatever the browser's language. */
export const DATE_FORMAT = 'DD/MM/YYYY';
/** The same with the time to the second, for the audit's filters. */
export const DATE_TIME_FORMAT = 'DD/MM/YYYY HH:mm:ss';

type Props = {
  label: string;
  /** `YYYY-MM-DD`, or `YYYY-MM-DDTHH:mm:ss` local time `withTime`; '' when empty or not a whole date yet. */
  value: string;
  onChange: (value: string) => void;
  withTime?: boolean;
  error?: string;
  width: number;
};

/**
 * A date (or date and time) filter typed or picked as DD/MM/YYYY (HH:mm:ss), not in the
 * browser's own order (a native date input in an en-US Chromium reads mm/dd/yyyy).
 */
export function DateField({ label, value, onChange, withTime = false, error, width }: Props) {
  const wire = withTime ? 'YYYY-MM-DDTHH:mm:ss' : 'YYYY-MM-DD';
  // What is typed, a date not whole yet included (the field keeps its text only while its
  // value is that invalid date); the caller hears only whole dates.
  const [typed, setTyped] = useState<Dayjs | null>(() => (value ? dayjs(value) : null));
  // The value last said or heard: only a value set from outside (the filters cleared)
  // replaces what is typed, once.
  const [synced, setSynced] = useState(value);
  if (value !== synced) {
    setSynced(value);
    setTyped(value ? dayjs(value) : null);
  }
  const slotProps = {
    textField: { size: 'small' as const, error: Boolean(error), helperText: error, sx: { width } },
    field: { clearable: true },
  };
  const change = (d: Dayjs | null) => {
    const said = d?.isValid() ? d.format(wire) : '';
    setTyped(d);
    setSynced(said);
    onChange(said);
  };
  return (
    <LocalizationProvider dateAdapter={AdapterDayjs} adapterLocale="en-gb">
      {withTime ? (
        <DesktopDateTimePicker
          label={label}
          value={typed}
          onChange={change}
          format={DATE_TIME_FORMAT}
          views={['year', 'month', 'day', 'hours', 'minutes', 'seconds']}
          ampm={false}
          slotProps={slotProps}
        />
      ) : (
        <DesktopDatePicker label={label} value={typed} onChange={change} format={DATE_FORMAT} slotProps={slotProps} />
      )}
    </LocalizationProvider>
  );
}
