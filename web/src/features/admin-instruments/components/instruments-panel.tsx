import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { zodResolver } from '@hookform/resolvers/zod';
import Chip from '@mui/material/Chip';
import IconButton from '@mui/material/IconButton';
import MenuItem from '@mui/material/MenuItem';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableContainer from '@mui/material/TableContainer';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import TableSortLabel from '@mui/material/TableSortLabel';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import EditOutlined from '@mui/icons-material/EditOutlined';
import History from '@mui/icons-material/History';
import ShowChart from '@mui/icons-material/ShowChart';
import { FormDrawer, serverFieldError } from '@/components/form/form-drawer';
import { FormSwitch, FormTextField } from '@/components/form/form-fields';
import { AdminPage } from '@/components/layout/admin-page';
import { useToast } from '@/components/ui/toast';
import type { Instrument } from '@/lib/api/dto';
import { dec, decimalsOf, toFixed } from '@/lib/decimal';
import { formatDateTime } from '@/lib/format-date';
import { useDebounced } from '@/lib/use-debounced';
import { useTopic } from '@/lib/realtime';
import type { BandFrame } from '@/lib/api/get-instrument';
import { useCreateInstrument } from '../api/create-instrument';
import { useAdminInstruments, type InstrumentFilters, type SortBy } from '../api/get-instruments';
import { useUpdateInstrument } from '../api/update-instrument';
import { BandChartDialog } from './band-chart-dialog';
import { SettingsHistoryDialog } from './settings-history-dialog';
import { BAND_TICKS, instrumentFormSchema, instrumentRequest, otherSide, toInstrumentForm, type InstrumentForm } from '../lib/instrument-form';

/** Admin spec section 9: the name filter is debounced 500 ms. */
export const NAME_FILTER_DEBOUNCE_MS = 500;

const price = (value: number, tick: number) => toFixed(dec(value), decimalsOf(dec(tick)));

/**
 * How many rows follow their instrument's band from its book frames (issue 28.20): a
 * session holds at most 64 subscriptions, so the first active ones on the page; the
 * others show the band as read.
 */
const LIVE_ROWS = 40;

/** Best bid, best offer and status of a row, moved by the instrument's book frames when `live`. */
function BandCells({ instrument: i, live }: { instrument: Instrument; live: boolean }) {
  const [pushed, setPushed] = useState<BandFrame | null>(null);
  useTopic(live ? `/topic/instruments/${i.instrument_id}/book` : null, (frame) => setPushed(frame as BandFrame));
  // A frame is newer than the row only until the list is read again (after an edit).
  const band = pushed && pushed.tick_size === i.tick_size ? pushed : i;
  return (
    <>
      <TableCell sx={{ fontVariantNumeric: 'tabular-nums' }}>{price(band.min_tick_price, i.tick_size)}</TableCell>
      <TableCell sx={{ fontVariantNumeric: 'tabular-nums' }}>{price(band.max_tick_price, i.tick_size)}</TableCell>
      <TableCell>
        <Stack direction="row" spacing={0.5}>
          <Chip size="small" variant="outlined" label={i.active ? 'Active' : 'Inactive'} color={i.active ? 'success' : 'default'} />
          {i.is_sandbox && <Chip size="small" variant="outlined" label="Sandbox" />}
          {i.reversed_spread && <Chip size="small" variant="outlined" label="Reversed" />}
          {band.prices_stale && <Chip size="small" label="Prices stale" color="error" title={`No price since ${formatDateTime(i.band_seen_at)}`} />}
        </Stack>
      </TableCell>
    </>
  );
}

const COLUMNS: { label: string; sort?: SortBy }[] = [
  { label: 'Name', sort: 'name' },
  { label: 'Term', sort: 'term' },
  { label: 'Exchange', sort: 'exchange_id' },
  { label: 'Tick' },
  { label: 'Min block' },
  { label: 'Best bid' },
  { label: 'Best offer' },
  { label: 'Status' },
  { label: 'Updated', sort: 'updated_at' },
];

