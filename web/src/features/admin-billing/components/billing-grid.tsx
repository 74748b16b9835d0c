import { useState } from 'react';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import CircularProgress from '@mui/material/CircularProgress';
import LinearProgress from '@mui/material/LinearProgress';
import Paper from '@mui/material/Paper';
import Tooltip from '@mui/material/Tooltip';
import Typography from '@mui/material/Typography';
import FileDownloadOutlined from '@mui/icons-material/FileDownloadOutlined';
import FilterListOutlined from '@mui/icons-material/FilterListOutlined';
import ViewColumnOutlined from '@mui/icons-material/ViewColumnOutlined';
import {
  ColumnsPanelTrigger,
  DataGrid,
  FilterPanelTrigger,
  gridFilteredTopLevelRowCountSelector,
  Toolbar,
  ToolbarButton,
  useGridApiContext,
  useGridSelector,
  type GridColDef,
} from '@mui/x-data-grid';
import { dec, toGrouped } from '@/lib/decimal';
import { allocationSummary, formatPrice } from '@/lib/trading-format';
import type { BillingItem } from '../api/get-billing';
import { allocationsText, BILLING_CSV_OPTIONS, billingRowId, csvText, decimalText, formatUtcDateTime } from '../lib/billing-format';

/** Admin spec section 9: grid page sizes 10, 25, 50 and 100, default 50. */
export const PAGE_SIZES = [10, 25, 50, 100];
const DEFAULT_PAGE_SIZE = 50;

type TextField = { [K in keyof BillingItem]: BillingItem[K] extends string | null ? K : never }[keyof BillingItem];

/** A text column: shown as sent, exported with `csvText`'s formula guard. */
const text = (field: TextField, headerName: string, width: number): GridColDef<BillingItem> => ({
  field,
  headerName,
  width,
  valueFormatter: (value: string | null) => csvText(value),
  renderCell: ({ row }) => row[field] ?? '',
});

/** A decimal column: the exact decimal, right-aligned, sorted and filtered as a number. */
const decimal = (field: 'tick_size' | 'price', headerName: string, width: number): GridColDef<BillingItem> => ({
  field,
  headerName,
  width,
  type: 'number',
  valueFormatter: (value: number) => decimalText(value),
});

/**
 * One column per billing item field (admin spec section 3). The spec lists no headers, so
 * they name the fields. The trade leads (when, who, what, which side, how much, at what
 * price), then who cleared it and the instrument's references; the ids come last and are
 * hidden until the Columns panel shows them (`BILLING_HIDDEN`). The CSV has every column.
 */
export const BILLING_COLUMNS: GridColDef<BillingItem>[] = [
  {
    field: 'match_request_created_at',
    headerName: 'Match request created',
    width: 190,
    type: 'dateTime',
    valueGetter: (value: string) => new Date(value),
    valueFormatter: (value: Date) => formatUtcDateTime(value),
  },
  text('company_name', 'Company', 140),
  text('instrument_name', 'Instrument', 230),
  {
    field: 'direction',
    headerName: 'Direction',
    width: 100,
    type: 'singleSelect',
    valueOptions: ['BUY', 'SELL'],
  },
  {
    field: 'quantity',
    headerName: 'Quantity',
    width: 110,
    type: 'number',
    // Exported plain (1500); shown grouped (1,500).
    valueFormatter: (value: number) => String(value),
    renderCell: ({ value }) => toGrouped(dec(value as number), 0),
  },
  // Shown with the instrument's tick decimals (0.500 on a 0.005 tick); exported exact.
  { ...decimal('price', 'Price', 110), renderCell: ({ row }) => formatPrice(row.price, row.tick_size) },
  // How the side's trader split it across the firm's accounts (ADR 0045): shown grouped
  // ('HAL-MACRO 1,000; HAL-RATES 500'), filtered and sorted as that text, exported plain.
  {
    field: 'allocations',
    headerName: 'Allocations',
    // Two accounts read whole ('HAL-MACRO 1,000; HAL-RATES 500'); more show in the cell's title.
    width: 280,
    valueGetter: (value: BillingItem['allocations'] | undefined) => allocationSummary(value ?? []),
    valueFormatter: (_: string, row: BillingItem) => allocationsText(row.allocations),
    renderCell: ({ value }) => (
      <Box component="span" title={value as string} sx={{ overflow: 'hidden', textOverflow: 'ellipsis' }}>
        {value as string}
      </Box>
    ),
  },
  text('first_name', 'First name', 120),
  text('last_name', 'Last name', 120),
  text('broker_name', 'Broker', 130),
  text('give_up_broker_name', 'Give-up broker', 140),
  text('term', 'Term', 120),
  decimal('tick_size', 'Tick size', 100),
  text('exchange', 'Exchange', 170),
  text('exchange_iso_code', 'Exchange ISO code', 150),
  text('bbg_code', 'BBG code', 150),
  text('exchange_instrument_id', 'Exchange instrument ID', 180),
  text('user_id', 'User ID', 300),
  text('broker_id', 'Broker ID', 300),
  text('match_request_id', 'Match request ID', 300),
  text('order_id', 'Order ID', 300),
  text('payment_order_id', 'Payment order ID', 300),
];

