import { useState } from 'react';
import Alert from '@mui/material/Alert';
import Autocomplete from '@mui/material/Autocomplete';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import CircularProgress from '@mui/material/CircularProgress';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogContentText from '@mui/material/DialogContentText';
import DialogTitle from '@mui/material/DialogTitle';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import { serverErrorText, serverFieldError } from '@/components/form/form-drawer';
import { useToast } from '@/components/ui/toast';
import { useCounterpartyFilter, useCounterpartyFirms, useSaveCounterpartyFilter, type CounterpartyFilter, type FilterOwner } from '@/lib/api/counterparty-filters';

type Firm = CounterpartyFilter['blocked_companies'][number];

type Props = { owner: FilterOwner; title: string; onClose: () => void };

/** The least score's rule, as the server's ('Must be from 0 to 100'); empty for none. */
export function scoreError(text: string): string | null {
  const t = text.trim();
  if (t === '') return null;
  return /^\d{1,3}$/.test(t) && Number(t) <= 100 ? null : 'Must be from 0 to 100';
}

/**
 * A counterparty filter (issue 29, ADR 0042): the firms never traded with, chosen by
 * name, and the least reliability score of a counterparty firm. The firms blocked are
 * never told, and find nothing of the owner's orders.
 */
export function CounterpartyFilterDialog({ owner, title, onClose }: Props) {
  const filter = useCounterpartyFilter(owner);
  return (
    <Dialog open onClose={onClose} aria-labelledby="counterparty-filter-title" maxWidth="sm" fullWidth>
      <DialogTitle id="counterparty-filter-title">{title}</DialogTitle>
      {filter.isError ? (
        <DialogContent>
          <Alert severity="error">{serverErrorText(filter.error)}</Alert>
        </DialogContent>
      ) : !filter.data ? (
        <DialogContent sx={{ display: 'flex', justifyContent: 'center', py: 4 }}>
          <CircularProgress aria-label="Loading the filter" />
        </DialogContent>
      ) : (
        <FilterForm owner={owner} initial={filter.data} onClose={onClose} />
      )}
    </Dialog>
  );
}

function FilterForm({ owner, initial, onClose }: { owner: FilterOwner; initial: CounterpartyFilter; onClose: () => void }) {
  const firms = useCounterpartyFirms();
  const save = useSaveCounterpartyFilter(owner);
  const { showToast } = useToast();
  const [blocked, setBlocked] = useState<Firm[]>(initial.blocked_companies);
  const [score, setScore] = useState(initial.min_reliability_score === null ? '' : String(initial.min_reliability_score));
  const error = scoreError(score);
  // A firm's own filter never names the firm (the operator's list holds every firm).
  const options = (firms.data ?? []).filter((f) => owner === 'me' || f.company_id !== owner.companyId);
  const submit = () => {
    if (error) return;
    save.mutate(
      { blocked_company_ids: blocked.map((f) => f.company_id), min_reliability_score: score.trim() === '' ? null : Number(score) },
      {
        onSuccess: () => {
          showToast({ message: 'Counterparty filter saved.' });
          onClose();
        },
      },
    );
  };
  const saveError = save.error && !serverFieldError(save.error, 'min_reliability_score') ? serverErrorText(save.error) : null;
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <DialogContent>
        <Stack spacing={2.5}>
          <DialogContentText>
            No order of the firms chosen is matched, in either direction, and no RFQ goes between them. They are never told: to them it looks as if nothing were there.
          </DialogContentText>
          {saveError && <Alert severity="error">{saveError}</Alert>}
          <Autocomplete
            multiple
            options={options}
            value={blocked}
            loading={firms.isPending}
            onChange={(_, v) => setBlocked(v)}
            isOptionEqualToValue={(a, b) => a.company_id === b.company_id}
            getOptionLabel={(f) => f.name}
            filterSelectedOptions
            renderInput={(params) => (
              <TextField
                {...params}
                label="Firms never to trade with"
                helperText={serverFieldError(save.error, 'blocked_company_ids') ?? (blocked.length === 0 ? 'None: every firm' : ' ')}
                error={serverFieldError(save.error, 'blocked_company_ids') !== undefined}
              />
            )}
          />
          <TextField
            label="Least reliability score of a counterparty firm"
            value={score}
            onChange={(e) => setScore(e.target.value)}
            error={error !== null || serverFieldError(save.error, 'min_reliability_score') !== undefined}
            helperText={error ?? serverFieldError(save.error, 'min_reliability_score') ?? 'From 0 to 100; empty for none'}
            slotProps={{ htmlInput: { inputMode: 'numeric' } }}
          />
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>Cancel</Button>
        <Button type="submit" variant="contained" disabled={error !== null || save.isPending}>
          Save filter
        </Button>
      </DialogActions>
    </form>
  );
}

/** What a filter holds, in a sentence. */
export function filterSummary(f: CounterpartyFilter): string {
  const firms = f.blocked_companies.length === 0 ? 'No firm is blocked' : `Never trades with ${f.blocked_companies.map((c) => c.name).join(', ')}`;
  const score = f.min_reliability_score === null ? 'any reliability score' : `counterparty firms scoring ${f.min_reliability_score} or more`;
  return `${firms}; ${score}.`;
}

/** A filter's section on a page: what it holds, and its dialog to change it. */
export function CounterpartyFilterSection({ owner, title, description }: { owner: FilterOwner; title: string; description: string }) {
  const filter = useCounterpartyFilter(owner);
  const [open, setOpen] = useState(false);
  return (
    <Paper variant="outlined" sx={{ p: 2 }} component="section" aria-label={title}>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ alignItems: { sm: 'center' }, justifyContent: 'space-between' }}>
        <Box>
          <Typography sx={{ fontWeight: 600 }}>{title}</Typography>
          <Typography variant="body2" color="text.secondary">
            {description}
          </Typography>
          <Typography variant="body2" sx={{ mt: 0.5 }} data-testid="filter-summary">
            {filter.data ? filterSummary(filter.data) : filter.isError ? serverErrorText(filter.error) : 'Loading…'}
          </Typography>
        </Box>
        <Button variant="outlined" onClick={() => setOpen(true)} sx={{ flexShrink: 0 }}>
          Edit filter
        </Button>
      </Stack>
      {open && <CounterpartyFilterDialog owner={owner} title={title} onClose={() => setOpen(false)} />}
    </Paper>
  );
}
