import { useMemo, useState } from 'react';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Breadcrumbs from '@mui/material/Breadcrumbs';
import Button from '@mui/material/Button';
import Link from '@mui/material/Link';
import MenuItem from '@mui/material/MenuItem';
import Paper from '@mui/material/Paper';
import Skeleton from '@mui/material/Skeleton';
import Stack from '@mui/material/Stack';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import FileDownloadOutlined from '@mui/icons-material/FileDownloadOutlined';
import { Link as RouterLink } from 'react-router';
import { serverErrorText } from '@/components/form/form-drawer';
import { paths } from '@/config/paths';
import { useCounterpartyFirms } from '@/lib/api/counterparty-filters';
import { fillRate, useScorecard, type Scorecard, type ScorecardScope } from '@/lib/api/scorecard';
import { scorecardCsv } from '../lib/scorecard-csv';

const PERIODS = [
  { days: 1, label: 'Last 24 hours' },
  { days: 7, label: 'Last 7 days' },
  { days: 30, label: 'Last 30 days' },
  { days: 90, label: 'Last 90 days' },
  { days: 366, label: 'Last 12 months' },
] as const;

const number = new Intl.NumberFormat('en-GB');
/** '1 trade', '3 trades'. */
const count = (n: number, one: string) => `${number.format(n)} ${n === 1 ? one : `${one}s`}`;
const seconds = (ms: number | null) =>
  ms === null ? '–' : ms < 1000 ? `${number.format(ms)} ms` : `${(ms / 1000).toLocaleString('en-GB', { maximumFractionDigits: 1 })} s`;
const ticks = (t: number | null) => (t === null ? '–' : `${t > 0 ? '+' : ''}${t.toLocaleString('en-GB', { maximumFractionDigits: 2 })} ticks`);

/**
 * Scorecards (issue 29): a firm's venue quality statistics over a chosen period, or, for the
 * venue's staff, the venue's or one firm's; each figure with a chart where one reads better,
 * and the whole as CSV.
 */