/** The id columns, hidden at first: a person reads the trade; the CSV carries them. */
export const BILLING_HIDDEN = { user_id: false, broker_id: false, match_request_id: false, order_id: false, payment_order_id: false };

/**
 * The grid's toolbar: column and filter panels, and the CSV export. The export is built
 * synchronously and can take a moment on a long list, so the button shows a progress
 * indicator first and the export runs once it has been painted.
 */
function BillingToolbar() {
  const apiRef = useGridApiContext();
  const rows = useGridSelector(apiRef, gridFilteredTopLevelRowCountSelector);
  const [exporting, setExporting] = useState(false);
  const exportCsv = () => {
    setExporting(true);
    requestAnimationFrame(() =>
      setTimeout(() => {
        try {
          apiRef.current.exportDataAsCsv(BILLING_CSV_OPTIONS);
        } finally {
          setExporting(false);
        }
      }, 0),
    );
  };
  return (
    <Box sx={{ position: 'relative' }}>
      <Toolbar>
        <Typography variant="body2" color="text.secondary" sx={{ flex: 1, mx: 0.5 }}>
          {rows === 1 ? '1 item' : `${rows} items`}
        </Typography>
        <Tooltip title="Columns">
          <ColumnsPanelTrigger render={<ToolbarButton />}>
            <ViewColumnOutlined fontSize="small" />
          </ColumnsPanelTrigger>
        </Tooltip>
        <Tooltip title="Filters">
          <FilterPanelTrigger render={<ToolbarButton />}>
            <FilterListOutlined fontSize="small" />
          </FilterPanelTrigger>
        </Tooltip>
        <Button
          size="small"
          variant="outlined"
          onClick={exportCsv}
          disabled={exporting}
          startIcon={exporting ? <CircularProgress size={16} aria-hidden /> : <FileDownloadOutlined />}
          sx={{ ml: 1 }}
        >
          {exporting ? 'Exporting…' : 'Export CSV'}
        </Button>
      </Toolbar>
      {exporting && <LinearProgress aria-label="Exporting billing CSV" sx={{ position: 'absolute', left: 0, right: 0, bottom: 0 }} />}
    </Box>
  );
}

function NoTrades() {
  return (
    <Box sx={{ display: 'grid', placeItems: 'center', height: '100%' }}>
      <Typography color="text.secondary">No trade to bill yet.</Typography>
    </Box>
  );
}

/** Admin spec section 2: billing items in a grid paged in the browser (10, 25, 50 or 100 rows, 50 first), exportable to CSV. */
export function BillingGrid({ items, loading }: { items: BillingItem[]; loading: boolean }) {
  return (
    <Paper variant="outlined" sx={{ height: 'max(480px, calc(100vh - 240px))', width: '100%', overflow: 'hidden' }}>
      <DataGrid
        aria-label="Billing"
        rows={items}
        columns={BILLING_COLUMNS}
        getRowId={billingRowId}
        loading={loading}
        density="compact"
        showToolbar
        rowSelection={false}
        disableRowSelectionOnClick
        pageSizeOptions={PAGE_SIZES}
        initialState={{ pagination: { paginationModel: { pageSize: DEFAULT_PAGE_SIZE, page: 0 } }, columns: { columnVisibilityModel: BILLING_HIDDEN } }}
        slots={{ toolbar: BillingToolbar, noRowsOverlay: NoTrades }}
        slotProps={{ loadingOverlay: { variant: 'linear-progress', noRowsVariant: 'skeleton' } }}
        sx={{ border: 0 }}
      />
    </Paper>
  );
}
