import { useEffect, useRef, useState } from 'react';
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
import DialogContentText from '@mui/material/DialogContentText';
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
import Add from '@mui/icons-material/Add';
import { serverErrorText, serverFieldError } from '@/components/form/form-drawer';
import { FormTextField } from '@/components/form/form-fields';
import { useToast } from '@/components/ui/toast';
import { visuallyHidden } from '@/components/ui/visually-hidden';
import { ApiError } from '@/lib/api-errors';
import { useCompanyAccounts, type Account } from '@/lib/api/company-accounts';
import { useCreateAccount } from '../api/create-account';
import type { Company } from '../api/get-companies';
import { useUpdateAccount } from '../api/update-account';
import { accountFormSchema, accountNameFormSchema, type AccountForm, type AccountNameForm } from '../lib/account-form';

const MONO = 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';

/** A server error's detail for an alert, unless its field errors already say it under the fields. */
function alertText(error: unknown): string | null {
  if (!error) return null;
  return error instanceof ApiError && error.fieldErrors.length > 0 ? null : serverErrorText(error);
}

/**
 * A company's accounts (ADR 0045): the codes its brokers book to, which its traders split
 * their trades across. A venue admin adds them, renames them, closes them to new
 * allocations and reopens them; a code never changes.
 */
export function AccountsDialog({ company, onClose }: { company: Company; onClose: () => void }) {
  const accounts = useCompanyAccounts(company.company_id);
  const update = useUpdateAccount();
  const { showToast } = useToast();
  const [adding, setAdding] = useState(false);
  // What the add form holds is never dropped by a stray Esc or click beside the dialog.
  const [typed, setTyped] = useState(false);
  const [renaming, setRenaming] = useState<string | null>(null);
  // Focus goes back to 'Add account' when its form closes, so Esc and Tab go on from there.
  const addButton = useRef<HTMLButtonElement>(null);
  const wasAdding = useRef(false);
  useEffect(() => {
    if (wasAdding.current && !adding) addButton.current?.focus();
    wasAdding.current = adding;
  }, [adding]);
  const items = accounts.data ?? [];
  const setActive = (a: Account, active: boolean) =>
    update.mutate(
      { companyId: company.company_id, accountId: a.account_id, body: { active } },
      { onSuccess: (x) => showToast({ message: active ? `${x.code} reopened.` : `${x.code} closed: no new allocations.` }) },
    );
  const updateError = renaming ? null : alertText(update.error);
  return (
    <Dialog open onClose={() => !(adding && typed) && onClose()} aria-labelledby="accounts-title" maxWidth="md" fullWidth>
      <DialogTitle id="accounts-title">{`${company.name}'s accounts`}</DialogTitle>
      <DialogContent>
        <Stack spacing={2}>
          <DialogContentText>
            {`${company.name}'s traders split their trades across its open accounts, and its brokers book them to the codes. A closed account takes no new allocation; the ones made stay as they are.`}
          </DialogContentText>
          {accounts.isError ? (
            <Alert severity="error">{serverErrorText(accounts.error)}</Alert>
          ) : accounts.isPending ? (
            <Box sx={{ display: 'flex', justifyContent: 'center', py: 3 }}>
              <CircularProgress aria-label="Loading the accounts" />
            </Box>
          ) : items.length === 0 ? (
            <Typography color="text.secondary">No account yet.</Typography>
          ) : (
            <TableContainer component={Paper} variant="outlined">
              <Table size="small" aria-label={`Accounts of ${company.name}`}>
                <TableHead>
                  <TableRow>
                    <TableCell sx={{ width: 180 }}>Code</TableCell>
                    <TableCell>Name</TableCell>
                    <TableCell sx={{ width: 100 }}>Status</TableCell>
                    <TableCell sx={{ width: 190 }}>
                      <Typography component="span" sx={visuallyHidden}>
                        Actions
                      </Typography>
                    </TableCell>
                  </TableRow>
                </TableHead>
                <TableBody>
                  {items.map((a) => (
                    <TableRow key={a.account_id}>
                      <TableCell sx={{ fontFamily: MONO, fontSize: 13, whiteSpace: 'nowrap' }}>{a.code}</TableCell>
                      <TableCell>
                        {renaming === a.account_id ? (
                          <RenameForm company={company} account={a} onDone={() => setRenaming(null)} />
                        ) : (
                          a.name
                        )}
                      </TableCell>
                      <TableCell>
                        <Chip size="small" label={a.active ? 'Open' : 'Closed'} color={a.active ? 'success' : 'default'} variant="outlined" />
                      </TableCell>
                      <TableCell align="right" sx={{ whiteSpace: 'nowrap' }}>
                        {renaming !== a.account_id && (
                          <Button size="small" aria-label={`Rename ${a.code}`} onClick={() => setRenaming(a.account_id)}>
                            Rename
                          </Button>
                        )}
                        <Button
                          size="small"
                          color={a.active ? 'error' : 'primary'}
                          aria-label={`${a.active ? 'Close' : 'Reopen'} account ${a.code}`}
                          disabled={update.isPending}
                          onClick={() => setActive(a, !a.active)}
                          sx={{ ml: 1 }}
                        >
                          {a.active ? 'Close' : 'Reopen'}
                        </Button>
                      </TableCell>
                    </TableRow>
                  ))}
                </TableBody>
              </Table>
            </TableContainer>
          )}
          {updateError && <Alert severity="error">{updateError}</Alert>}
          {adding ? (
            <AddAccountForm
              company={company}
              onTyped={setTyped}
              onDone={() => {
                setAdding(false);
                setTyped(false);
              }}
            />
          ) : (
            <Box>
              <Button ref={addButton} variant="outlined" startIcon={<Add />} onClick={() => setAdding(true)} disabled={!accounts.data}>
                Add account
              </Button>
            </Box>
          )}
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>Done</Button>
      </DialogActions>
    </Dialog>
  );
}

