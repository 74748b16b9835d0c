import { useState } from 'react';
import { useForm, useWatch } from 'react-hook-form';
import { zodResolver } from '@hookform/resolvers/zod';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
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
import Tooltip from '@mui/material/Tooltip';
import Typography from '@mui/material/Typography';
import AccountBalanceOutlined from '@mui/icons-material/AccountBalanceOutlined';
import Block from '@mui/icons-material/Block';
import EditOutlined from '@mui/icons-material/EditOutlined';
import PlayCircleOutline from '@mui/icons-material/PlayCircleOutlined';
import PowerSettingsNew from '@mui/icons-material/PowerSettingsNew';
import { CounterpartyFilterDialog } from '@/components/counterparty-filter-dialog';
import { FormDrawer, serverFieldError } from '@/components/form/form-drawer';
import { FormSwitch, FormTextField } from '@/components/form/form-fields';
import { AdminPage } from '@/components/layout/admin-page';
import { useToast } from '@/components/ui/toast';
import { useCurrentUser } from '@/lib/api/get-me';
import { formatDateTime } from '@/lib/format-date';
import { isAdmin } from '@/lib/permissions';
import { useCreateCompany } from '../api/create-company';
import { useCompanies, type Company } from '../api/get-companies';
import type { KillSwitchAction } from '../api/kill-switch';
import { useUpdateCompany } from '../api/update-company';
import { companyFormSchema, nextDefaultBroker, type CompanyForm } from '../lib/company-form';
import { AccountsDialog } from './accounts-dialog';
import { KillSwitchDialog } from './kill-switch-dialog';
import { visuallyHidden } from '@/components/ui/visually-hidden';

/** Company types (DESIGN section 4); a trading firm has neither. */
export const COMPANY_TYPES = [
  { value: 'broker', label: 'Broker' },
  { value: 'liquidity-provider', label: 'Liquidity provider' },
] as const;

const typeLabel = (t: string) => COMPANY_TYPES.find((x) => x.value === t)?.label ?? t;

function toForm(c: Company | null): CompanyForm {
  return {
    name: c?.name ?? '',
    full_name: c?.full_name ?? '',
    trade_confirmation_email: c?.trade_confirmation_email ?? '',
    trade_confirmation_via_email_enabled: c?.trade_confirmation_via_email_enabled ?? false,
    brokers: c?.brokers.map((b) => b.company_id) ?? [],
    default_broker: c?.default_broker?.company_id ?? '',
    roles: c?.roles ?? [],
    fix_comp_id: c?.fix_comp_id ?? '',
    fix_password: '',
    fix_password_remove: false,
    fix_reset_on_logon: c?.fix_reset_on_logon ?? false,
    fix_cancel_on_disconnect: c?.fix_cancel_on_disconnect ?? true,
  };
}

/** What the FIX password field says of the current one: it is never shown, only whether it is set. */
function fixPasswordHelp(company: Company | null): string {
  if (!company) return 'At least 8 characters; leave blank for none';
  return company.fix_password_set ? 'A FIX password is set; leave blank to keep it' : 'No FIX password is set; leave blank for none';
}

