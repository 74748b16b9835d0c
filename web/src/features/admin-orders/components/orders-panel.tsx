import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Checkbox from '@mui/material/Checkbox';
import Chip from '@mui/material/Chip';
import CircularProgress from '@mui/material/CircularProgress';
import IconButton from '@mui/material/IconButton';
import LinearProgress from '@mui/material/LinearProgress';
import ListItemText from '@mui/material/ListItemText';
import MenuItem from '@mui/material/MenuItem';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableContainer from '@mui/material/TableContainer';
import TableHead from '@mui/material/TableHead';
import TablePagination from '@mui/material/TablePagination';
import TableRow from '@mui/material/TableRow';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import EditOutlined from '@mui/icons-material/EditOutlined';
import Refresh from '@mui/icons-material/Refresh';
import { AdminPage } from '@/components/layout/admin-page';
import type { Instrument } from '@/lib/api/dto';
import { instrumentQueryOptions } from '@/lib/api/get-instrument';
import { dec, toGrouped } from '@/lib/decimal';
import { formatDateTime } from '@/lib/format-date';
import { stateLabel } from '@/lib/trading-format';
import { type AdminOrder, useAdminOrders } from '../api/get-admin-orders';
import { DateField } from '@/components/form/date-field';
import { CompanyFilter } from '@/components/form/company-filter';
import { useInstrumentOptions } from '../api/get-instrument-options';
import { createdRange, EDITABLE_STATE, ORDER_STATES } from '../lib/order-filters';
import { formatOrderPrice, shortOrderId } from '../lib/order-format';
import { LimitPriceDrawer } from './limit-price-drawer';
import { visuallyHidden } from '@/components/ui/visually-hidden';

/** Admin spec section 9: grid page sizes 10, 25, 50 and 100, default 50. */
const PAGE_SIZES = [10, 25, 50, 100];
const DEFAULT_PAGE_SIZE = 50;

const COLUMNS = ['Order', 'Created by', 'Instrument', 'Quantity', 'Direction', 'Price', 'State', 'Broker', 'Created', 'Updated'];
const NUMERIC = new Set(['Quantity', 'Price']);

type Filters = { companyId: string; instrumentId: string; states: string[]; fromDate: string; toDate: string };
const NO_FILTERS: Filters = { companyId: '', instrumentId: '', states: [], fromDate: '', toDate: '' };

type Props = {
  /** The admin permission: corrects limit prices and picks from every company and instrument. */
  canEdit: boolean;
};

/**
 * Admin spec section 2: every order on the venue, paged on the server, filtered by company,
 * instrument, state and creation date. The admin corrects a working order's limit price;
 * sales see the list only.
 */