function AddAccountForm({ company, onTyped, onDone }: { company: Company; onTyped: (typed: boolean) => void; onDone: () => void }) {
  const form = useForm<AccountForm>({ resolver: zodResolver(accountFormSchema), mode: 'all', defaultValues: { code: '', name: '' } });
  const { control } = form;
  const typed = form.formState.isDirty;
  useEffect(() => onTyped(typed), [typed, onTyped]);
  const create = useCreateAccount();
  const { showToast } = useToast();
  const submit = (v: AccountForm) => {
    if (create.isPending) return;
    create.mutate(
      { companyId: company.company_id, body: { code: v.code.trim(), name: v.name.trim() } },
      {
        onSuccess: (a) => {
          showToast({ message: `${a.code} added to ${company.name}.` });
          onDone();
        },
      },
    );
  };
  const error = alertText(create.error);
  return (
    <Paper
      variant="outlined"
      component="form"
      noValidate
      aria-label="Add account"
      onSubmit={form.handleSubmit(submit)}
      onKeyDown={(e) => {
        // Esc closes an empty form and keeps a typed one (Cancel drops it), the dialog open.
        if (e.key === 'Escape') {
          e.stopPropagation();
          if (!typed) onDone();
        }
      }}
      sx={{ p: 2 }}
    >
      <Stack spacing={2}>
        <Typography variant="subtitle2" component="h3">
          New account
        </Typography>
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ alignItems: 'flex-start' }}>
          <Box sx={{ width: { xs: '100%', sm: 260 }, flexShrink: 0 }}>
            <FormTextField
              control={control}
              name="code"
              label="Code"
              size="small"
              required
              autoFocus
              serverError={serverFieldError(create.error, 'code')}
              helperText="Brokers book to it; it never changes"
              slotProps={{ htmlInput: { autoComplete: 'off', spellCheck: false, maxLength: 64 } }}
            />
          </Box>
          <FormTextField control={control} name="name" label="Name" size="small" required serverError={serverFieldError(create.error, 'name')} />
        </Stack>
        {error && <Alert severity="error">{error}</Alert>}
        <Stack direction="row" spacing={1} sx={{ justifyContent: 'flex-end' }}>
          <Button onClick={onDone}>Cancel</Button>
          <Button type="submit" variant="contained" disabled={!form.formState.isValid || create.isPending}>
            Add account
          </Button>
        </Stack>
      </Stack>
    </Paper>
  );
}

function RenameForm({ company, account, onDone }: { company: Company; account: Account; onDone: () => void }) {
  const form = useForm<AccountNameForm>({ resolver: zodResolver(accountNameFormSchema), mode: 'all', defaultValues: { name: account.name } });
  const update = useUpdateAccount();
  const { showToast } = useToast();
  const submit = (v: AccountNameForm) => {
    if (update.isPending) return;
    update.mutate(
      { companyId: company.company_id, accountId: account.account_id, body: { name: v.name.trim() } },
      {
        onSuccess: (a) => {
          showToast({ message: `${a.code} renamed.` });
          onDone();
        },
      },
    );
  };
  const error = alertText(update.error);
  return (
    <Box
      component="form"
      noValidate
      aria-label={`Rename ${account.code}`}
      onSubmit={form.handleSubmit(submit)}
      onKeyDown={(e) => {
        // Esc leaves the name as it was, and the dialog open.
        if (e.key === 'Escape') {
          e.stopPropagation();
          onDone();
        }
      }}
    >
      <Stack direction="row" spacing={1} sx={{ alignItems: 'flex-start' }}>
        <FormTextField control={form.control} name="name" label="Name" size="small" autoFocus serverError={serverFieldError(update.error, 'name')} />
        <Button type="submit" variant="contained" size="small" disabled={!form.formState.isValid || update.isPending} sx={{ mt: 0.5 }}>
          Save
        </Button>
        <Button size="small" onClick={onDone} sx={{ mt: 0.5 }}>
          Cancel
        </Button>
      </Stack>
      {error && (
        <Alert severity="error" sx={{ mt: 1 }}>
          {error}
        </Alert>
      )}
    </Box>
  );
}