/** Admin spec section 2: the Companies panel. */
export function CompaniesPanel() {
  const companies = useCompanies();
  const [editing, setEditing] = useState<{ company: Company | null } | null>(null);
  const [killSwitch, setKillSwitch] = useState<{ id: string; action: KillSwitchAction } | null>(null);
  // DESIGN section 4: only a venue admin releases the kill switch.
  const canRelease = isAdmin(useCurrentUser());
  // A firm's counterparty filter (ADR 0042).
  const [filtering, setFiltering] = useState<Company | null>(null);
  // A company's accounts, which its trades are allocated to (ADR 0045).
  const [accounting, setAccounting] = useState<Company | null>(null);
  const items = companies.data?.items ?? [];
  const switching = killSwitch && items.find((c) => c.company_id === killSwitch.id);
  return (
    <AdminPage
      title="Companies"
      createLabel="Create company"
      onCreate={() => setEditing({ company: null })}
      query={companies}
      empty={items.length === 0}
      drawer={
        <>
          {editing && <CompanyDrawer company={editing.company} all={items} onClose={() => setEditing(null)} />}
          {killSwitch && switching && <KillSwitchDialog company={switching} action={killSwitch.action} onClose={() => setKillSwitch(null)} />}
          {filtering && (
            <CounterpartyFilterDialog
              owner={{ companyId: filtering.company_id }}
              title={`${filtering.name}'s counterparty filter`}
              onClose={() => setFiltering(null)}
            />
          )}
          {accounting && <AccountsDialog company={accounting} onClose={() => setAccounting(null)} />}
        </>
      }
      emptyText="No companies yet."
    >
      <TableContainer component={Paper} variant="outlined">
        <Table size="small" aria-label="Companies">
          <TableHead>
            <TableRow>
              <TableCell>Name</TableCell>
              <TableCell>Full name</TableCell>
              <TableCell>Type</TableCell>
              <TableCell>Brokers</TableCell>
              <TableCell>Default broker</TableCell>
              <TableCell>Trade confirmation e-mail</TableCell>
              <TableCell>FIX CompID</TableCell>
              <TableCell>Trading</TableCell>
              <TableCell>Updated</TableCell>
              <TableCell>
                <Typography component="span" sx={visuallyHidden}>
                  Actions
                </Typography>
              </TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {items.map((c) => (
              <TableRow key={c.company_id} hover>
                <TableCell sx={{ fontWeight: 600 }}>{c.name}</TableCell>
                <TableCell>{c.full_name}</TableCell>
                <TableCell>{c.roles.length ? c.roles.map(typeLabel).join(', ') : 'Trading firm'}</TableCell>
                <TableCell>{c.brokers.map((b) => b.name).join(', ')}</TableCell>
                <TableCell>{c.default_broker?.name ?? ''}</TableCell>
                <TableCell>
                  {c.trade_confirmation_email ?? ''}
                  {c.trade_confirmation_via_email_enabled && <Chip size="small" label="On" sx={{ ml: 1 }} />}
                </TableCell>
                <TableCell sx={{ fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', fontSize: 13, whiteSpace: 'nowrap' }}>{c.fix_comp_id ?? ''}</TableCell>
                <TableCell>
                  {c.trading_stopped_at ? (
                    // Two lines at most, so the chip does not squeeze the other columns.
                    <Chip
                      size="small"
                      color="error"
                      label={`Trading stopped since ${formatDateTime(c.trading_stopped_at)}`}
                      sx={{ height: 'auto', maxWidth: 150, py: 0.25, '& .MuiChip-label': { whiteSpace: 'normal', textAlign: 'center' } }}
                    />
                  ) : (
                    <Typography variant="body2" color="text.secondary">
                      Trading
                    </Typography>
                  )}
                </TableCell>
                <TableCell sx={{ whiteSpace: 'nowrap' }}>{formatDateTime(c.updated_at)}</TableCell>
                {/* On one line in a wide window; below 1400 px the icons go under the kill
                    switch rather than push the table past the window (at 1280 px the last
                    ones were cut off). */}
                <TableCell align="right" sx={{ '@media (min-width: 1400px)': { whiteSpace: 'nowrap' } }}>
                  {c.trading_stopped_at ? (
                    canRelease && (
                      <Button
                        size="small"
                        startIcon={<PlayCircleOutline />}
                        aria-label={`Re-enable trading for ${c.name}`}
                        onClick={() => setKillSwitch({ id: c.company_id, action: 'release' })}
                      >
                        Re-enable trading
                      </Button>
                    )
                  ) : (
                    <Button
                      size="small"
                      color="error"
                      startIcon={<PowerSettingsNew />}
                      aria-label={`Stop trading for ${c.name}`}
                      onClick={() => setKillSwitch({ id: c.company_id, action: 'stop' })}
                    >
                      Stop trading
                    </Button>
                  )}
                  <Box component="span" sx={{ display: 'inline-flex', gap: 1, ml: 1, verticalAlign: 'middle' }}>
                    <Tooltip title="Accounts">
                      <IconButton size="small" aria-label={`Accounts of ${c.name}`} onClick={() => setAccounting(c)}>
                        <AccountBalanceOutlined fontSize="small" />
                      </IconButton>
                    </Tooltip>
                    <IconButton size="small" aria-label={`Counterparty filter of ${c.name}`} onClick={() => setFiltering(c)}>
                      <Block fontSize="small" />
                    </IconButton>
                    <IconButton size="small" aria-label={`Edit ${c.name}`} onClick={() => setEditing({ company: c })}>
                      <EditOutlined fontSize="small" />
                    </IconButton>
                  </Box>
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </TableContainer>
    </AdminPage>
  );
}

function CompanyDrawer({ company, all, onClose }: { company: Company | null; all: Company[]; onClose: () => void }) {
  const form = useForm<CompanyForm>({ resolver: zodResolver(companyFormSchema), mode: 'all', defaultValues: toForm(company) });
  const { control } = form;
  const create = useCreateCompany();
  const update = useUpdateCompany();
  const save = company ? update : create;
  const { showToast } = useToast();
  const selected = useWatch({ control, name: 'brokers' });
  const removingPassword = useWatch({ control, name: 'fix_password_remove' });
  const brokers = all.filter((c) => c.roles.includes('broker') && c.company_id !== company?.company_id);
  const nameOf = (id: string) => all.find((c) => c.company_id === id)?.name ?? id;
  const serverError = (k: keyof CompanyForm) => serverFieldError(save.error, k);

  const submit = (v: CompanyForm) => {
    const body = {
      name: v.name.trim(),
      full_name: v.full_name.trim(),
      trade_confirmation_email: v.trade_confirmation_email.trim() || null,
      trade_confirmation_via_email_enabled: v.trade_confirmation_via_email_enabled,
      brokers: v.brokers.map((company_id) => ({ company_id })),
      default_broker: v.default_broker ? { company_id: v.default_broker } : null,
      roles: v.roles,
      fix_comp_id: v.fix_comp_id.trim() || null,
      fix_reset_on_logon: v.fix_reset_on_logon,
      fix_cancel_on_disconnect: v.fix_cancel_on_disconnect,
      // Write-only: sent when typed (set) or removed (null); absent, the server keeps it.
      ...(v.fix_password_remove ? { fix_password: null } : v.fix_password !== '' ? { fix_password: v.fix_password } : {}),
    };
    const onSuccess = (c: Company) => {
      showToast({ message: company ? `${c.name} updated.` : `${c.name} created.` });
      onClose();
    };
    if (company) update.mutate({ id: company.company_id, body }, { onSuccess });
    else create.mutate(body, { onSuccess });
  };

  return (
    <FormDrawer
      form={form}
      title={company ? `Edit ${company.name}` : 'Create company'}
      submitLabel={company ? 'Save changes' : 'Create company'}
      pending={save.isPending}
      error={save.error}
      onSubmit={submit}
      onClose={onClose}
    >
      <FormTextField control={control} name="name" label="Company name" serverError={serverError('name')} required />
      <FormTextField control={control} name="full_name" label="Full name" serverError={serverError('full_name')} required />
      <FormTextField control={control} name="trade_confirmation_email" label="Trade confirmation e-mail" type="email" serverError={serverError('trade_confirmation_email')} />
      <FormSwitch control={control} name="trade_confirmation_via_email_enabled" deps={['trade_confirmation_email']} label="Trade confirmation via e-mail" />
      <FormTextField
        control={control}
        name="roles"
        deps={['default_broker']}
        select
        label="Roles"
        slotProps={{ select: { multiple: true, renderValue: (s) => (Array.isArray(s) ? s.map(typeLabel).join(', ') : '') } }}
        serverError={serverError('roles')}
        helperText="Leave empty for a trading firm"
      >
        {COMPANY_TYPES.map((t) => (
          <MenuItem key={t.value} value={t.value}>
            {t.label}
          </MenuItem>
        ))}
      </FormTextField>
      <FormTextField
        control={control}
        name="brokers"
        select
        label="Brokers"
        // Changing the brokers moves the default broker along (and checks it).
        onValueChange={() =>
          form.setValue('default_broker', nextDefaultBroker(form.getValues('default_broker'), form.getValues('brokers')), { shouldValidate: true, shouldTouch: true })
        }
        slotProps={{
          select: {
            multiple: true,
            renderValue: (s) => (
              <Stack direction="row" spacing={0.5} useFlexGap sx={{ flexWrap: 'wrap' }}>
                {(Array.isArray(s) ? s : []).map((id: string) => <Chip key={id} size="small" label={nameOf(id)} />)}
              </Stack>
            ),
          },
        }}
        serverError={serverError('brokers')}
        helperText={brokers.length === 0 ? 'Create a broker company first' : undefined}
      >
        {brokers.map((b) => (
          <MenuItem key={b.company_id} value={b.company_id}>
            {b.name}
          </MenuItem>
        ))}
      </FormTextField>
      <FormTextField control={control} name="default_broker" select label="Default broker" disabled={selected.length === 0} serverError={serverError('default_broker')}>
        {selected.map((id) => (
          <MenuItem key={id} value={id}>
            {nameOf(id)}
          </MenuItem>
        ))}
      </FormTextField>
      <Typography variant="subtitle2" component="h3" sx={{ mb: -1 }}>
        FIX session
      </Typography>
      <FormTextField
        control={control}
        name="fix_comp_id"
        label="FIX CompID"
        serverError={serverError('fix_comp_id')}
        helperText="The company's SenderCompID; leave blank for no FIX session"
        slotProps={{ htmlInput: { autoComplete: 'off', spellCheck: false } }}
      />
      <FormTextField
        control={control}
        name="fix_password"
        label="FIX password"
        type="password"
        disabled={removingPassword}
        serverError={serverError('fix_password')}
        helperText={fixPasswordHelp(company)}
        // Not the admin's own password: the browser must not fill a saved one in here.
        slotProps={{ htmlInput: { autoComplete: 'new-password' } }}
      />
      {company?.fix_password_set && (
        <FormSwitch control={control} name="fix_password_remove" deps={['fix_password']} label="Remove FIX password" />
      )}
      <FormSwitch control={control} name="fix_reset_on_logon" label="Allow sequence resets (141=Y) on FIX Logon" />
      <FormSwitch
        control={control}
        name="fix_cancel_on_disconnect"
        label="Cancel on disconnect: pull the working orders of the parent orders its FIX session sent when the session drops"
      />
    </FormDrawer>
  );
}
