import { useState } from 'react';
import Chip from '@mui/material/Chip';
import IconButton from '@mui/material/IconButton';
import Paper from '@mui/material/Paper';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableContainer from '@mui/material/TableContainer';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import Typography from '@mui/material/Typography';
import DeleteOutlined from '@mui/icons-material/DeleteOutlined';
import EditOutlined from '@mui/icons-material/EditOutlined';
import { AdminPage } from '@/components/layout/admin-page';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { useToast } from '@/components/ui/toast';
import { visuallyHidden } from '@/components/ui/visually-hidden';
import { closedText, daysText, formatHour, localDate, phaseLabel, sessionHours } from '@/lib/trading-format';
import { useDeleteExchange } from '../api/delete-exchange';
import { useExchanges, type Exchange } from '../api/get-exchanges';
import { ExchangeDialog } from './exchange-dialog';

const COLUMNS = ['MIC', 'Name', 'Time zone', 'Hours', 'Days', 'Holidays', 'Instruments', 'Now'];

const PHASE_COLORS = { Open: 'success', 'Opens soon': 'warning', Closed: 'default' } as const;

const mono = { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', fontSize: 13, whiteSpace: 'nowrap' } as const;

/** A holiday's date as read: '25 Dec 2026'. */
export function holidayDate(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  return Number.isNaN(d.getTime()) ? date : new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'short', year: 'numeric' }).format(d);
}

/** Today in the exchange's time zone (UTC's when the browser does not know the zone). */
function todayIn(timeZone: string, now: Date): string {
  try {
    return localDate(now, timeZone);
  } catch {
    return now.toISOString().slice(0, 10);
  }
}

/** The exchange's next holiday from today (its own today), if any. */
export function nextHoliday(x: Pick<Exchange, 'holidays' | 'time_zone'>, now: Date = new Date()) {
  const today = todayIn(x.time_zone, now);
  return [...x.holidays].sort((a, b) => a.date.localeCompare(b.date)).find((h) => h.date >= today) ?? null;
}

function HolidaysCell({ exchange }: { exchange: Exchange }) {
  const next = nextHoliday(exchange);
  const count = exchange.holidays.length;
  return (
    <TableCell>
      {count === 0 ? 'None' : count}
      {next && (
        <Typography variant="caption" color="text.secondary" component="div" sx={{ whiteSpace: 'nowrap' }}>
          {`Next: ${holidayDate(next.date)}${next.name ? `, ${next.name}` : ''}`}
        </Typography>
      )}
    </TableCell>
  );
}

/** Open, Opens soon (parent orders taken) or Closed, with the holiday that closes it today. */
function NowCell({ exchange: { status } }: { exchange: Exchange }) {
  const phase = phaseLabel(status);
  const label = phase === 'Closed' && status.holiday ? `Closed for ${status.holiday.name ?? 'a holiday'}` : phase;
  return (
    <TableCell>
      <Chip size="small" variant="outlined" color={PHASE_COLORS[phase]} label={label} title={status.open ? undefined : closedText(status) || undefined} />
    </TableCell>
  );
}

/**
 * The exchanges' calendars (ADR 0052): an instrument follows the one whose MIC is its
 * `exchange_iso_code`, and the venue's own hours when there is none. An admin adds, edits
 * and deletes them; a change takes effect at once.
 */
export function ExchangesPanel() {
  const exchanges = useExchanges();
  const [editing, setEditing] = useState<{ exchange: Exchange | null } | null>(null);
  // The exchange asked about stays named while its dialog closes.
  const [deleting, setDeleting] = useState<Exchange | null>(null);
  const [confirming, setConfirming] = useState(false);
  const remove = useDeleteExchange();
  const { showToast } = useToast();
  const items = exchanges.data ?? [];

  const confirmDelete = () => {
    if (!deleting || remove.isPending) return;
    const x = deleting;
    remove.mutate(x.mic, {
      onSuccess: () => showToast({ message: `${x.name} (${x.mic}) deleted.` }),
      onSettled: () => setConfirming(false),
    });
  };

  return (
    <AdminPage
      title="Exchanges"
      createLabel="Add exchange"
      onCreate={() => setEditing({ exchange: null })}
      query={exchanges}
      empty={items.length === 0}
      emptyText="No exchanges yet: every instrument trades on the venue's hours."
      drawer={
        <>
          {editing && <ExchangeDialog exchange={editing.exchange} onClose={() => setEditing(null)} />}
          <ConfirmDialog
            open={confirming}
            title={deleting ? `Delete ${deleting.mic}?` : ''}
            text={
              deleting
                ? `${deleting.name}'s calendar is removed: ${deleting.instruments === 1 ? 'its instrument trades' : `its ${deleting.instruments} instruments trade`} on the venue's hours from now on.`
                : ''
            }
            confirmLabel="Delete"
            pending={remove.isPending}
            onConfirm={confirmDelete}
            onClose={() => setConfirming(false)}
          />
        </>
      }
    >
      <TableContainer component={Paper} variant="outlined">
        <Table size="small" aria-label="Exchanges">
          <TableHead>
            <TableRow>
              {COLUMNS.map((c) => (
                <TableCell key={c} align={c === 'Instruments' ? 'right' : undefined}>
                  {c}
                </TableCell>
              ))}
              <TableCell>
                <Typography component="span" sx={visuallyHidden}>
                  Actions
                </Typography>
              </TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {items.map((x) => (
              <TableRow key={x.mic} hover>
                <TableCell sx={{ ...mono, fontWeight: 600 }}>{x.mic}</TableCell>
                <TableCell>{x.name}</TableCell>
                <TableCell sx={{ whiteSpace: 'nowrap' }}>{x.time_zone}</TableCell>
                <TableCell sx={{ whiteSpace: 'nowrap' }}>
                  {sessionHours(x.open_time, x.close_time)}
                  <Typography variant="caption" color="text.secondary" component="div">
                    {`Parent orders from ${formatHour(x.parent_orders_from)}`}
                  </Typography>
                </TableCell>
                <TableCell>{daysText(x.days, 'short')}</TableCell>
                <HolidaysCell exchange={x} />
                <TableCell align="right" sx={{ fontVariantNumeric: 'tabular-nums' }}>
                  {x.instruments}
                </TableCell>
                <NowCell exchange={x} />
                <TableCell align="right" sx={{ whiteSpace: 'nowrap' }}>
                  <IconButton size="small" aria-label={`Edit ${x.mic}`} onClick={() => setEditing({ exchange: x })}>
                    <EditOutlined fontSize="small" />
                  </IconButton>
                  <IconButton
                    size="small"
                    aria-label={`Delete ${x.mic}`}
                    onClick={() => {
                      setDeleting(x);
                      setConfirming(true);
                    }}
                  >
                    <DeleteOutlined fontSize="small" />
                  </IconButton>
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </TableContainer>
    </AdminPage>
  );
}
