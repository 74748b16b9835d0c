import dayjs from 'dayjs';

/** The order states of admin spec section 4, in its order (the state filter's choices). */
export const ORDER_STATES = [
  'WORKING',
  'AWAITING_MATCH',
  'AWAITING_RFQ_ACCEPTANCE',
  'MATCHED',
  'BROKER_ACCEPTED',
  'BROKER_FILLED',
  'BROKER_REJECTED',
  'ERROR',
  'CANCELLED',
  'REJECTED',
  'EXPIRED',
  'PARTIAL_BROKER_ACCEPTED',
  'PARTIAL_BROKER_FILLED',
] as const;

/** Only a working order's limit price can be corrected (the server answers 409 otherwise). */
export const EDITABLE_STATE = 'WORKING';

export const DATE_RANGE_ERROR = 'Before the start date';

/**
 * The created-at range of two date fields (YYYY-MM-DD, the browser's local days, as the
 * dates in the table): `from` is the start of the first day, `until` the start of the day
 * after the last one (the server's `until` is exclusive). An empty field leaves that end open;
 * a last day before the first is an error and neither end is sent.
 */
export function createdRange(fromDate: string, toDate: string): { from: string; until: string; error?: string } {
  const start = fromDate ? dayjs(fromDate) : null;
  const end = toDate ? dayjs(toDate) : null;
  if (start?.isValid() && end?.isValid() && end.isBefore(start, 'day')) return { from: '', until: '', error: DATE_RANGE_ERROR };
  return {
    from: start?.isValid() ? start.startOf('day').toISOString() : '',
    until: end?.isValid() ? end.add(1, 'day').startOf('day').toISOString() : '',
  };
}
