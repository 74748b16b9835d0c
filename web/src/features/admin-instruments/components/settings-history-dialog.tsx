import { useEffect, useState } from 'react';
import { useForm } from 'react-hook-form';
import { zodResolver } from '@hookform/resolvers/zod';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Chip from '@mui/material/Chip';
import CircularProgress from '@mui/material/CircularProgress';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogTitle from '@mui/material/DialogTitle';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableContainer from '@mui/material/TableContainer';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import Typography from '@mui/material/Typography';
import { serverErrorText, serverFieldError } from '@/components/form/form-drawer';
import { FormTextField } from '@/components/form/form-fields';
import { visuallyHidden } from '@/components/ui/visually-hidden';
import { ApiError } from '@/lib/api-errors';
import type { Instrument } from '@/lib/api/dto';
import { dec, toPlain } from '@/lib/decimal';
import { formatDateTime } from '@/lib/format-date';
import { useCancelInstrumentSetting } from '../api/cancel-instrument-setting';
import { useInstrumentSettings, type InstrumentSetting, type SettingState } from '../api/get-instrument-settings';
import { useScheduleInstrumentSetting } from '../api/schedule-instrument-setting';
import { settingFormSchema, settingRequest, toSettingForm, type SettingForm } from '../lib/setting-form';

const STATES: Record<SettingState, { label: string; color: 'info' | 'success' | 'default' }> = {
  SCHEDULED: { label: 'Scheduled', color: 'info' },
  IN_FORCE: { label: 'In force', color: 'success' },
  SUPERSEDED: { label: 'Superseded', color: 'default' },
};

const COLUMNS = ['Effective from', 'Tick size', 'Exchange tick', 'Minimum block', 'State', 'Set by'];

/** A decimal as sent (a JSON number), in its plain exact text: 0.005, never 5e-3. */
const decimalText = (value: number) => toPlain(dec(value));

/** A server error for an alert, unless its field errors already say it under the fields. */
function alertText(error: unknown): string | null {
  if (!error) return null;
  return error instanceof ApiError && error.fieldErrors.length > 0 ? null : serverErrorText(error);
}