/** Admin spec section 2: the Instruments panel with its filters and sorting. */
export function InstrumentsPanel() {
  const [name, setName] = useState('');
  const [exchangeId, setExchangeId] = useState('');
  const [active, setActive] = useState<InstrumentFilters['active']>('');
  const [sort, setSort] = useState<{ sort_by: SortBy; order_by: 'ASC' | 'DESC' }>({ sort_by: 'name', order_by: 'ASC' });
  const debouncedName = useDebounced(name, NAME_FILTER_DEBOUNCE_MS);
  const debouncedExchange = useDebounced(exchangeId, NAME_FILTER_DEBOUNCE_MS);
  const instruments = useAdminInstruments({ name: debouncedName, exchange_id: debouncedExchange, active, ...sort });
  const [editing, setEditing] = useState<{ instrument: Instrument | null } | null>(null);
  const [charting, setCharting] = useState<Instrument | null>(null);
  const [settingsOf, setSettingsOf] = useState<Instrument | null>(null);
  const items = instruments.data?.items ?? [];

  const filters = (
    <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2}>
      <TextField label="Name" value={name} onChange={(e) => setName(e.target.value)} size="small" placeholder="Part of the name" />
      <TextField label="Exchange id" value={exchangeId} onChange={(e) => setExchangeId(e.target.value)} size="small" />
      <TextField select label="Active" value={active} onChange={(e) => setActive(e.target.value as InstrumentFilters['active'])} size="small" sx={{ minWidth: 140 }}>
        <MenuItem value="">All</MenuItem>
        <MenuItem value="true">Active</MenuItem>
        <MenuItem value="false">Inactive</MenuItem>
      </TextField>
    </Stack>
  );

  return (
    <AdminPage
      title="Instruments"
      createLabel="Create instrument"
      onCreate={() => setEditing({ instrument: null })}
      filters={filters}
      query={instruments}
      empty={items.length === 0}
      drawer={
        <>
          {editing && <InstrumentDrawer instrument={editing.instrument} onClose={() => setEditing(null)} />}
          {charting && <BandChartDialog instrument={charting} onClose={() => setCharting(null)} />}
          {settingsOf && <SettingsHistoryDialog instrument={settingsOf} onClose={() => setSettingsOf(null)} />}
        </>
      }
      emptyText="No instrument matches these filters."
    >
      <TableContainer component={Paper} variant="outlined">
        <Table size="small" aria-label="Instruments">
          <TableHead>
            <TableRow>
              {COLUMNS.map((c) => (
                <TableCell key={c.label} sortDirection={c.sort && sort.sort_by === c.sort ? (sort.order_by === 'ASC' ? 'asc' : 'desc') : false}>
                  {c.sort ? (
                    <TableSortLabel
                      active={sort.sort_by === c.sort}
                      direction={sort.sort_by === c.sort && sort.order_by === 'DESC' ? 'desc' : 'asc'}
                      onClick={() => setSort((s) => ({ sort_by: c.sort as SortBy, order_by: s.sort_by === c.sort && s.order_by === 'ASC' ? 'DESC' : 'ASC' }))}
                    >
                      {c.label}
                    </TableSortLabel>
                  ) : (
                    c.label
                  )}
                </TableCell>
              ))}
              <TableCell />
            </TableRow>
          </TableHead>
          <TableBody>
            {items.map((i, n) => (
              <TableRow key={i.instrument_id} hover>
                <TableCell sx={{ fontWeight: 600 }}>{i.name}</TableCell>
                <TableCell>{i.term}</TableCell>
                <TableCell>{i.exchange_id}</TableCell>
                <TableCell>{String(i.tick_size)}</TableCell>
                <TableCell>{i.min_quantity}</TableCell>
                <BandCells key={i.updated_at} instrument={i} live={i.active && n < LIVE_ROWS} />
                <TableCell>{formatDateTime(i.updated_at)}</TableCell>
                <TableCell align="right" sx={{ whiteSpace: 'nowrap' }}>
                  <IconButton size="small" aria-label={`Band chart of ${i.name}`} onClick={() => setCharting(i)}>
                    <ShowChart fontSize="small" />
                  </IconButton>
                  <IconButton size="small" aria-label={`Settings of ${i.name}`} onClick={() => setSettingsOf(i)}>
                    <History fontSize="small" />
                  </IconButton>
                  <IconButton size="small" aria-label={`Edit ${i.name}`} onClick={() => setEditing({ instrument: i })}>
                    <EditOutlined fontSize="small" />
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

type TextKey = Exclude<keyof InstrumentForm, 'active' | 'is_sandbox' | 'reversed_spread'>;

function InstrumentDrawer({ instrument, onClose }: { instrument: Instrument | null; onClose: () => void }) {
  const form = useForm<InstrumentForm>({ resolver: zodResolver(instrumentFormSchema), mode: 'all', defaultValues: toInstrumentForm(instrument) });
  const { control } = form;
  const create = useCreateInstrument();
  const update = useUpdateInstrument();
  const save = instrument ? update : create;
  const { showToast } = useToast();
  const field = (k: TextKey, label: string, extra: object = {}) => (
    <FormTextField control={control} name={k} label={label} serverError={serverFieldError(save.error, k)} {...extra} />
  );
  // Admin spec section 4: one side of the band moves the other 10 ticks away.
  const band = (k: 'min_tick_price' | 'max_tick_price', label: string) => (
    <FormTextField
      control={control}
      name={k}
      label={label}
      deps={[k === 'min_tick_price' ? 'max_tick_price' : 'min_tick_price']}
      onValueChange={() => {
        const other = otherSide(k, form.getValues(k), form.getValues('tick_size'));
        if (other !== null) form.setValue(k === 'min_tick_price' ? 'max_tick_price' : 'min_tick_price', other);
      }}
      serverError={serverFieldError(save.error, k)}
      slotProps={{ htmlInput: { inputMode: 'decimal' } }}
      required
    />
  );

  const submit = (v: InstrumentForm) => {
    const body = instrumentRequest(v);
    const onSuccess = (i: Instrument) => {
      showToast({ message: instrument ? `${i.name} updated.` : `${i.name} created.` });
      onClose();
    };
    if (instrument) update.mutate({ id: instrument.instrument_id, body }, { onSuccess });
    else create.mutate(body, { onSuccess });
  };

  return (
    <FormDrawer
      form={form}
      title={instrument ? `Edit ${instrument.name}` : 'Create instrument'}
      submitLabel={instrument ? 'Save changes' : 'Create instrument'}
      pending={save.isPending}
      error={save.error}
      onSubmit={submit}
      onClose={onClose}
    >
      {field('name', 'Name', { required: true })}
      <Stack direction="row" spacing={2}>
        {field('term', 'Term', { required: true, placeholder: 'Dec26-Mar27' })}
        {field('currency', 'Currency', { required: true })}
      </Stack>
      <Stack direction="row" spacing={2}>
        {field('tick_size', 'Tick size', { required: true, slotProps: { htmlInput: { inputMode: 'decimal' } } })}
        {field('exchange_tick_size', 'Exchange tick size', { helperText: 'Empty when the exchange sets none', slotProps: { htmlInput: { inputMode: 'decimal' } } })}
      </Stack>
      <Stack direction="row" spacing={2}>
        {field('min_quantity', 'Minimum block size', { required: true, slotProps: { htmlInput: { inputMode: 'numeric' } } })}
        {field('prices_stale_after', 'Stale after (seconds)', { helperText: 'Empty: no stale-price guard', slotProps: { htmlInput: { inputMode: 'numeric' } } })}
      </Stack>
      <Typography variant="subtitle2" sx={{ mb: -1 }}>
        Electronic band (best bid and best offer, {BAND_TICKS} ticks apart when one is set)
      </Typography>
      <Stack direction="row" spacing={2}>
        {band('min_tick_price', 'Best bid')}
        {band('max_tick_price', 'Best offer')}
      </Stack>
      <Stack direction="row" spacing={2}>
        {field('exchange_id', 'Exchange id', { required: true })}
        {field('exchange_iso_code', 'Exchange MIC')}
      </Stack>
      {field('exchange', 'Exchange name')}
      <Stack direction="row" spacing={2}>
        {field('bbg_code', 'Bloomberg code')}
        {field('exchange_instrument_id', 'Exchange instrument id')}
      </Stack>
      {field('country', 'Country')}
      {field('description', 'Description', { multiline: true, minRows: 2 })}
      <Stack direction="row" spacing={1} useFlexGap sx={{ flexWrap: 'wrap' }}>
        <FormSwitch control={control} name="active" label="Active" />
        <FormSwitch control={control} name="is_sandbox" label="Sandbox" />
        <FormSwitch control={control} name="reversed_spread" label="Reversed spread" />
      </Stack>
    </FormDrawer>
  );
}
