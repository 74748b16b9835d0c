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
import { useCompanies, useSaveUser, useUsers, type AdminUser, type Role } from '../api/admin-api';
import { multiplierValue, userErrors, type UserForm } from '../lib/rules';
import { AdminPage } from './admin-page';
import { FormDrawer, serverFieldError } from './form-drawer';
import { useForm } from './use-form';

export const ROLES: { value: Role; label: string }[] = [
  { value: 'trader', label: 'Trader' },
  { value: 'company-admin', label: 'Company admin' },
  { value: 'upstairs-admin', label: 'Upstairs admin' },
  { value: 'upstairs-sales', label: 'Upstairs sales' },
  { value: 'sandbox', label: 'Sandbox' },
];

const roleLabel = (r: string) => ROLES.find((x) => x.value === r)?.label ?? r;

function toForm(u: AdminUser | null): UserForm {
  return {
    first_name: u?.first_name ?? '',
    last_name: u?.last_name ?? '',
    email: u?.email ?? '',
    company_id: u?.company_id ?? '',
    ems_trader_id: u?.ems_trader_id ?? '',
    parent_order_limit_multiplier: u?.parent_order_limit_multiplier ? String(u.parent_order_limit_multiplier) : '',
    roles: u?.roles ?? ['trader'],
    active: u?.active ?? true,
    fix_integration: u?.fix_integration ?? false,
  };
}

/** Admin spec section 2: the Users panel. */
export function UsersPanel() {
  const users = useUsers();
  const [editing, setEditing] = useState<{ user: AdminUser | null } | null>(null);
  const items = users.data?.items ?? [];
  return (
    <AdminPage title="Users" createLabel="Create user" onCreate={() => setEditing({ user: null })} query={users} empty={items.length === 0} drawer={editing && <UserDrawer user={editing.user} onClose={() => setEditing(null)} />} emptyText="No users yet.">
      <TableContainer component={Paper} variant="outlined">
        <Table size="small" aria-label="Users">
          <TableHead>
            <TableRow>
              <TableCell>Name</TableCell>
              <TableCell>E-mail</TableCell>
              <TableCell>Company</TableCell>
              <TableCell>Roles</TableCell>
              <TableCell>Multiplier</TableCell>
              <TableCell>Status</TableCell>
              <TableCell />
            </TableRow>
          </TableHead>
          <TableBody>
            {items.map((u) => (
              <TableRow key={u.user_id} hover>
                <TableCell sx={{ fontWeight: 600 }}>
                  {u.first_name} {u.last_name}
                </TableCell>
                <TableCell>{u.email}</TableCell>
                <TableCell>{u.company_name}</TableCell>
                <TableCell>{u.roles.map(roleLabel).join(', ')}</TableCell>
                <TableCell>{u.parent_order_limit_multiplier ?? ''}</TableCell>
                <TableCell>
                  <Stack direction="row" spacing={0.5}>
                    <Chip size="small" label={u.active ? 'Active' : 'Inactive'} color={u.active ? 'success' : 'default'} variant="outlined" />
                    {!u.verified && <Chip size="small" label="Not activated" variant="outlined" />}
                    {u.fix_integration && <Chip size="small" label="FIX" variant="outlined" />}
                  </Stack>
                </TableCell>
                <TableCell align="right">
                  <IconButton size="small" aria-label={`Edit ${u.email}`} onClick={() => setEditing({ user: u })}>
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

function UserDrawer({ user, onClose }: { user: AdminUser | null; onClose: () => void }) {
  const form = useForm(toForm(user), userErrors);
  const companies = useCompanies();
  const save = useSaveUser();
  const { showToast } = useToast();
  const v = form.values;
  const fieldError = (k: keyof UserForm) => form.error(k) ?? serverFieldError(save.error, k);
  const text = (k: 'first_name' | 'last_name' | 'email' | 'ems_trader_id' | 'parent_order_limit_multiplier', label: string, extra: object = {}) => (
    <TextField
      label={label}
      value={v[k]}
      onChange={(e) => form.set(k, e.target.value)}
      onBlur={() => form.touch(k)}
      error={!!fieldError(k)}
      helperText={fieldError(k)}
      fullWidth
      {...extra}
    />
  );

  const submit = () => {
    const common = {
      first_name: v.first_name.trim(),
      last_name: v.last_name.trim(),
      email: v.email.trim(),
      ems_trader_id: v.ems_trader_id.trim() || null,
      roles: v.roles as Role[],
      active: v.active,
      fix_integration: v.fix_integration,
    };
    // An empty multiplier is sent as -1 (admin spec section 7).
    const parent_order_limit_multiplier = multiplierValue(v.parent_order_limit_multiplier);
    save.mutate(
      user
        ? { id: user.user_id, body: { ...common, parent_order_limit_multiplier } }
        : { body: { ...common, company_id: v.company_id, parent_order_limit_multiplier } },
      {
        onSuccess: (u) => {
          showToast({ message: user ? `${u.email} updated.` : `${u.email} created. An activation e-mail is on its way.` });
          onClose();
        },
      },
    );
  };

  return (
    <FormDrawer
      open
      title={user ? `Edit ${user.email}` : 'Create user'}
      submitLabel={user ? 'Save changes' : 'Create user'}
      canSubmit={form.valid}
      pending={save.isPending}
      error={save.error}
      onSubmit={submit}
      onClose={onClose}
    >
      {text('first_name', 'First name', { required: true })}
      {text('last_name', 'Last name', { required: true })}
      {text('email', 'E-mail', { required: true, type: 'email' })}
      <TextField
        select
        label="Company"
        value={v.company_id}
        onChange={(e) => form.set('company_id', e.target.value)}
        onBlur={() => form.touch('company_id')}
        disabled={user !== null}
        error={!!fieldError('company_id')}
        helperText={fieldError('company_id') ?? (user ? 'The company of a user cannot be changed' : undefined)}
        required
        fullWidth
      >
        {(companies.data?.items ?? []).map((c) => (
          <MenuItem key={c.company_id} value={c.company_id}>
            {c.name}
          </MenuItem>
        ))}
        {user && !companies.data?.items.some((c) => c.company_id === user.company_id) && <MenuItem value={user.company_id}>{user.company_name}</MenuItem>}
      </TextField>
      {text('ems_trader_id', 'EMS trader id')}
      {text('parent_order_limit_multiplier', 'Parent order limit multiplier', {
        slotProps: { htmlInput: { inputMode: 'numeric' } },
        helperText: fieldError('parent_order_limit_multiplier') ?? 'Empty: no multiplier (maximum 100,000)',
      })}
      <TextField
        select
        label="Roles"
        value={v.roles}
        onChange={(e) => form.set('roles', e.target.value as unknown as string[])}
        slotProps={{ select: { multiple: true, renderValue: (s) => (s as string[]).map(roleLabel).join(', ') } }}
        error={!!fieldError('roles')}
        helperText={fieldError('roles')}
        fullWidth
      >
        {ROLES.map((r) => (
          <MenuItem key={r.value} value={r.value}>
            {r.label}
          </MenuItem>
        ))}
      </TextField>
      <FormControlLabel control={<Switch checked={v.active} onChange={(e) => form.set('active', e.target.checked)} />} label="Active" />
      <FormControlLabel control={<Switch checked={v.fix_integration} onChange={(e) => form.set('fix_integration', e.target.checked)} />} label="FIX integration" />
    </FormDrawer>
  );
}
