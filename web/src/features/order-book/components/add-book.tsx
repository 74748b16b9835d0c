import { useState } from 'react';
import Autocomplete from '@mui/material/Autocomplete';
import Button from '@mui/material/Button';
import ButtonBase from '@mui/material/ButtonBase';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogTitle from '@mui/material/DialogTitle';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import AddchartOutlined from '@mui/icons-material/AddchartOutlined';
import { INSTRUMENT_FILTER_DEBOUNCE_MS } from '@/config/constants';
import type { Instrument } from '@/lib/api/dto';
import { useInstruments } from '@/lib/api/get-instruments';
import { truncateName } from '@/lib/trading-format';
import { useDebounced } from '@/lib/use-debounced';
import { BOOK_HEIGHT, BOOK_MAX_WIDTH, BOOK_MIN_WIDTH } from './order-book';

/** The add tile beside the books, or a plain button on the empty dashboard. */
export function AddBook({ onAdd, variant = 'tile' }: { onAdd: (id: string) => void; variant?: 'tile' | 'button' }) {
  const [open, setOpen] = useState(false);
  const [search, setSearch] = useState('');
  const filter = useDebounced(search, INSTRUMENT_FILTER_DEBOUNCE_MS);
  const instruments = useInstruments(filter, open);
  const [choice, setChoice] = useState<Instrument | null>(null);
  const close = () => {
    setOpen(false);
    setChoice(null);
    setSearch('');
  };
  return (
    <>
      {variant === 'button' ? (
        <Button variant="outlined" onClick={() => setOpen(true)} startIcon={<AddchartOutlined />}>
          Add order book
        </Button>
      ) : (
        <ButtonBase
          onClick={() => setOpen(true)}
          sx={{ height: BOOK_HEIGHT, flex: '1 1 0', minWidth: BOOK_MIN_WIDTH, maxWidth: BOOK_MAX_WIDTH, border: 2, borderStyle: 'dashed', borderColor: 'divider', borderRadius: 2, flexDirection: 'column', gap: 1, color: 'text.secondary', '&:hover': { borderColor: 'primary.main', color: 'primary.main' } }}
        >
          <AddchartOutlined sx={{ fontSize: 40 }} />
          <Typography variant="subtitle1">Add order book</Typography>
        </ButtonBase>
      )}
      <Dialog open={open} onClose={close} maxWidth="xs" fullWidth aria-labelledby="add-book-title">
        <DialogTitle id="add-book-title">Add order book</DialogTitle>
        <DialogContent>
          <Autocomplete
            sx={{ mt: 1 }}
            options={instruments.data ?? []}
            loading={instruments.isFetching}
            value={choice}
            onChange={(_, v) => setChoice(v)}
            inputValue={search}
            onInputChange={(_, v) => setSearch(v)}
            filterOptions={(x) => x}
            getOptionLabel={(i) => truncateName(i.name)}
            getOptionKey={(i) => i.instrument_id}
            isOptionEqualToValue={(a, b) => a.instrument_id === b.instrument_id}
            renderInput={(params) => <TextField {...params} label="Instrument" autoFocus />}
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={close}>Cancel</Button>
          <Button
            variant="contained"
            disabled={!choice}
            onClick={() => {
              if (choice) onAdd(choice.instrument_id);
              close();
            }}
          >
            Add
          </Button>
        </DialogActions>
      </Dialog>
    </>
  );
}
