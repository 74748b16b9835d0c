import { useState } from 'react';
import Chip from '@mui/material/Chip';
import Link from '@mui/material/Link';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableContainer from '@mui/material/TableContainer';
import TableHead from '@mui/material/TableHead';
import TablePagination from '@mui/material/TablePagination';
import TableRow from '@mui/material/TableRow';
import Typography from '@mui/material/Typography';
import { AdminPage } from '@/components/layout/admin-page';
import { formatDateTime } from '@/lib/format-date';
import { type OutboxMessage, useOutbox } from '../api/get-outbox';

const KIND: Record<OutboxMessage['kind'], string> = {
  PASSWORD_RESET: 'Password reset',
  ACCOUNT_ACTIVATION: 'Account activation',
  EMAIL_CHANGED: 'E-mail changed',
  TRADE_ACCEPTANCE: 'Trade to accept',
  TRADE_FILL: 'Trade to confirm filled',
  TRADE_DECLINED: 'Trade declined',
  TRADE_ALLOCATED: 'Trade allocated',
  ORDERS_DIGEST: 'Orders digest',
};

/** What a link does, from its path and flag: the words a broker reads in the e-mail. */
function linkLabel(link: string): string {
  const url = new URL(link);
  const yes = [...url.searchParams.values()].at(-1) === 'true';
  switch (url.pathname) {
    case '/accept-order':
      return yes ? 'Accept' : 'Decline';
    case '/fill-order':
      return yes ? 'Confirm fill' : 'Not filled';
    default:
      return 'Open link';
  }
}

function State({ m }: { m: OutboxMessage }) {
  if (m.sent_at) return <Chip size="small" color="success" variant="outlined" label="Sent" />;
  if (m.last_error) return <Chip size="small" color="error" variant="outlined" label="Retrying" title={m.last_error} />;
  return <Chip size="small" variant="outlined" label="Queued" />;
}

/**
 * The e-mail outbox for venue admins: every message with its delivery state, attempts and
 * last error; in the demo its links are clickable, so the broker confirmation of a demo
 * trade can be followed end to end. Elsewhere the server sends no secret link (with a reset
 * or activation link the reader could take the account over): the row says one was sent.
 */
export function OutboxPanel() {
  const [page, setPage] = useState(0);
  const [size, setSize] = useState(25);
  const outbox = useOutbox(page, size);
  const items = outbox.data?.items ?? [];
  return (
    <AdminPage title="E-mail outbox" query={outbox} empty={items.length === 0 && page === 0} emptyText="No e-mail has been sent yet.">
      <TableContainer component={Paper} variant="outlined">
        <Table size="small" aria-label="E-mails">
          <TableHead>
            <TableRow>
              <TableCell>Queued</TableCell>
              <TableCell>To</TableCell>
              <TableCell>What</TableCell>
              <TableCell>State</TableCell>
              <TableCell align="right">Attempts</TableCell>
              <TableCell>Links</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {items.map((m) => (
              <TableRow key={m.outbox_id} hover>
                <TableCell sx={{ whiteSpace: 'nowrap' }}>{formatDateTime(m.created_at)}</TableCell>
                <TableCell>{m.to}</TableCell>
                <TableCell>
                  <Typography variant="body2" sx={{ fontWeight: 600 }}>
                    {KIND[m.kind]}
                  </Typography>
                  <Typography variant="caption" color="text.secondary">
                    {m.summary}
                  </Typography>
                  {m.last_error && (
                    <Typography variant="caption" color="error" sx={{ display: 'block' }}>
                      {m.last_error}
                    </Typography>
                  )}
                </TableCell>
                <TableCell>
                  <State m={m} />
                </TableCell>
                <TableCell align="right">{m.attempts}</TableCell>
                <TableCell>
                  <Stack direction="row" spacing={1.5}>
                    {m.links.map((l) => (
                      <Link key={l} href={l} target="_blank" rel="noreferrer noopener">
                        {linkLabel(l)}
                      </Link>
                    ))}
                    {m.links_hidden && (
                      <Typography variant="caption" color="text.secondary" title="Links are shown in the demo only">
                        Link hidden
                      </Typography>
                    )}
                    {m.links.length === 0 && !m.links_hidden && (
                      <Typography variant="caption" color="text.secondary">
                        —
                      </Typography>
                    )}
                  </Stack>
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
        <TablePagination
          component="div"
          count={outbox.data?.total_items ?? 0}
          page={page}
          rowsPerPage={size}
          rowsPerPageOptions={[10, 25, 50, 100]}
          onPageChange={(_, p) => setPage(p)}
          onRowsPerPageChange={(e) => {
            setSize(Number(e.target.value));
            setPage(0);
          }}
        />
      </TableContainer>
    </AdminPage>
  );
}
