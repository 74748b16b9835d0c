import { within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import type { Scorecard } from '@/lib/api/scorecard';
import { db } from '@/testing/mocks/db';
import { server } from '@/testing/mocks/server';
import { renderApp, screen } from '@/testing/test-utils';
import { scorecardCsv } from '../lib/scorecard-csv';

const none = { total: 0, pending: 0, accepted: 0, rejected: 0, timed_out: 0, withdrawn: 0, cancelled_by_venue: 0 };
const noTimes = { count: 0, p50_ms: null, p90_ms: null };

function card(overrides: Partial<Scorecard> = {}): Scorecard {
  return {
    company_id: 'c-acme', from: '2026-10-27T10:00:00Z', to: '2026-11-26T10:00:00Z',
    sent: { ...none, total: 4, accepted: 2, rejected: 1, timed_out: 1 },
    received: { ...none, total: 3, accepted: 1, withdrawn: 2 },
    response_times: { count: 2, p50_ms: 3000, p90_ms: 10000 },
    resting: { rested_quantity: 3000, filled_quantity: 1000 },
    rfqs_sent: 2, rfqs_quoted: 2, rfqs_traded: 1, quotes_asked: 0, quotes_given: 0, quotes_won: 0,
    quote_times: noTimes, broker_accept_times: { count: 3, p50_ms: 45000, p90_ms: 120000 }, broker_fill_times: noTimes,
    trades: 3, price_improvement: { trades: 3, ticks: 1.5 },
    markouts: [{ minutes: 1, trades: 3, ticks: 0.33 }, { minutes: 5, trades: 3, ticks: -1 }, { minutes: 30, trades: 2, ticks: null }],
    ...overrides,
  };
}

describe('scorecard (issue 29)', () => {
  it("shows a trader their firm's figures, each with its chart, from the user menu", async () => {
    const asked: string[] = [];
    server.use(http.get('*/api/scorecard', ({ request }) => (asked.push(request.url), HttpResponse.json(card()))));
    const { user } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    await user.click(await screen.findByRole('button', { name: 'Profile menu' }));
    await user.click(screen.getByRole('menuitem', { name: 'Scorecard' }));
    expect(await screen.findByRole('heading', { name: 'Scorecard' })).toBeInTheDocument();
    const requests = await screen.findByRole('region', { name: 'Match requests' });
    expect(within(requests).getByRole('img', { name: 'Sent: 4 (Accepted 2, Rejected 1, Timed out 1)' })).toBeInTheDocument();
    expect(within(requests).getByRole('img', { name: 'Received: 3 (Accepted 1, Withdrawn 2)' })).toBeInTheDocument();
    expect(within(requests).getByTestId('fill-rate')).toHaveTextContent(
      'Fill rate of resting interest: 33% (1,000 of 3,000 rested by your firm traded)',
    );
    const times = screen.getByRole('region', { name: 'Response times' });
    expect(within(times).getByRole('img', { name: 'Median 3 s' })).toBeInTheDocument();
    expect(within(times).getByRole('img', { name: '90th percentile 10 s' })).toBeInTheDocument();
    expect(screen.getByTestId('price-improvement')).toHaveTextContent('+1.5 ticks');
    const prices = screen.getByRole('region', { name: 'Prices' });
    expect(within(prices).getByRole('img', { name: '5 min after: -1 ticks, 3 trades' })).toBeInTheDocument();
    expect(within(prices).getByRole('img', { name: '30 min after: –, 2 trades' })).toBeInTheDocument();
    expect(screen.getByText(/No other firm sees these figures/)).toBeInTheDocument();
    expect(asked[0]).toMatch(/\/api\/scorecard\?from=.+&to=.+/);
    // Another period asks again.
    await user.click(screen.getByRole('combobox', { name: 'Period' }));
    await user.click(await screen.findByRole('option', { name: 'Last 7 days' }));
    await expect.poll(() => asked.length).toBe(2);
    const span = (url: string) => {
      const q = new URL(url).searchParams;
      return (Date.parse(q.get('to')!) - Date.parse(q.get('from')!)) / 86_400_000;
    };
    expect([span(asked[0]!), span(asked[1]!)]).toEqual([30, 7]);
  });

  it('says when nothing happened, and shows the venue to its staff with a choice of firm', async () => {
    const asked: string[] = [];
    const quiet = card({
      sent: none, received: none, rfqs_sent: 0, rfqs_quoted: 0, rfqs_traded: 0, trades: 0, company_id: null, response_times: noTimes,
      resting: { rested_quantity: 0, filled_quantity: 0 },
    });
    server.use(http.get('*/api/admin/scorecard', ({ request }) => (asked.push(request.url), HttpResponse.json(quiet))));
    db.addUser({ user_id: 'u-admin', email: 'ada@upstairs.test', first_name: 'Ada', last_name: 'Admin', roles: ['upstairs-admin'], company_id: 'c-upstairs', company_name: 'Upstairs' });
    const { user } = renderApp('/scorecard', { signedInAs: 'ada@upstairs.test' });
    expect(await screen.findByText('No match request, RFQ or trade in this period.')).toBeInTheDocument();
    expect(screen.getByText(/The whole venue/)).toBeInTheDocument();
    const requests = screen.getByRole('region', { name: 'Match requests' });
    expect(within(requests).getByRole('img', { name: 'Every request: 0' })).toBeInTheDocument();
    expect(within(requests).getByTestId('fill-rate')).toHaveTextContent(/^Fill rate of resting interest: none rested$/);
    await user.click(screen.getByRole('combobox', { name: 'Firm' }));
    await user.click(await screen.findByRole('option', { name: 'Kestrel' }));
    await expect.poll(() => asked.at(-1)).toContain('company_id=c-kestrel');
  });

  it('keeps sandbox users out', async () => {
    db.user().roles = ['sandbox'];
    renderApp('/scorecard', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByText('No access')).toBeInTheDocument();
  });

  it('says why a scorecard could not be read', async () => {
    server.use(http.get('*/api/scorecard', () => HttpResponse.json({ status: 400, title: 'Bad Request', detail: 'At most 366 days' }, { status: 400 })));
    renderApp('/scorecard', { signedInAs: 'trader@acme.test' });
    // On the page (the app's toast says it too, and goes).
    const onPage = () => screen.queryAllByRole('alert').filter((a) => a.classList.contains('MuiAlert-standard')).map((a) => a.textContent);
    await expect.poll(onPage).toEqual(['At most 366 days']);
    expect(screen.getByRole('button', { name: 'Download CSV' })).toBeDisabled();
  });

  it('writes every figure to CSV, blanks for none', () => {
    const csv = scorecardCsv(card(), 'Acme, "the firm"').split('\n');
    expect(csv.slice(0, 3)).toEqual(['scorecard,"Acme, ""the firm"""', 'from,2026-10-27T10:00:00Z', 'to,2026-11-26T10:00:00Z']);
    expect(csv).toContain('match_requests_sent,4');
    expect(csv).toContain('response_time_p90_ms,10000');
    expect(csv).toEqual(expect.arrayContaining(['resting_quantity,3000', 'resting_filled_quantity,1000', 'resting_fill_rate_pct,33']));
    expect(scorecardCsv(card({ resting: { rested_quantity: 0, filled_quantity: 0 } }), 'Acme').split('\n')).toContain('resting_fill_rate_pct,');
    expect(csv).toContain('price_improvement_ticks,1.5');
    expect(csv).toContain('markout_30m_ticks,');
    expect(csv.at(-1)).toBe('');
  });
});
