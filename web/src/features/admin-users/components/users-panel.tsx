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
import EditOutlined from '@mui/icons-material/EditOutlined';
import { FormDrawer, serverFieldError } from '@/components/form/form-drawer';
import { FormSwitch, FormTextField } from '@/components/form/form-fields';
import { AdminPage } from '@/components/layout/admin-page';
import { useToast } from '@/components/ui/toast';
import type { CompanyRef, Role } from '@/lib/api/dto';
import { type User, useCurrentUser } from '@/lib/api/get-me';
import { isAdmin } from '@/lib/permissions';
import { useCreateUser } from '../api/create-user';
import { useUsers } from '../api/get-users';
import { useAdminUpdateUser } from '../api/update-user';
import { multiplierValue, userFormSchema, type UserForm } from '../lib/user-form';

export const ROLES: { value: Role; label: string }[] = [
  { value: 'trader', label: 'Trader' },
  { value: 'company-admin', label: 'Company admin' },
  { value: 'upstairs-admin', label: 'Upstairs admin' },
  { value: 'upstairs-sales', label: 'Upstairs sales' },
  { value: 'sandbox', label: 'Sandbox' },
];

const roleLabel = (r: string) => ROLES.find((x) => x.value === r)?.label ?? r;

/** Venue roles only a venue admin grants (a company admin manages its own firm's users). */
const VENUE_ROLES: readonly Role[] = ['upstairs-admin', 'upstairs-sales'];

function toForm(u: User | null): UserForm & { roles: Role[] } {
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

/** Admin spec section 2: the Users panel; the companies to choose from come from the route. */
export function UsersPanel({ companies }: { companies: CompanyRef[] }) {
  const users = useUsers();
  const [editing, setEditing] = useState<{ user: User | null } | null>(null);
  const items = users.data?.items ?? [];
  // A user holding a venue role is the venue admins' to change (the server refuses anyone else).
  const venueAdmin = isAdmin(useCurrentUser());
  const editable = (u: User) => venueAdmin || !u.roles.some((r) => VENUE_ROLES.includes(r));
  return (
    <AdminPage title="Users" createLabel="Create user" onCreate={() => setEditing({ user: null })} query={users} empty={items.length === 0} drawer={editing && <UserDrawer user={editing.user} companies={companies} onClose={() => setEditing(null)} />} emptyText="No users yet.">
      <TableContainer component={Paper} variant="outlined">
        <Table size="small" aria-label="Users">
          <TableHead>
            <TableRow>
              <TableCell>Name</TableCell>
              <TableCell>E-mail</TableCell>
              <TableCell>Company</TableCell>
              <TableCell>Roles</TableCell>
              <TableCell>Multiplier</TableCell>
              <TableCell align="right">Reliability</TableCell>
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
                <TableCell align="right">{`${u.reliability_score}%`}</TableCell>
                <TableCell>
                  <Stack direction="row" spacing={0.5}>
                    <Chip size="small" label={u.active ? 'Active' : 'Inactive'} color={u.active ? 'success' : 'default'} variant="outlined" />
                    {!u.verified && <Chip size="small" label="Not activated" variant="outlined" />}
                    {u.fix_integration && <Chip size="small" label="FIX" variant="outlined" />}
                  </Stack>
                </TableCell>
                <TableCell align="right">
                  {editable(u) && (
                    <IconButton size="small" aria-label={`Edit ${u.email}`} onClick={() => setEditing({ user: u })}>
                      <EditOutlined fontSize="small" />
                    </IconButton>
                  )}
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </TableContainer>
    </AdminPage>
  );
}

function UserDrawer({ user, companies, onClose }: { user: User | null; companies: CompanyRef[]; onClose: () => void }) {
  const form = useForm({ resolver: zodResolver(userFormSchema), mode: 'all', defaultValues: toForm(user) });
  const { control } = form;
  const create = useCreateUser();
  const update = useAdminUpdateUser();
  const save = user ? update : create;
  const { showToast } = useToast();
  const serverError = (k: keyof UserForm) => serverFieldError(save.error, k);
  // A venue role the user already holds stays listed, so that it shows; it cannot be added.
  const venueAdmin = isAdmin(useCurrentUser());
  const roles = ROLES.filter((r) => venueAdmin || !VENUE_ROLES.includes(r.value) || user?.roles.includes(r.value));

  const submit = (v: UserForm & { roles: Role[] }) => {
    const common = {
      first_name: v.first_name.trim(),
      last_name: v.last_name.trim(),
      email: v.email.trim(),
      ems_trader_id: v.ems_trader_id.trim() || null,
      roles: v.roles,
      active: v.active,
      fix_integration: v.fix_integration,
      // An empty multiplier is sent as -1 (admin spec section 7).
      parent_order_limit_multiplier: multiplierValue(v.parent_order_limit_multiplier),
    };
    const onSuccess = (u: User) => {
      showToast({ message: user ? `${u.email} updated.` : `${u.email} created. An activation e-mail is on its way.` });
      onClose();
    };
    if (user) update.mutate({ userId: user.user_id, body: common }, { onSuccess });
    else create.mutate({ ...common, company_id: v.company_id }, { onSuccess });
  };

  return (
    <FormDrawer
      form={form}
      title={user ? `Edit ${user.email}` : 'Create user'}
      submitLabel={user ? 'Save changes' : 'Create user'}
      pending={save.isPending}
      error={save.error}
      onSubmit={submit}
      onClose={onClose}
    >
      <FormTextField control={control} name="first_name" label="First name" serverError={serverError('first_name')} required />
      <FormTextField control={control} name="last_name" label="Last name" serverError={serverError('last_name')} required />
      <FormTextField control={control} name="email" label="E-mail" type="email" serverError={serverError('email')} required />
      <FormTextField
        control={control}
        name="company_id"
        select
        label="Company"
        disabled={user !== null}
        serverError={serverError('company_id')}
        helperText={user ? 'The company of a user cannot be changed' : undefined}
        required
      >
        {companies.map((c) => (
          <MenuItem key={c.company_id} value={c.company_id}>
            {c.name}
          </MenuItem>
        ))}
        {user && !companies.some((c) => c.company_id === user.company_id) && <MenuItem value={user.company_id}>{user.company_name}</MenuItem>}
      </FormTextField>
      <FormTextField control={control} name="ems_trader_id" label="EMS trader id" serverError={serverError('ems_trader_id')} />
      <FormTextField
        control={control}
        name="parent_order_limit_multiplier"
        label="Parent order limit multiplier"
        slotProps={{ htmlInput: { inputMode: 'numeric' } }}
        serverError={serverError('parent_order_limit_multiplier')}
        helperText="Empty: no multiplier (maximum 100,000)"
      />
      <FormTextField
        control={control}
        name="roles"
        select
        label="Roles"
        slotProps={{ select: { multiple: true, renderValue: (s) => (Array.isArray(s) ? s.map(roleLabel).join(', ') : '') } }}
        serverError={serverError('roles')}
      >
        {roles.map((r) => (
          <MenuItem key={r.value} value={r.value} disabled={!venueAdmin && VENUE_ROLES.includes(r.value)}>
            {r.label}
          </MenuItem>
        ))}
      </FormTextField>
      <FormSwitch control={control} name="active" label="Active" />
      <FormSwitch control={control} name="fix_integration" label="FIX integration" />
    </FormDrawer>
  );
}
