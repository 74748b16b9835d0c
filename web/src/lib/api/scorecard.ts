import { useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';

// Scorecards (issue 29): a firm's own, or the venue's (or one firm's) for the venue's staff.

export type Scorecard = components['schemas']['ScorecardDto'];

const outcomes = z.object({
  total: z.number(), pending: z.number(), accepted: z.number(), rejected: z.number(), timed_out: z.number(),
  withdrawn: z.number(), cancelled_by_venue: z.number(),
});
const times = z.object({ count: z.number(), p50_ms: z.number().nullable(), p90_ms: z.number().nullable() });
const ticks = z.object({ trades: z.number(), ticks: z.number().nullable() });
const scorecardSchema = z.object({
  company_id: z.string().nullable(),
  from: z.string(),
  to: z.string(),
  sent: outcomes,
  received: outcomes,
  response_times: times,
  resting: z.object({ rested_quantity: z.number(), filled_quantity: z.number() }),
  rfqs_sent: z.number(),
  rfqs_quoted: z.number(),
  rfqs_traded: z.number(),
  quotes_asked: z.number(),
  quotes_given: z.number(),
  quotes_won: z.number(),
  quote_times: times,
  broker_accept_times: times,
  broker_fill_times: times,
  trades: z.number(),
  price_improvement: ticks,
  markouts: z.array(ticks.extend({ minutes: z.number() })),
}) satisfies z.ZodType<Scorecard>;

/** The fill rate of resting interest, in whole percent (null with nothing rested). */
export function fillRate(r: Scorecard['resting']): number | null {
  return r.rested_quantity > 0 ? Math.round((r.filled_quantity * 100) / r.rested_quantity) : null;
}

/** Whose scorecard: the caller's firm's, or (the venue's staff) the venue's or one firm's. */
export type ScorecardScope = { own: true } | { own: false; companyId: string | null };

/** GET /scorecard or /admin/scorecard over `from`–`to` (ISO instants). */
export function useScorecard(scope: ScorecardScope, from: string, to: string) {
  const period = `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
  const path = scope.own
    ? `/scorecard?${period}`
    : `/admin/scorecard?${period}${scope.companyId ? `&company_id=${encodeURIComponent(scope.companyId)}` : ''}`;
  return useQuery({
    queryKey: ['scorecard', scope.own ? 'own' : (scope.companyId ?? 'venue'), from, to],
    queryFn: ({ signal }) => apiFetch(path, { schema: scorecardSchema, signal }),
  });
}
