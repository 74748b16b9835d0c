import { describe, expect, it } from 'vitest';
import { allocationsText, BILLING_CSV_OPTIONS, billingRowId, csvText, decimalText, formatUtcDateTime } from '../lib/billing-format';
import { parseCsv } from './csv';

describe('billing formats', () => {
  it('shows the match request time as a date plus UTC time, whatever the browser’s zone', () => {
    expect(formatUtcDateTime('2026-11-25T14:03:59.999Z')).toBe('25/11/2026 14:03 UTC');
    expect(formatUtcDateTime('2026-03-29T00:30:00+01:00')).toBe('28/03/2026 23:30 UTC');
    expect(formatUtcDateTime(new Date(Date.UTC(2027, 0, 1, 0, 0)))).toBe('01/01/2027 00:00 UTC');
    expect(formatUtcDateTime('not a date')).toBe('');
    expect(formatUtcDateTime(null)).toBe('');
  });

  it('writes decimals exactly, without grouping or exponent', () => {
    expect(decimalText(-0.025)).toBe('-0.025');
    expect(decimalText(0.005)).toBe('0.005');
    expect(decimalText(5520)).toBe('5520');
    expect(decimalText(1e-7)).toBe('0.0000001');
    expect(decimalText(null)).toBe('');
  });

  it('guards text a spreadsheet would run as a formula, and only that', () => {
    expect(csvText('=SUM(A1)')).toBe("'=SUM(A1)");
    expect(csvText('+44 20')).toBe("'+44 20");
    expect(csvText('-x')).toBe("'-x");
    expect(csvText('@home')).toBe("'@home");
    expect(csvText('Halyard')).toBe('Halyard');
    expect(csvText(null)).toBe('');
  });

  it('writes an allocation as its accounts’ codes and plain quantities, guarded like any text', () => {
    const line = (code: string, quantity: number) => ({ account_id: code, code, name: code, quantity });
    expect(allocationsText([line('HAL-MACRO', 1000), line('HAL-RATES', 500)])).toBe('HAL-MACRO 1000; HAL-RATES 500');
    expect(allocationsText([line('-X', 12000)])).toBe("'-X 12000");
    expect(allocationsText([])).toBe('');
    expect(allocationsText(undefined)).toBe('');
  });

  it('exports billing.csv with semicolons', () => {
    expect(BILLING_CSV_OPTIONS).toMatchObject({ fileName: 'billing', delimiter: ';' });
    expect(billingRowId({ match_request_id: 'mr-1', order_id: 'o-2' })).toBe('mr-1/o-2');
  });

  it('reads CSV back: quoted delimiters, doubled quotes, CRLF rows', () => {
    const text = ['Company;Price;Note', '"Halyard; Co";-0.025;"said ""hi"""', 'Kestrel;5520;'].join('\r\n');
    expect(parseCsv(text, ';')).toEqual([
      ['Company', 'Price', 'Note'],
      ['Halyard; Co', '-0.025', 'said "hi"'],
      ['Kestrel', '5520', ''],
    ]);
  });
});