export function ScorecardPage({ staff }: { staff: boolean }) {
  const [days, setDays] = useState<number>(30);
  const [firm, setFirm] = useState<string>('');
  // The period ends at the minute the page chose it, so the figures hold still meanwhile.
  const [to] = useState(() => new Date(Math.ceil(Date.now() / 60_000) * 60_000));
  const from = useMemo(() => new Date(to.getTime() - days * 86_400_000), [to, days]);
  const scope: ScorecardScope = staff ? { own: false, companyId: firm || null } : { own: true };
  const card = useScorecard(scope, from.toISOString(), to.toISOString());
  const firms = useCounterpartyFirms();
  const whose = staff ? (firm ? (firms.data?.find((f) => f.company_id === firm)?.name ?? 'One firm') : 'The whole venue') : 'Your firm';

  const download = (s: Scorecard) => {
    const url = URL.createObjectURL(new Blob([scorecardCsv(s, whose)], { type: 'text/csv' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `scorecard-${from.toISOString().slice(0, 10)}-${to.toISOString().slice(0, 10)}.csv`;
    document.body.appendChild(a);
    a.click();
    a.remove();
    // The browser reads the file after the click returns: let go of it a while later.
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };

  return (
    <Box sx={{ maxWidth: 1100, mx: 'auto' }}>
      <Breadcrumbs aria-label="breadcrumb" sx={{ mb: 2 }}>
        <Link component={RouterLink} to={paths.dashboard} underline="hover" color="inherit">
          Dashboard
        </Link>
        <Typography color="text.primary">Scorecard</Typography>
      </Breadcrumbs>
      <Stack direction={{ xs: 'column', md: 'row' }} spacing={2} sx={{ mb: 3, alignItems: { md: 'center' }, justifyContent: 'space-between' }}>
        <Box>
          <Typography variant="h1">Scorecard</Typography>
          <Typography color="text.secondary">
            {whose}: how its match requests, RFQs and trades went. {staff ? '' : 'No other firm sees these figures.'}
          </Typography>
        </Box>
        <Stack direction="row" spacing={2} sx={{ alignItems: 'center' }}>
          {staff && (
            <TextField select size="small" label="Firm" value={firm} onChange={(e) => setFirm(e.target.value)} sx={{ minWidth: 200 }}>
              <MenuItem value="">The whole venue</MenuItem>
              {(firms.data ?? []).map((f) => (
                <MenuItem key={f.company_id} value={f.company_id}>
                  {f.name}
                </MenuItem>
              ))}
            </TextField>
          )}
          <TextField select size="small" label="Period" value={days} onChange={(e) => setDays(Number(e.target.value))} sx={{ minWidth: 170 }}>
            {PERIODS.map((p) => (
              <MenuItem key={p.days} value={p.days}>
                {p.label}
              </MenuItem>
            ))}
          </TextField>
          <Button variant="outlined" startIcon={<FileDownloadOutlined />} sx={{ whiteSpace: 'nowrap', flexShrink: 0 }} disabled={!card.data} onClick={() => card.data && download(card.data)}>
            Download CSV
          </Button>
        </Stack>
      </Stack>
      {card.isError ? (
        <Alert severity="error">{serverErrorText(card.error)}</Alert>
      ) : !card.data ? (
        <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { md: '1fr 1fr' } }} aria-busy="true">
          {[0, 1, 2, 3].map((i) => (
            <Skeleton key={i} variant="rounded" height={180} />
          ))}
        </Box>
      ) : (
        <Figures s={card.data} whose={staff ? (firm ? 'firm' : 'venue') : 'own'} />
      )}
    </Box>
  );
}

/** Whose figures these are: the reader's firm's, another firm's (for the venue's staff), the venue's. */
type Whose = 'own' | 'firm' | 'venue';

function Figures({ s, whose }: { s: Scorecard; whose: Whose }) {
  const venue = whose === 'venue';
  const quiet = s.sent.total + s.received.total + s.rfqs_sent + s.quotes_asked + s.trades + s.resting.rested_quantity === 0;
  const rate = fillRate(s.resting);
  return (
    <Stack spacing={2}>
      {quiet && <Alert severity="info">No match request, RFQ or trade in this period.</Alert>}
      <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { md: '1fr 1fr' } }}>
        <Section title="Match requests">
          {venue ? (
            <OutcomeBar label="Every request" o={s.sent} />
          ) : (
            <>
              <OutcomeBar label="Sent" o={s.sent} />
              <OutcomeBar label="Received" o={s.received} />
            </>
          )}
          <Legend />
          <Typography variant="body2" sx={{ mt: 1.5 }} data-testid="fill-rate">
            Fill rate of resting interest:{' '}
            <strong>{rate === null ? 'none rested' : `${rate}%`}</strong>
            {rate !== null && ` (${number.format(s.resting.filled_quantity)} of ${number.format(s.resting.rested_quantity)} rested ${venue ? 'on the venue' : whose === 'own' ? 'by your firm' : 'by the firm'} traded)`}
          </Typography>
        </Section>
        <Section title="Response times">
          <Typography variant="body2" color="text.secondary">
            {venue
              ? 'How long responders took to accept or reject.'
              : `How long ${whose === 'own' ? 'your firm' : 'the firm'} took to accept or reject what it received.`}
          </Typography>
          <TimeBars t={s.response_times} />
        </Section>
        <Section title="Requests for quote">
          <Bars
            rows={[
              { label: 'RFQs sent', value: s.rfqs_sent },
              { label: '… quoted', value: s.rfqs_quoted },
              { label: '… traded', value: s.rfqs_traded },
              { label: 'Asked to quote', value: s.quotes_asked },
              { label: '… quoted', value: s.quotes_given },
              { label: '… won', value: s.quotes_won },
            ]}
          />
          <Typography variant="body2" sx={{ mt: 1 }}>
            Quote time: median {seconds(s.quote_times.p50_ms)}, 90th percentile {seconds(s.quote_times.p90_ms)} ({count(s.quote_times.count, 'quote')})
          </Typography>
        </Section>
        <Section title="Broker confirmations">
          <Typography variant="body2" color="text.secondary">
            Accept
          </Typography>
          <TimeBars t={s.broker_accept_times} />
          <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }}>
            Fill
          </Typography>
          <TimeBars t={s.broker_fill_times} />
        </Section>
      </Box>
      <Section title="Prices">
        <Typography variant="body2" color="text.secondary">
          {count(s.trades, 'trade')}. Against the band&apos;s mid, from {venue ? 'the resting side' : whose === 'own' ? 'your side' : "the firm's side"}: positive is
          better.
        </Typography>
        <Typography variant="body1" sx={{ mt: 1 }} data-testid="price-improvement">
          Price improvement at the trade: <strong>{ticks(s.price_improvement.ticks)}</strong>
        </Typography>
        <Typography variant="body2" sx={{ mt: 2, fontWeight: 600 }}>
          Markouts
        </Typography>
        <Diverging rows={s.markouts.map((m) => ({ label: `${m.minutes} min after`, value: m.ticks, note: count(m.trades, 'trade') }))} />
      </Section>
    </Stack>
  );
}

