import dayjs from 'dayjs';

/** Date and time as the spec shows them: DD/MM/YYYY HH:mm. */
export function formatDateTime(value: string | Date | null | undefined): string {
  if (!value) return '';
  const d = dayjs(value);
  return d.isValid() ? d.format('DD/MM/YYYY HH:mm') : '';
}

/** Date and time to the second (the action log: DD/MM/YYYY HH:mm:ss). */
export function formatDateTimeSeconds(value: string | Date | null | undefined): string {
  if (!value) return '';
  const d = dayjs(value);
  return d.isValid() ? d.format('DD/MM/YYYY HH:mm:ss') : '';
}

/** Short date as the spec shows it: DD/MM/YY. */
export function formatShortDate(value: string | Date | null | undefined): string {
  if (!value) return '';
  const d = dayjs(value);
  return d.isValid() ? d.format('DD/MM/YY') : '';
}
