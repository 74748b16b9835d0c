import { useId, useMemo } from 'react';
import { Controller, useFieldArray, useForm, useWatch } from 'react-hook-form';
import { zodResolver } from '@hookform/resolvers/zod';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Checkbox from '@mui/material/Checkbox';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogTitle from '@mui/material/DialogTitle';
import FormControl from '@mui/material/FormControl';
import FormControlLabel from '@mui/material/FormControlLabel';
import FormGroup from '@mui/material/FormGroup';
import FormHelperText from '@mui/material/FormHelperText';
import FormLabel from '@mui/material/FormLabel';
import IconButton from '@mui/material/IconButton';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import Add from '@mui/icons-material/Add';
import DeleteOutlined from '@mui/icons-material/DeleteOutlined';
import { DateField } from '@/components/form/date-field';
import { serverErrorText, serverFieldError } from '@/components/form/form-drawer';
import { FormTextField } from '@/components/form/form-fields';
import { useToast } from '@/components/ui/toast';
import { ApiError } from '@/lib/api-errors';
import { EXCHANGE_DAYS } from '@/lib/api/get-platform-status';
import type { Exchange } from '../api/get-exchanges';
import { useSaveExchange } from '../api/save-exchange';
import { exchangeErrors, exchangeFormSchema, exchangeRequest, timeZoneSuggestions, toExchangeForm, type ExchangeForm } from '../lib/exchange-form';

/** The fields the server names in its 400 (a holiday's own, `holidays[1].date`, counts as the list's). */
const FIELDS = ['mic', 'name', 'time_zone', 'open_time', 'close_time', 'parent_orders_from', 'days', 'holidays'];
const isListField = (field: string) => field === 'holidays' || field.startsWith('holidays[') || field.startsWith('holidays.');

/** The server's detail for an alert, unless its field errors say it under the fields. */
function alertText(error: unknown): string | null {
  if (!error) return null;
  const shown = error instanceof ApiError && error.fieldErrors.some((e) => FIELDS.includes(e.field) || isListField(e.field));
  return shown ? null : serverErrorText(error);
}

/** The server's messages about the holidays, one line each. */
function holidayServerErrors(error: unknown): string[] {
  return error instanceof ApiError ? error.fieldErrors.filter((e) => isListField(e.field)).map((e) => e.message) : [];
}

type Props = {
  /** The exchange to edit, or null to add one. */
  exchange: Exchange | null;
  onClose: () => void;
};

/**
 * Adds or edits an exchange's calendar (ADR 0052): its MIC (fixed once added), name, time zone,
 * hours, trading days and holidays. Saved with PUT; the server's messages show under their fields.
 */