export function OrdersPanel({ canEdit }: Props) {
  const queryClient = useQueryClient();
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const { companyId, instrumentId, states, fromDate, toDate } = filters;
  const range = createdRange(fromDate, toDate);
  const [size, setSize] = useState(DEFAULT_PAGE_SIZE);
  const [page, setPage] = useState(0);
  // Every change of a filter or of the page size starts again at the first page.
  const filter = (change: Partial<Filters>) => {
    setFilters((f) => ({ ...f, ...change }));
    setPage(0);
  };
  const orders = useAdminOrders({ page, size, company_id: companyId, instrument_id: instrumentId, states, from: range.from, until: range.until });

  // Admins and sales pick from every company and instrument (inactive and sandbox ones too).
  const instruments = useInstrumentOptions();
  const instrumentChoices = instruments.data ?? [];

  const [editing, setEditing] = useState<{ order: AdminOrder; instrument: Instrument } | null>(null);
  const [opening, setOpening] = useState<string | null>(null);
  // The form checks the tick of the order's instrument: fetched first (a failure is in the error snackbar).
  const edit = (order: AdminOrder) => {
    setOpening(order.order_id);
    queryClient
      .fetchQuery(instrumentQueryOptions(order.instrument.id))
      .then(
        (instrument) => setEditing({ order, instrument }),
        () => {},
      )
      .finally(() => setOpening(null));
  };

  const items = orders.data?.items ?? [];
  const filtered = Boolean(companyId || instrumentId || states.length || fromDate || toDate);
  const clear = () => filter(NO_FILTERS);

  const filterBar = (
    <Stack direction="row" spacing={2} useFlexGap sx={{ flexWrap: 'wrap', alignItems: 'flex-start' }}>
      <CompanyFilter value={companyId} onChange={(id) => filter({ companyId: id })} />
      <TextField
        select
        label="Instrument"
        value={instrumentId}
        onChange={(e) => filter({ instrumentId: e.target.value })}
        size="small"
        sx={{ width: 240 }}
        slotProps={{ inputLabel: { shrink: true }, select: { displayEmpty: true } }}
      >
        <MenuItem value="">All instruments</MenuItem>
        {instrumentChoices.map((i) => (
          <MenuItem key={i.instrument_id} value={i.instrument_id}>
            {i.name}
          </MenuItem>
        ))}
      </TextField>
      <TextField
        select
        label="State"
        value={states}
        onChange={(e) => {
          // A multiple select's value is the array of choices (a string only when autofilled).
          const v: unknown = e.target.value;
          const chosen: unknown[] = Array.isArray(v) ? v : String(v).split(',');
          // Kept in the spec's order, so the same choice is the same query.
          filter({ states: ORDER_STATES.filter((s) => chosen.includes(s)) });
        }}
        size="small"
        sx={{ width: 220 }}
        slotProps={{
          inputLabel: { shrink: true },
          select: {
            multiple: true,
            displayEmpty: true,
            renderValue: (s) => (Array.isArray(s) && s.length > 0 ? s.map(stateLabel).join(', ') : 'All states'),
          },
        }}
      >
        {ORDER_STATES.map((s) => (
          <MenuItem key={s} value={s} dense>
            <Checkbox size="small" checked={states.includes(s)} sx={{ p: 0.5, mr: 1 }} />
            <ListItemText primary={stateLabel(s)} />
          </MenuItem>
        ))}
      </TextField>
      <DateField label="Created from" value={fromDate} onChange={(v) => filter({ fromDate: v })} width={190} />
      <DateField label="Created to" value={toDate} onChange={(v) => filter({ toDate: v })} error={range.error} width={190} />
      <Box sx={{ flexGrow: 1 }} />
      {filtered && (
        <Button onClick={clear} sx={{ mt: 0.25 }}>
          Clear filters
        </Button>
      )}
      <Button variant="outlined" startIcon={<Refresh />} onClick={() => void orders.refetch()} disabled={orders.isFetching} sx={{ mt: 0.25 }}>
        Refresh
      </Button>
    </Stack>
  );

  return (
    <AdminPage
      title="Orders"
      filters={filterBar}
      query={orders}
      empty={items.length === 0 && page === 0}
      emptyText={filtered ? 'No order matches these filters.' : 'No order has been placed yet.'}
      drawer={editing && <LimitPriceDrawer order={editing.order} instrument={editing.instrument} onClose={() => setEditing(null)} />}
    >
      <TableContainer component={Paper} variant="outlined" aria-busy={orders.isFetching}>
        <Box sx={{ height: 4 }}>{orders.isFetching && <LinearProgress aria-label="Loading orders" />}</Box>
        <Table size="small" aria-label="Orders">
          <TableHead>
            <TableRow>
              {COLUMNS.map((c) => (
                <TableCell key={c} align={NUMERIC.has(c) ? 'right' : 'left'} sx={{ whiteSpace: 'nowrap' }}>
                  {c}
                </TableCell>
              ))}
              {canEdit && (
                <TableCell>
                  <Box component="span" sx={visuallyHidden}>
                    Edit
                  </Box>
                </TableCell>
              )}
            </TableRow>
          </TableHead>
          <TableBody>
            {items.map((o) => (
              <TableRow key={o.order_id} hover>
                <TableCell title={o.order_id} sx={{ fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', fontSize: 13 }}>
                  {shortOrderId(o.order_id)}
                </TableCell>
                <TableCell>
                  <Typography variant="body2">{o.created_by.email}</Typography>
                  <Typography variant="caption" color="text.secondary">
                    {o.created_by.company_name}
                  </Typography>
                </TableCell>
                <TableCell sx={{ fontWeight: 600 }}>{o.instrument.name}</TableCell>
                <TableCell align="right" sx={{ fontVariantNumeric: 'tabular-nums' }}>
                  {toGrouped(dec(o.quantity), 0)}
                </TableCell>
                <TableCell sx={{ color: o.direction === 'BUY' ? 'success.main' : 'error.main', fontWeight: 600 }}>{o.direction === 'BUY' ? 'Buy' : 'Sell'}</TableCell>
                <TableCell align="right" sx={{ fontVariantNumeric: 'tabular-nums' }}>
                  {formatOrderPrice(o.price, o.tick_size)}
                </TableCell>
                <TableCell>
                  <Chip size="small" variant="outlined" label={stateLabel(o.state)} color={o.state === EDITABLE_STATE ? 'primary' : 'default'} />
                </TableCell>
                <TableCell>{o.broker.name}</TableCell>
                <TableCell sx={{ whiteSpace: 'nowrap', fontVariantNumeric: 'tabular-nums' }} title={o.created_at}>
                  {formatDateTime(o.created_at)}
                </TableCell>
                <TableCell sx={{ whiteSpace: 'nowrap', fontVariantNumeric: 'tabular-nums' }} title={o.updated_at}>
                  {formatDateTime(o.updated_at)}
                </TableCell>
                {canEdit && (
                  <TableCell align="right" sx={{ width: 48 }}>
                    {o.state === EDITABLE_STATE && (
                      <IconButton
                        size="small"
                        aria-label={`Edit limit price of order ${shortOrderId(o.order_id)}`}
                        aria-haspopup="dialog"
                        disabled={opening !== null}
                        onClick={() => edit(o)}
                      >
                        {opening === o.order_id ? <CircularProgress size={18} aria-label="Opening" /> : <EditOutlined fontSize="small" />}
                      </IconButton>
                    )}
                  </TableCell>
                )}
              </TableRow>
            ))}
          </TableBody>
        </Table>
        <TablePagination
          component="div"
          count={orders.data?.total_items ?? 0}
          page={page}
          rowsPerPage={size}
          rowsPerPageOptions={PAGE_SIZES}
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