function Section({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <Paper variant="outlined" component="section" aria-label={title} sx={{ p: 2.5 }}>
      <Typography variant="h3" component="h2" sx={{ mb: 1.5 }}>
        {title}
      </Typography>
      {children}
    </Paper>
  );
}

const OUTCOMES = [
  { key: 'accepted', label: 'Accepted', color: 'success.main' },
  { key: 'rejected', label: 'Rejected', color: 'error.main' },
  { key: 'timed_out', label: 'Timed out', color: 'warning.main' },
  { key: 'withdrawn', label: 'Withdrawn', color: 'grey.500' },
  { key: 'cancelled_by_venue', label: 'Cancelled by the venue', color: 'grey.700' },
  { key: 'pending', label: 'Pending', color: 'info.main' },
] as const;

function OutcomeBar({ label, o }: { label: string; o: Scorecard['sent'] }) {
  const text = OUTCOMES.filter((x) => o[x.key] > 0).map((x) => `${x.label} ${number.format(o[x.key])}`).join(', ');
  return (
    <Box sx={{ mb: 1.5 }}>
      <Typography variant="body2" sx={{ fontWeight: 600 }}>
        {label}: {number.format(o.total)}
      </Typography>
      <Box role="img" aria-label={`${label}: ${number.format(o.total)}${text ? ` (${text})` : ''}`} sx={{ display: 'flex', height: 14, borderRadius: 1, overflow: 'hidden', bgcolor: 'action.hover', mt: 0.5 }}>
        {OUTCOMES.map((x) => (o.total > 0 && o[x.key] > 0 ? <Box key={x.key} sx={{ width: `${(100 * o[x.key]) / o.total}%`, bgcolor: x.color }} /> : null))}
      </Box>
      <Typography variant="caption" color="text.secondary">
        {text || 'None'}
      </Typography>
    </Box>
  );
}

function Legend() {
  return (
    <Stack direction="row" spacing={1.5} useFlexGap sx={{ flexWrap: 'wrap' }} aria-hidden>
      {OUTCOMES.map((x) => (
        <Stack key={x.key} direction="row" spacing={0.5} sx={{ alignItems: 'center' }}>
          <Box sx={{ width: 10, height: 10, borderRadius: 0.5, bgcolor: x.color }} />
          <Typography variant="caption">{x.label}</Typography>
        </Stack>
      ))}
    </Stack>
  );
}

