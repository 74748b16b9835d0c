import { fillRate, type Scorecard } from '@/lib/api/scorecard';

/** One figure of a scorecard: its name (as the CSV says it) and its value, null when none. */
export type Figure = [name: string, value: number | null];

/** Every figure of a scorecard, in the order the page shows them. */
export function figures(s: Scorecard): Figure[] {
  const out: Figure[] = [];
  for (const side of ['sent', 'received'] as const) {
    const o = s[side];
    out.push(
      [`match_requests_${side}`, o.total], [`match_requests_${side}_accepted`, o.accepted], [`match_requests_${side}_rejected`, o.rejected],
      [`match_requests_${side}_timed_out`, o.timed_out], [`match_requests_${side}_withdrawn`, o.withdrawn],
      [`match_requests_${side}_cancelled_by_venue`, o.cancelled_by_venue], [`match_requests_${side}_pending`, o.pending],
    );
  }
  const times = (name: string, t: Scorecard['response_times']): Figure[] => [[`${name}_count`, t.count], [`${name}_p50_ms`, t.p50_ms], [`${name}_p90_ms`, t.p90_ms]];
  out.push(...times('response_time', s.response_times));
  out.push(['resting_quantity', s.resting.rested_quantity], ['resting_filled_quantity', s.resting.filled_quantity], ['resting_fill_rate_pct', fillRate(s.resting)]);
  out.push(['rfqs_sent', s.rfqs_sent], ['rfqs_quoted', s.rfqs_quoted], ['rfqs_traded', s.rfqs_traded]);
  out.push(['quotes_asked', s.quotes_asked], ['quotes_given', s.quotes_given], ['quotes_won', s.quotes_won]);
  out.push(...times('quote_time', s.quote_times), ...times('broker_accept_time', s.broker_accept_times), ...times('broker_fill_time', s.broker_fill_times));
  out.push(['trades', s.trades], ['price_improvement_ticks', s.price_improvement.ticks]);
  for (const m of s.markouts) out.push([`markout_${m.minutes}m_ticks`, m.ticks], [`markout_${m.minutes}m_trades`, m.trades]);
  return out;
}

/** The scorecard as CSV: a header naming whose and which period, then `figure,value` rows. */
export function scorecardCsv(s: Scorecard, whose: string): string {
  const quote = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  const rows = [['scorecard', whose], ['from', s.from], ['to', s.to], ...figures(s).map(([k, v]) => [k, v === null ? '' : String(v)])];
  return rows.map((r) => r.map(quote).join(',')).join('\n') + '\n';
}