/** Now, as a `datetime-local` value to the minute (the earliest the picker offers). */
function localNow(): string {
  const d = new Date();
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/**
 * An instrument's dated settings (tick size, exchange tick size, minimum block): the version in
 * force, the past ones, and the changes scheduled to take effect by themselves at their time,
 * which can be cancelled until then; below, a form to schedule another.
 */
export function SettingsHistoryDialog({ instrument, onClose }: { instrument: Instrument; onClose: () => void }) {
  const settings = useInstrumentSettings(instrument.instrument_id);
  const cancel = useCancelInstrumentSetting();
  const [notice, setNotice] = useState<string | null>(null);
  // What the form holds is never dropped by a stray Esc or click beside the dialog.
  const [typed, setTyped] = useState(false);
  const items = settings.data ?? [];
  const inForce = items.find((s) => s.state === 'IN_FORCE') ?? null;

  const cancelChange = (s: InstrumentSetting) => {
    if (cancel.isPending) return;
    setNotice(null);
    cancel.mutate(
      { instrumentId: instrument.instrument_id, settingId: s.setting_id },
      { onSuccess: () => setNotice(`Change of ${formatDateTime(s.effective_from)} cancelled.`) },
    );
  };
  const cancelError = alertText(cancel.error);

  return (
    <Dialog open onClose={() => !typed && onClose()} aria-labelledby="settings-history-title" maxWidth="md" fullWidth>
      <DialogTitle id="settings-history-title">{`Settings of ${instrument.name}`}</DialogTitle>
      <DialogContent>
        <Stack spacing={2}>
          {settings.isError ? (
            <Alert severity="error">{serverErrorText(settings.error)}</Alert>
          ) : settings.isPending ? (
            <Box sx={{ display: 'flex', justifyContent: 'center', py: 3 }}>
              <CircularProgress aria-label="Loading the settings" />
            </Box>
          ) : items.length === 0 ? (
            <Typography color="text.secondary">No settings recorded yet.</Typography>
          ) : (
            <TableContainer component={Paper} variant="outlined">
              <Table size="small" aria-label="Settings history">
                <TableHead>
                  <TableRow>
                    {COLUMNS.map((c) => (
                      <TableCell key={c}>{c}</TableCell>
                    ))}
                    <TableCell>
                      <Typography component="span" sx={visuallyHidden}>
                        Actions
                      </Typography>
                    </TableCell>
                  </TableRow>
                </TableHead>
                <TableBody>
                  {items.map((s) => {
                    const state = STATES[s.state];
                    const when = formatDateTime(s.effective_from);
                    return (
                      <TableRow key={s.setting_id} selected={s.state === 'IN_FORCE'}>
                        <TableCell sx={{ whiteSpace: 'nowrap' }}>{when}</TableCell>
                        <TableCell sx={{ fontVariantNumeric: 'tabular-nums' }}>{decimalText(s.tick_size)}</TableCell>
                        <TableCell sx={{ fontVariantNumeric: 'tabular-nums' }}>{s.exchange_tick_size === null ? '—' : decimalText(s.exchange_tick_size)}</TableCell>
                        <TableCell sx={{ fontVariantNumeric: 'tabular-nums' }}>{s.min_quantity}</TableCell>
                        <TableCell>
                          <Chip size="small" variant="outlined" label={state.label} color={state.color} />
                        </TableCell>
                        <TableCell>{s.created_by_email ?? '—'}</TableCell>
                        <TableCell align="right" sx={{ whiteSpace: 'nowrap' }}>
                          {s.state === 'SCHEDULED' && (
                            <Button size="small" color="error" aria-label={`Cancel the change of ${when}`} disabled={cancel.isPending} onClick={() => cancelChange(s)}>
                              Cancel change
                            </Button>
                          )}
                        </TableCell>
                      </TableRow>
                    );
                  })}
                </TableBody>
              </Table>
            </TableContainer>
          )}
          {cancelError && <Alert severity="error">{cancelError}</Alert>}
          {notice && (
            <Alert severity="success" role="status">
              {notice}
            </Alert>
          )}
          {settings.isSuccess && (
            // Started anew from the version in force whenever a read shows another in force.
            <ScheduleForm key={inForce?.setting_id ?? 'none'} instrument={instrument} inForce={inForce ?? instrument} onTyped={setTyped} onScheduled={setNotice} onSubmitting={() => setNotice(null)} />
          )}
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>Close</Button>
      </DialogActions>
    </Dialog>
  );
}

type ScheduleFormProps = {
  instrument: Instrument;
  /** The settings in force, which the form starts from. */
  inForce: Pick<InstrumentSetting, 'tick_size' | 'exchange_tick_size' | 'min_quantity'>;
  onTyped: (typed: boolean) => void;
  onScheduled: (message: string) => void;
  onSubmitting: () => void;
};

function ScheduleForm({ instrument, inForce, onTyped, onScheduled, onSubmitting }: ScheduleFormProps) {
  const form = useForm<SettingForm>({ resolver: zodResolver(settingFormSchema), mode: 'all', defaultValues: toSettingForm(inForce) });
  const { control } = form;
  const typed = form.formState.isDirty;
  useEffect(() => onTyped(typed), [typed, onTyped]);
  const schedule = useScheduleInstrumentSetting();
  const submit = (v: SettingForm) => {
    if (schedule.isPending) return;
    onSubmitting();
    schedule.mutate(
      { instrumentId: instrument.instrument_id, body: settingRequest(v) },
      {
        onSuccess: (s) => {
          onScheduled(`Change scheduled for ${formatDateTime(s.effective_from)}.`);
          // The settings stay as typed, ready for another change; the time is chosen again.
          form.reset({ ...form.getValues(), effective_from: '' });
        },
      },
    );
  };
  const error = alertText(schedule.error);
  const serverError = (field: keyof SettingForm) => serverFieldError(schedule.error, field);
  const decimalInput = { htmlInput: { inputMode: 'decimal' as const, autoComplete: 'off' } };
  return (
    <Paper variant="outlined" component="form" noValidate aria-label="Schedule a change" onSubmit={form.handleSubmit(submit)} sx={{ p: 2 }}>
      <Stack spacing={2}>
        <Typography variant="subtitle2" component="h3">
          Schedule a change
        </Typography>
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ alignItems: 'flex-start' }}>
          <FormTextField
            control={control}
            name="effective_from"
            label="Effective from"
            type="datetime-local"
            size="small"
            required
            serverError={serverError('effective_from')}
            helperText="Your local time"
            slotProps={{ inputLabel: { shrink: true }, htmlInput: { min: localNow(), step: 60 } }}
          />
          <FormTextField control={control} name="tick_size" label="Tick size" size="small" required serverError={serverError('tick_size')} slotProps={decimalInput} />
        </Stack>
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ alignItems: 'flex-start' }}>
          <FormTextField
            control={control}
            name="exchange_tick_size"
            label="Exchange tick size"
            size="small"
            helperText="Optional: empty when the exchange sets none"
            serverError={serverError('exchange_tick_size')}
            slotProps={decimalInput}
          />
          <FormTextField
            control={control}
            name="min_quantity"
            label="Minimum block"
            size="small"
            required
            serverError={serverError('min_quantity')}
            slotProps={{ htmlInput: { inputMode: 'numeric', autoComplete: 'off' } }}
          />
        </Stack>
        {error && <Alert severity="error">{error}</Alert>}
        <Box sx={{ display: 'flex', justifyContent: 'flex-end' }}>
          <Button type="submit" variant="contained" disabled={!form.formState.isValid || schedule.isPending}>
            Schedule
          </Button>
        </Box>
      </Stack>
    </Paper>
  );
}