function Bars({ rows }: { rows: { label: string; value: number }[] }) {
  const max = Math.max(1, ...rows.map((r) => r.value));
  return (
    <Stack spacing={0.75}>
      {rows.map((r, i) => (
        <Box key={i} role="img" aria-label={`${r.label} ${number.format(r.value)}`} sx={{ display: 'grid', gridTemplateColumns: '130px 1fr 60px', gap: 1, alignItems: 'center' }}>
          <Typography variant="body2">{r.label}</Typography>
          <Box sx={{ height: 10, borderRadius: 1, bgcolor: 'action.hover' }}>
            <Box sx={{ height: '100%', width: `${(100 * r.value) / max}%`, borderRadius: 1, bgcolor: 'primary.main' }} />
          </Box>
          <Typography variant="body2" sx={{ textAlign: 'right', fontVariantNumeric: 'tabular-nums' }}>
            {number.format(r.value)}
          </Typography>
        </Box>
      ))}
    </Stack>
  );
}

function TimeBars({ t }: { t: Scorecard['response_times'] }) {
  if (t.count === 0) {
    return (
      <Typography variant="body2" color="text.secondary">
        None in this period.
      </Typography>
    );
  }
  const max = Math.max(1, t.p90_ms ?? 0);
  const rows = [
    { label: 'Median', ms: t.p50_ms },
    { label: '90th percentile', ms: t.p90_ms },
  ];
  return (
    <Stack spacing={0.75} sx={{ mt: 1 }}>
      {rows.map((r) => (
        <Box key={r.label} role="img" aria-label={`${r.label} ${seconds(r.ms)}`} sx={{ display: 'grid', gridTemplateColumns: '130px 1fr 70px', gap: 1, alignItems: 'center' }}>
          <Typography variant="body2">{r.label}</Typography>
          <Box sx={{ height: 10, borderRadius: 1, bgcolor: 'action.hover' }}>
            <Box sx={{ height: '100%', width: `${(100 * (r.ms ?? 0)) / max}%`, borderRadius: 1, bgcolor: 'secondary.main' }} />
          </Box>
          <Typography variant="body2" sx={{ textAlign: 'right', fontVariantNumeric: 'tabular-nums' }}>
            {seconds(r.ms)}
          </Typography>
        </Box>
      ))}
      <Typography variant="caption" color="text.secondary">
        {count(t.count, 'answer')}
      </Typography>
    </Stack>
  );
}

/** Bars either side of zero: green the firm's way, red against it. */
function Diverging({ rows }: { rows: { label: string; value: number | null; note: string }[] }) {
  const max = Math.max(1, ...rows.map((r) => Math.abs(r.value ?? 0)));
  return (
    <Stack spacing={0.75} sx={{ mt: 1 }}>
      {rows.map((r) => {
        const v = r.value ?? 0;
        const width = `${(50 * Math.abs(v)) / max}%`;
        return (
          <Box key={r.label} role="img" aria-label={`${r.label}: ${ticks(r.value)}, ${r.note}`} sx={{ display: 'grid', gridTemplateColumns: '130px 1fr 150px', gap: 1, alignItems: 'center' }}>
            <Typography variant="body2">{r.label}</Typography>
            <Box sx={{ position: 'relative', height: 12, bgcolor: 'action.hover', borderRadius: 1 }}>
              <Box sx={{ position: 'absolute', left: '50%', top: -2, bottom: -2, width: '1px', bgcolor: 'text.disabled' }} />
              {r.value !== null && (
                <Box sx={{ position: 'absolute', top: 0, bottom: 0, borderRadius: 1, width, bgcolor: v >= 0 ? 'success.main' : 'error.main', ...(v >= 0 ? { left: '50%' } : { right: '50%' }) }} />
              )}
            </Box>
            <Typography variant="body2" sx={{ textAlign: 'right', fontVariantNumeric: 'tabular-nums' }}>
              {ticks(r.value)} · {r.note}
            </Typography>
          </Box>
        );
      })}
    </Stack>
  );
}