export function ExchangeDialog({ exchange, onClose }: Props) {
  const title = exchange ? `Edit ${exchange.mic}` : 'Add exchange';
  const form = useForm<ExchangeForm>({ resolver: zodResolver(exchangeFormSchema), mode: 'all', defaultValues: toExchangeForm(exchange) });
  const { control, formState } = form;
  const holidays = useFieldArray({ control, name: 'holidays' });
  const values = useWatch({ control }) as ExchangeForm;
  const save = useSaveExchange();
  const { showToast } = useToast();
  const zonesId = useId();
  const zones = useMemo(() => timeZoneSuggestions(), []);
  // The rules across fields (a day at least, a holiday twice), as the values stand now.
  const crossErrors = exchangeErrors({ ...toExchangeForm(null), ...values, days: values.days ?? [], holidays: values.holidays ?? [] });
  const serverError = (field: keyof ExchangeForm) => serverFieldError(save.error, field);
  const daysError = crossErrors.days ?? serverError('days');
  const listErrors = [crossErrors.holidays, ...holidayServerErrors(save.error)].filter((m): m is string => Boolean(m));
  const error = alertText(save.error);

  // Rows move when one is added or removed: a server message would then stand under another row.
  const reshape = (change: () => void) => {
    save.reset();
    change();
  };

  const submit = (v: ExchangeForm) => {
    if (save.isPending) return;
    const mic = exchange?.mic ?? v.mic.trim();
    save.mutate(
      { mic, body: exchangeRequest(v) },
      {
        onSuccess: (x) => {
          showToast({ message: exchange ? `${x.name} (${x.mic}) updated.` : `${x.name} (${x.mic}) added.` });
          onClose();
        },
      },
    );
  };

  const time = (name: 'open_time' | 'close_time' | 'parent_orders_from', label: string, deps: ('open_time' | 'close_time' | 'parent_orders_from')[] = []) => (
    <FormTextField
      control={control}
      name={name}
      label={label}
      type="time"
      size="small"
      required
      deps={deps}
      serverError={serverError(name)}
      slotProps={{ inputLabel: { shrink: true }, htmlInput: { step: 60 } }}
    />
  );

  return (
    // A changed form closes through Cancel, never by a stray Esc or click beside it.
    <Dialog open onClose={() => !formState.isDirty && onClose()} aria-labelledby="exchange-dialog-title" maxWidth="sm" fullWidth>
      <DialogTitle id="exchange-dialog-title">{title}</DialogTitle>
      <Box component="form" noValidate aria-label={title} onSubmit={form.handleSubmit(submit)}>
        <DialogContent sx={{ pt: 0 }}>
          <Stack spacing={2.5} sx={{ pt: 1 }}>
            <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ alignItems: 'flex-start' }}>
              <Box sx={{ width: { xs: '100%', sm: 160 }, flexShrink: 0 }}>
                <FormTextField
                  control={control}
                  name="mic"
                  label="MIC"
                  size="small"
                  required
                  disabled={exchange !== null}
                  autoFocus={exchange === null}
                  helperText={exchange ? undefined : 'ISO 10383, e.g. IFEU'}
                  serverError={serverError('mic')}
                  onValueChange={(v) => {
                    // Stored in capitals on both sides (an instrument's MIC too).
                    const upper = String(v).toUpperCase();
                    if (upper !== v) form.setValue('mic', upper, { shouldValidate: true, shouldDirty: true });
                  }}
                  slotProps={{ htmlInput: { autoComplete: 'off', spellCheck: false, maxLength: 4 } }}
                />
              </Box>
              <FormTextField control={control} name="name" label="Name" size="small" required autoFocus={exchange !== null} serverError={serverError('name')} />
            </Stack>
            <FormTextField
              control={control}
              name="time_zone"
              label="Time zone"
              size="small"
              required
              placeholder="Europe/London"
              helperText="An IANA time zone: the hours and holidays are in it"
              serverError={serverError('time_zone')}
              slotProps={{ htmlInput: { list: zones.length > 0 ? zonesId : undefined, autoComplete: 'off', spellCheck: false } }}
            />
            {zones.length > 0 && (
              <datalist id={zonesId}>
                {zones.map((z) => (
                  <option key={z} value={z} />
                ))}
              </datalist>
            )}
            <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ alignItems: 'flex-start' }}>
              {time('open_time', 'Opens', ['close_time', 'parent_orders_from'])}
              {time('close_time', 'Closes', ['open_time', 'parent_orders_from'])}
              {time('parent_orders_from', 'Parent orders from', ['open_time', 'close_time'])}
            </Stack>
            <Controller
              control={control}
              name="days"
              render={({ field }) => (
                <FormControl component="fieldset" error={Boolean(daysError)} variant="standard">
                  <FormLabel component="legend">Trading days</FormLabel>
                  <FormGroup row>
                    {EXCHANGE_DAYS.map((d) => (
                      <FormControlLabel
                        key={d}
                        label={d}
                        control={
                          <Checkbox
                            size="small"
                            name={field.name}
                            checked={field.value.includes(d)}
                            onBlur={field.onBlur}
                            onChange={(e) => field.onChange(e.target.checked ? [...field.value, d] : field.value.filter((x) => x !== d))}
                          />
                        }
                      />
                    ))}
                  </FormGroup>
                  {daysError && <FormHelperText>{daysError}</FormHelperText>}
                </FormControl>
              )}
            />
            <Box>
              <Typography variant="subtitle2" component="h3" id={`${zonesId}-holidays`}>
                Holidays
              </Typography>
              <Stack spacing={1.5} sx={{ mt: 1 }} role="list" aria-labelledby={`${zonesId}-holidays`}>
                {holidays.fields.length === 0 && (
                  <Typography variant="body2" color="text.secondary">
                    None: it trades on every trading day.
                  </Typography>
                )}
                {holidays.fields.map((row, n) => (
                  <Box key={row.id} role="listitem" aria-label={`Holiday ${n + 1}`} sx={{ display: 'flex', gap: 1.5, alignItems: 'flex-start' }}>
                    <Controller
                      control={control}
                      name={`holidays.${n}.date`}
                      render={({ field, fieldState }) => (
                        // Its own width: the name beside it takes what is left, never the date's.
                        <Box sx={{ flex: '0 0 auto' }}>
                          <DateField label={`Holiday ${n + 1} date`} value={field.value} onChange={field.onChange} error={fieldState.error?.message} width={200} />
                        </Box>
                      )}
                    />
                    <FormTextField control={control} name={`holidays.${n}.name`} label={`Holiday ${n + 1} name`} size="small" placeholder="Optional" />
                    <IconButton aria-label={`Remove holiday ${n + 1}`} onClick={() => reshape(() => holidays.remove(n))} sx={{ mt: 0.25 }}>
                      <DeleteOutlined fontSize="small" />
                    </IconButton>
                  </Box>
                ))}
              </Stack>
              {listErrors.map((m) => (
                <FormHelperText key={m} error>
                  {m}
                </FormHelperText>
              ))}
              <Button size="small" startIcon={<Add />} onClick={() => reshape(() => holidays.append({ date: '', name: '' }))} sx={{ mt: 1 }}>
                Add holiday
              </Button>
            </Box>
            {error && (
              <Alert severity="error" role="alert">
                {error}
              </Alert>
            )}
          </Stack>
        </DialogContent>
        <DialogActions sx={{ px: 3, pb: 2 }}>
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" variant="contained" disabled={!formState.isValid || save.isPending}>
            {exchange ? 'Save changes' : 'Add exchange'}
          </Button>
        </DialogActions>
      </Box>
    </Dialog>
  );
}
