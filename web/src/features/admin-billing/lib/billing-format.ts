import type { GridCsvExportOptions } from '@mui/x-data-grid';
import type { AllocationLine } from '@/lib/api/dto';
import { dec, toPlain } from '@/lib/decimal';
import { allocationSummary } from '@/lib/trading-format';

/** Admin spec sections 2 and 9: the export is `billing.csv`, fields separated by semicolons. */
export const BILLING_CSV_OPTIONS = {
  fileName: 'billing',
  delimiter: ';',
  // The grid's own formula escaping also puts a quote before every negative number
  // ('-0.02' → "'-0.02"); text columns are escaped by `csvText` instead, so numbers stay numbers.
  escapeFormulas: false,
  // Every field of a billing item in the order of admin spec section 3, the ids the grid
  // hides at first included, whatever order the grid shows them in; then the allocation
  // and give-up (ADR 0045).
  fields: [
    'company_name', 'first_name', 'last_name', 'user_id', 'broker_name', 'broker_id', 'match_request_id', 'order_id',
    'payment_order_id', 'match_request_created_at', 'instrument_name', 'bbg_code', 'exchange_instrument_id', 'exchange',
    'exchange_iso_code', 'tick_size', 'term', 'direction', 'quantity', 'price', 'allocations', 'give_up_broker_name',
  ],
} as const satisfies GridCsvExportOptions;

const pad = (n: number) => String(n).padStart(2, '0');

/** Admin spec section 2: the match request's creation as a date plus UTC time, '25/11/2026 14:03 UTC'. */
export function formatUtcDateTime(value: string | Date | null | undefined): string {
  if (!value) return '';
  const d = typeof value === 'string' ? new Date(value) : value;
  if (Number.isNaN(d.getTime())) return '';
  return `${pad(d.getUTCDate())}/${pad(d.getUTCMonth() + 1)}/${d.getUTCFullYear()} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
}

/** A decimal field as the exact text the server sent (no float rounding, no grouping, no exponent). */
export function decimalText(value: number | null | undefined): string {
  return value === null || value === undefined ? '' : toPlain(dec(value));
}

/**
 * Text as exported: a value a spreadsheet would run as a formula (OWASP CSV injection: a leading
 * =, +, -, @, tab or carriage return) gets a leading apostrophe.
 */
export function csvText(value: string | null | undefined): string {
  if (value === null || value === undefined) return '';
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

/** A row's id: one billing item per side (order) of a match request. */
export const billingRowId = (item: { match_request_id: string; order_id: string }) => `${item.match_request_id}/${item.order_id}`;

/**
 * A side's allocation as the CSV holds it: the accounts' codes and plain quantities
 * ('HAL-MACRO 1000; HAL-RATES 500'), with `csvText`'s formula guard (a code may start with
 * '-'); empty when not allocated.
 */
export function allocationsText(lines: readonly AllocationLine[] | null | undefined): string {
  return csvText(allocationSummary(lines ?? [], { grouped: false }));
}
