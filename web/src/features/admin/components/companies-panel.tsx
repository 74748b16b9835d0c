import { useState } from 'react';
import Chip from '@mui/material/Chip';
import FormControlLabel from '@mui/material/FormControlLabel';
import IconButton from '@mui/material/IconButton';
import MenuItem from '@mui/material/MenuItem';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Switch from '@mui/material/Switch';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableContainer from '@mui/material/TableContainer';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import TextField from '@mui/material/TextField';
import EditOutlined from '@mui/icons-material/EditOutlined';
import { useToast } from '@/components/ui/toast';
import { formatDateTime } from '@/lib/format-date';
import { useCompanies, useSaveCompany, type Company } from '../api/admin-api';
import { companyErrors, nextDefaultBroker, type CompanyForm } from '../lib/rules';
import { AdminPage } from './admin-page';
import { FormDrawer, serverFieldError } from './form-drawer';
import { useForm } from './use-form';

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
  };
}

/** Admin spec section 2: the Companies panel. */
export function CompaniesPanel() {
  const companies = useCompanies();
  const [editing, setEditing] = useState<{ company: Company | null } | null>(null);
  const items = companies.data?.items ?? [];
  return (
    <AdminPage
      title="Companies"
      createLabel="Create company"
      onCreate={() => setEditing({ company: null })}
      query={companies}
      empty={items.length === 0}
      drawer={editing && <CompanyDrawer company={editing.company} all={items} onClose={() => setEditing(null)} />}
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
              <TableCell>Updated</TableCell>
              <TableCell />
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
                <TableCell>{formatDateTime(c.updated_at)}</TableCell>
                <TableCell align="right">
                  <IconButton size="small" aria-label={`Edit ${c.name}`} onClick={() => setEditing({ company: c })}>
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

function CompanyDrawer({ company, all, onClose }: { company: Company | null; all: Company[]; onClose: () => void }) {
  const form = useForm(toForm(company), companyErrors);
  const save = useSaveCompany();
  const { showToast } = useToast();
  const v = form.values;
  const brokers = all.filter((c) => c.roles.includes('broker') && c.company_id !== company?.company_id);
  const nameOf = (id: string) => all.find((c) => c.company_id === id)?.name ?? id;
  const fieldError = (k: keyof CompanyForm) => form.error(k) ?? serverFieldError(save.error, k);

  const submit = () =>
    save.mutate(
      {
        id: company?.company_id,
        body: {
          name: v.name.trim(),
          full_name: v.full_name.trim(),
          trade_confirmation_email: v.trade_confirmation_email.trim() || null,
          trade_confirmation_via_email_enabled: v.trade_confirmation_via_email_enabled,
          brokers: v.brokers.map((company_id) => ({ company_id })),
          default_broker: v.default_broker ? { company_id: v.default_broker } : null,
          roles: v.roles,
        },
      },
      {
        onSuccess: (c) => {
          showToast({ message: company ? `${c.name} updated.` : `${c.name} created.` });
          onClose();
        },
      },
    );

  return (
    <FormDrawer
      open
      title={company ? `Edit ${company.name}` : 'Create company'}
      submitLabel={company ? 'Save changes' : 'Create company'}
      canSubmit={form.valid}
      pending={save.isPending}
      error={save.error}
      onSubmit={submit}
      onClose={onClose}
    >
      <TextField label="Company name" value={v.name} onChange={(e) => form.set('name', e.target.value)} onBlur={() => form.touch('name')} error={!!fieldError('name')} helperText={fieldError('name')} required fullWidth />
      <TextField label="Full name" value={v.full_name} onChange={(e) => form.set('full_name', e.target.value)} onBlur={() => form.touch('full_name')} error={!!fieldError('full_name')} helperText={fieldError('full_name')} required fullWidth />
      <TextField
        label="Trade confirmation e-mail"
        type="email"
        value={v.trade_confirmation_email}
        onChange={(e) => form.set('trade_confirmation_email', e.target.value)}
        onBlur={() => form.touch('trade_confirmation_email')}
        error={!!fieldError('trade_confirmation_email')}
        helperText={fieldError('trade_confirmation_email')}
        fullWidth
      />
      <FormControlLabel
        control={<Switch checked={v.trade_confirmation_via_email_enabled} onChange={(e) => form.set('trade_confirmation_via_email_enabled', e.target.checked)} />}
        label="Trade confirmation via e-mail"
      />
      <TextField
        select
        label="Roles"
        value={v.roles}
        onChange={(e) => form.set('roles', e.target.value as unknown as string[])}
        slotProps={{ select: { multiple: true, renderValue: (s) => (s as string[]).map(typeLabel).join(', ') } }}
        helperText={fieldError('roles') ?? 'Leave empty for a trading firm'}
        error={!!fieldError('roles')}
        fullWidth
      >
        {COMPANY_TYPES.map((t) => (
          <MenuItem key={t.value} value={t.value}>
            {t.label}
          </MenuItem>
        ))}
      </TextField>
      <TextField
        select
        label="Brokers"
        value={v.brokers}
        onChange={(e) => {
          const next = e.target.value as unknown as string[];
          form.set('brokers', next);
          form.patch({ default_broker: nextDefaultBroker(v.default_broker, next) });
          form.touch('default_broker');
        }}
        slotProps={{
          select: {
            multiple: true,
            renderValue: (s) => (
              <Stack direction="row" spacing={0.5} useFlexGap sx={{ flexWrap: 'wrap' }}>
                {(s as string[]).map((id) => <Chip key={id} size="small" label={nameOf(id)} />)}
              </Stack>
            ),
          },
        }}
        error={!!fieldError('brokers')}
        helperText={fieldError('brokers') ?? (brokers.length === 0 ? 'Create a broker company first' : undefined)}
        fullWidth
      >
        {brokers.map((b) => (
          <MenuItem key={b.company_id} value={b.company_id}>
            {b.name}
          </MenuItem>
        ))}
      </TextField>
      <TextField
        select
        label="Default broker"
        value={v.default_broker}
        onChange={(e) => form.set('default_broker', e.target.value)}
        onBlur={() => form.touch('default_broker')}
        disabled={v.brokers.length === 0}
        error={!!fieldError('default_broker')}
        helperText={fieldError('default_broker')}
        fullWidth
      >
        {v.brokers.map((id) => (
          <MenuItem key={id} value={id}>
            {nameOf(id)}
          </MenuItem>
        ))}
      </TextField>
    </FormDrawer>
  );
}
