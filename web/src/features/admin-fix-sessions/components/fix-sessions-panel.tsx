import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import Chip from '@mui/material/Chip';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableContainer from '@mui/material/TableContainer';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import Typography from '@mui/material/Typography';
import Refresh from '@mui/icons-material/Refresh';
import dayjs from 'dayjs';
import { AdminPage } from '@/components/layout/admin-page';
import { formatDateTime } from '@/lib/format-date';
import { type FixSessionState, type MarketDataSession, useFixSessions } from '../api/get-fix-sessions';

const STATE: Record<FixSessionState, { label: string; color: 'success' | 'warning' | 'default' }> = {
  LOGGED_ON: { label: 'Logged on', color: 'success' },
  LOGGED_OFF: { label: 'Logged off', color: 'warning' },
  NEVER: { label: 'Never', color: 'default' },
};

const numeric = { fontVariantNumeric: 'tabular-nums' } as const;
const mono = { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', fontSize: 13, whiteSpace: 'nowrap' } as const;

/**
 * The venue's market-data session (ADR 0049) as the node holding it last said: the provider,
 * whether it is logged on and since when, its last price, and how many instruments are stale.
 */
function MarketData({ session }: { session: MarketDataSession | null }) {
  if (!session) {
    return (
      <Typography variant="body2" color="text.secondary" data-testid="market-data-session">
        No market-data session: bands move only by the operator&apos;s band call.
      </Typography>
    );
  }
  return (
    <Stack spacing={1}>
      <Typography variant="h3" component="h2">
        Market data
      </Typography>
      <TableContainer component={Paper} variant="outlined">
        <Table size="small" aria-label="Market-data session">
          <TableHead>
            <TableRow>
              <TableCell>Provider</TableCell>
              <TableCell>CompIDs</TableCell>
              <TableCell>State</TableCell>
              <TableCell>Node</TableCell>
              <TableCell align="right">Symbols</TableCell>
              <TableCell>Last price</TableCell>
              <TableCell align="right">Stale instruments</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            <TableRow>
              <TableCell sx={mono}>{session.provider}</TableCell>
              <TableCell sx={mono}>
                {session.sender_comp_id} → {session.target_comp_id}
              </TableCell>
              <TableCell>
                <Chip size="small" variant="outlined" color={STATE[session.state].color} label={STATE[session.state].label} title={`Since ${formatDateTime(session.since)}`} />
              </TableCell>
              <TableCell sx={mono}>{session.node_id}</TableCell>
              <TableCell align="right" sx={numeric}>
                {session.symbols}
              </TableCell>
              <TableCell sx={{ whiteSpace: 'nowrap', ...numeric }} title={session.last_price_at ?? undefined}>
                {session.last_price_at ? formatDateTime(session.last_price_at) : '—'}
              </TableCell>
              <TableCell align="right" sx={numeric}>
                {session.stale_instruments > 0 ? <Chip size="small" color="warning" label={session.stale_instruments} /> : 0}
              </TableCell>
            </TableRow>
          </TableBody>
        </Table>
      </TableContainer>
    </Stack>
  );
}

/**
 * The FIX sessions of the venue's companies (ADR 0025), for venue admins: whether each
 * company's session is logged on, the sequence numbers both ways and its last message.
 * Refreshed every 5 s while open, and on demand.
 */
export function FixSessionsPanel() {
  const sessions = useFixSessions();
  const items = sessions.data?.items ?? [];
  const acceptor = sessions.data?.acceptor;
  // The button stays enabled while the poll runs, so keyboard focus never drops off it.
  const actions = (
    <Stack direction="row" spacing={2} sx={{ alignItems: 'center', justifyContent: 'flex-end', flexWrap: 'wrap' }} useFlexGap>
      {/* Whether this node accepts sessions at all (issue 28.20): the list is the venue's, the port this node's. */}
      {acceptor === null && (
        <Alert severity="info" sx={{ flexGrow: 1 }} data-testid="fix-acceptor">
          FIX is off on this node: no session can log on here. Start the node with UPSTAIRS_FIX_BIND (or --fix-bind) to accept FIX 4.4 sessions.
        </Alert>
      )}
      {acceptor && (
        <Typography variant="body2" color="text.secondary" sx={{ flexGrow: 1 }} data-testid="fix-acceptor">
          This node accepts FIX 4.4 sessions on {acceptor.address}
          {acceptor.tls ? ' (TLS)' : ''}, TargetCompID {acceptor.comp_id}.
        </Typography>
      )}
      {sessions.dataUpdatedAt > 0 && (
        <Typography variant="body2" color="text.secondary" sx={numeric}>
          Updated at {dayjs(sessions.dataUpdatedAt).format('HH:mm:ss')}
        </Typography>
      )}
      <Button variant="outlined" startIcon={<Refresh />} onClick={() => void sessions.refetch()}>
        Refresh
      </Button>
    </Stack>
  );
  return (
    <AdminPage
      title="FIX sessions"
      filters={
        <Stack spacing={3}>
          {actions}
          {sessions.data && <MarketData session={sessions.data.market_data} />}
        </Stack>
      }
      query={sessions}
      empty={items.length === 0}
      emptyText="No company has a FIX CompID yet."
    >
      <TableContainer component={Paper} variant="outlined">
        <Table size="small" aria-label="FIX sessions">
          <TableHead>
            <TableRow>
              <TableCell>Company</TableCell>
              <TableCell>CompID</TableCell>
              <TableCell>State</TableCell>
              <TableCell align="right">Seq in</TableCell>
              <TableCell align="right">Seq out</TableCell>
              <TableCell>Last message</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {items.map((s) => (
              <TableRow key={s.company_id} hover>
                <TableCell sx={{ fontWeight: 600 }}>{s.company_name}</TableCell>
                <TableCell sx={{ fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', fontSize: 13, whiteSpace: 'nowrap' }}>{s.fix_comp_id}</TableCell>
                <TableCell>
                  <Chip size="small" variant="outlined" color={STATE[s.state].color} label={STATE[s.state].label} />
                </TableCell>
                <TableCell align="right" sx={numeric} title="The MsgSeqNum the venue expects next">
                  {s.next_target_seq}
                </TableCell>
                <TableCell align="right" sx={numeric} title="The MsgSeqNum the venue sends next">
                  {s.next_sender_seq}
                </TableCell>
                <TableCell sx={{ whiteSpace: 'nowrap', ...numeric }} title={s.last_message_at ?? undefined}>
                  {s.last_message_at ? formatDateTime(s.last_message_at) : '—'}
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </TableContainer>
    </AdminPage>
  );
}
