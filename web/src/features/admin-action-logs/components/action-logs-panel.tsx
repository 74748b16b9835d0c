import { useState } from 'react';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import LinearProgress from '@mui/material/LinearProgress';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableContainer from '@mui/material/TableContainer';
import TableHead from '@mui/material/TableHead';
import TablePagination from '@mui/material/TablePagination';
import TableRow from '@mui/material/TableRow';
import TableSortLabel from '@mui/material/TableSortLabel';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import Refresh from '@mui/icons-material/Refresh';
import { AdminPage } from '@/components/layout/admin-page';
import { formatDateTime } from '@/lib/format-date';
import { useDebounced } from '@/lib/use-debounced';
import { type ActionLog, type OrderBy, type SortBy, useActionLogs } from '../api/get-action-logs';
import { ActionLogDetailsDialog } from './action-log-details-dialog';
import { visuallyHidden } from '@/components/ui/visually-hidden';

/** The e-mail filter waits like the spec's other admin filters (section 9: 500 ms). */
export const EMAIL_FILTER_DEBOUNCE_MS = 500;
/** Admin spec section 9: grid page sizes 10, 25, 50 and 100, default 50. */
const PAGE_SIZES = [10, 25, 50, 100];
const DEFAULT_PAGE_SIZE = 50;

const COLUMNS: { label: string; sort: SortBy }[] = [
  { label: 'Time', sort: 'created_at' },
  { label: 'User', sort: 'email' },
  { label: 'Entity', sort: 'entity' },
  { label: 'Operation', sort: 'operation' },
];

/** Newest first for the time; A to Z for the other columns. */
const firstOrder = (sort: SortBy): OrderBy => (sort === 'created_at' ? 'DESC' : 'ASC');

/** Admin spec section 2: the action log, paged on the server, filterable by e-mail and sortable. */
export function ActionLogsPanel() {
  const [email, setEmail] = useState('');
  const debouncedEmail = useDebounced(email, EMAIL_FILTER_DEBOUNCE_MS);
  const [sort, setSort] = useState<{ sort_by: SortBy; order_by: OrderBy }>({ sort_by: 'created_at', order_by: 'DESC' });
  const [size, setSize] = useState(DEFAULT_PAGE_SIZE);
  // A new filter, sort or page size starts again at the first page.
  const listKey = `${debouncedEmail.trim()}|${sort.sort_by}|${sort.order_by}|${size}`;
  const [paging, setPaging] = useState({ key: listKey, page: 0 });
  const page = paging.key === listKey ? paging.page : 0;
  const logs = useActionLogs({ page, size, email: debouncedEmail, ...sort });
  const [selected, setSelected] = useState<ActionLog | null>(null);
  const items = logs.data?.items ?? [];
  const filtered = debouncedEmail.trim() !== '';

  const filters = (
    <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ alignItems: { sm: 'center' }, justifyContent: 'space-between' }}>
      <TextField
        label="E-mail"
        value={email}
        onChange={(e) => setEmail(e.target.value)}
        size="small"
        placeholder="Part of the user's e-mail"
        sx={{ width: { sm: 420 } }}
      />
      <Button variant="outlined" startIcon={<Refresh />} onClick={() => void logs.refetch()} disabled={logs.isFetching}>
        Refresh
      </Button>
    </Stack>
  );

  return (
    <AdminPage
      title="Action logs"
      filters={filters}
      query={logs}
      empty={items.length === 0 && page === 0}
      emptyText={filtered ? 'No action log entry matches this e-mail.' : 'No action has been logged yet.'}
      drawer={selected && <ActionLogDetailsDialog log={selected} onClose={() => setSelected(null)} />}
    >
      <TableContainer component={Paper} variant="outlined" aria-busy={logs.isFetching}>
        <Box sx={{ height: 4 }}>{logs.isFetching && <LinearProgress aria-label="Loading action logs" />}</Box>
        <Table size="small" aria-label="Action logs">
          <TableHead>
            <TableRow>
              {COLUMNS.map((c) => {
                const active = sort.sort_by === c.sort;
                return (
                  <TableCell key={c.sort} sortDirection={active ? (sort.order_by === 'ASC' ? 'asc' : 'desc') : false}>
                    <TableSortLabel
                      active={active}
                      direction={active ? (sort.order_by === 'ASC' ? 'asc' : 'desc') : firstOrder(c.sort) === 'ASC' ? 'asc' : 'desc'}
                      onClick={() =>
                        setSort((s) => ({
                          sort_by: c.sort,
                          order_by: s.sort_by === c.sort ? (s.order_by === 'ASC' ? 'DESC' : 'ASC') : firstOrder(c.sort),
                        }))
                      }
                    >
                      {c.label}
                    </TableSortLabel>
                  </TableCell>
                );
              })}
              <TableCell>
                <Box component="span" sx={visuallyHidden}>
                  Details
                </Box>
              </TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {items.map((log) => (
              <TableRow key={log.action_log_id} hover>
                <TableCell sx={{ whiteSpace: 'nowrap', fontVariantNumeric: 'tabular-nums' }} title={log.created_at}>
                  {formatDateTime(log.created_at)}
                </TableCell>
                <TableCell>
                  {log.user ? (
                    <>
                      <Typography variant="body2">{log.user.email}</Typography>
                      <Typography variant="caption" color="text.secondary">
                        {log.user.company_name}
                      </Typography>
                    </>
                  ) : (
                    <Typography variant="body2" color="text.secondary" title="Done by the venue itself, or without a session">
                      System
                    </Typography>
                  )}
                </TableCell>
                <TableCell>{log.entity}</TableCell>
                <TableCell sx={{ fontWeight: 600 }}>{log.operation}</TableCell>
                <TableCell align="right">
                  <Button
                    size="small"
                    aria-haspopup="dialog"
                    aria-label={`Details of ${log.entity} ${log.operation} at ${formatDateTime(log.created_at)}`}
                    onClick={() => setSelected(log)}
                  >
                    Details
                  </Button>
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
        <TablePagination
          component="div"
          count={logs.data?.total_items ?? 0}
          page={page}
          rowsPerPage={size}
          rowsPerPageOptions={PAGE_SIZES}
          onPageChange={(_, p) => setPaging({ key: listKey, page: p })}
          onRowsPerPageChange={(e) => setSize(Number(e.target.value))}
        />
      </TableContainer>
    </AdminPage>
  );
}
