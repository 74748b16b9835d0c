import dayjs from 'dayjs';

/** Date and time as the spec shows them: DD/MM/YYYY HH:mm. */
export function formatDateTime(value: string | Date | null | undefined): string {
  if (!value) return '';
  const d = dayjs(value);
  return d.isValid() ? d.format('DD/MM/YYYY HH:mm') : '';
}

/** Short date as the spec shows it: DD/MM/YY. */
export function formatShortDate(value: string | Date | null | undefined): string {
  if (!value) return '';
  const d = dayjs(value);
  return d.isValid() ? d.format('DD/MM/YY') : '';
}
