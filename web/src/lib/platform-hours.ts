// Operating hours (spec sections 1 and 9): 9:00 to 17:00 UK time, Monday to Friday.
export function isPlatformOpen(now: Date = new Date()): boolean {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'Europe/London',
    weekday: 'short',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(now);
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  const weekday = get('weekday');
  const minutes = Number(get('hour')) * 60 + Number(get('minute'));
  if (weekday === 'Sat' || weekday === 'Sun') return false;
  return minutes >= 9 * 60 && minutes < 17 * 60;
}
