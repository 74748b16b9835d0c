import { Controller, useForm } from 'react-hook-form';
import { zodResolver } from '@hookform/resolvers/zod';
import Box from '@mui/material/Box';
import Breadcrumbs from '@mui/material/Breadcrumbs';
import Button from '@mui/material/Button';
import FormHelperText from '@mui/material/FormHelperText';
import Link from '@mui/material/Link';
import Paper from '@mui/material/Paper';
import Radio from '@mui/material/Radio';
import RadioGroup from '@mui/material/RadioGroup';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { Link as RouterLink, useNavigate } from 'react-router';
import { useToast } from '@/components/ui/toast';
import { paths } from '@/config/paths';
import { useAppConfig } from '@/lib/api/get-config';
import type { AutoAccept, User } from '@/lib/api/get-me';
import { useUpdateUser } from '@/lib/api/update-user';
import { settingsInputSchema, type SettingsInput } from '../api/settings-input';

const options: { value: AutoAccept; title: string; description: string }[] = [
  { value: 'INSTANT', title: 'Instant', description: 'Match requests are accepted automatically as soon as they arrive.' },
  {
    value: 'ACCEPT_WITH_DELAY',
    title: 'Accept with delay',
    description: '15 seconds to review, then the match request is accepted automatically.',
  },
  {
    value: 'REJECT_WITH_DELAY',
    title: 'Reject with delay',
    description: '15 seconds to review, then the match request is rejected automatically.',
  },
];

/** Settings: the 'Match request' auto-response preference (first-time setup when auto_accept is null). */
export function SettingsForm({ user }: { user: User }) {
  const firstTime = user.auto_accept === null;
  const { product_name, support_email, support_phone } = useAppConfig();
  const navigate = useNavigate();
  const { showToast } = useToast();
  const update = useUpdateUser();
  const {
    control,
    handleSubmit,
    formState: { errors },
  } = useForm<SettingsInput>({
    resolver: zodResolver(settingsInputSchema),
    defaultValues: { auto_accept: user.auto_accept ?? undefined },
  });
  const error = errors.auto_accept?.message;

  const onSubmit = handleSubmit(({ auto_accept }) => {
    update.mutate(
      { userId: user.user_id, body: { auto_accept } },
      {
        onSuccess: () => {
          if (firstTime) {
            showToast({ message: 'Your preferences have been set successfully', type: 'success' });
            navigate(paths.dashboard, { replace: true });
          } else {
            showToast({ message: 'Your preferences have been updated successfully', type: 'success' });
          }
        },
        // A failed save shows nothing here and the page stays (spec section 8).
      },
    );
  });

  return (
    <Box sx={{ maxWidth: 880, mx: 'auto' }}>
      {!firstTime && (
        <Breadcrumbs aria-label="breadcrumb" sx={{ mb: 2 }}>
          <Link component={RouterLink} to={paths.dashboard} underline="hover" color="inherit">
            Dashboard
          </Link>
          <Typography color="text.primary">Settings</Typography>
        </Breadcrumbs>
      )}
      <Typography variant="h1" sx={{ mb: 1 }}>
        {firstTime ? `Welcome to ${product_name}` : 'Settings'}
      </Typography>
      {firstTime && (
        <Typography color="text.secondary" sx={{ mb: 3 }}>
          Before you start, choose how {product_name} should respond to match requests for you.
        </Typography>
      )}
      <Paper variant="outlined" component="form" noValidate onSubmit={onSubmit} sx={{ p: { xs: 3, md: 4 }, mt: firstTime ? 0 : 3 }}>
        <Stack spacing={3}>
          <Box>
            <Typography variant="h3" component="h2" id="match-request-label">
              Match request
            </Typography>
            <Typography variant="body2" color="text.secondary">
              How should we respond when a counterparty sends you a match request?
            </Typography>
          </Box>
          <Controller
            name="auto_accept"
            control={control}
            render={({ field }) => (
              <RadioGroup
                aria-labelledby="match-request-label"
                name={field.name}
                value={field.value ?? ''}
                onChange={(e) => field.onChange(e.target.value)}
                onBlur={field.onBlur}
                sx={{ display: 'grid', gridTemplateColumns: { xs: '1fr', md: 'repeat(3, 1fr)' }, gap: 2 }}
              >
                {options.map((o) => {
                  const checked = field.value === o.value;
                  return (
                    <Paper
                      key={o.value}
                      component="label"
                      variant="outlined"
                      data-testid={`option-${o.value}`}
                      data-error={Boolean(error)}
                      sx={{
                        p: 2,
                        display: 'flex',
                        gap: 1,
                        alignItems: 'flex-start',
                        cursor: 'pointer',
                        borderWidth: 2,
                        borderColor: error ? 'error.main' : checked ? 'primary.main' : 'divider',
                        bgcolor: checked ? 'rgba(11, 61, 145, 0.04)' : 'background.paper',
                      }}
                    >
                      <Radio value={o.value} checked={checked} sx={{ p: 0.5, mt: -0.25 }} slotProps={{ input: { 'aria-describedby': `${o.value}-desc` } }} />
                      <Box>
                        <Typography sx={{ fontWeight: 600 }}>{o.title}</Typography>
                        <Typography variant="body2" color="text.secondary" id={`${o.value}-desc`}>
                          {o.description}
                        </Typography>
                      </Box>
                    </Paper>
                  );
                })}
              </RadioGroup>
            )}
          />
          {error && (
            <FormHelperText error sx={{ mt: '8px !important' }}>
              {error}
            </FormHelperText>
          )}
          <Stack direction={{ xs: 'column', sm: 'row' }} sx={{ justifyContent: 'space-between', alignItems: { sm: 'center' }, gap: 2 }}>
            <Typography variant="body2" color="text.secondary">
              Need help? Call us on <Link href={`tel:${support_phone.replace(/\s+/g, '')}`}>{support_phone}</Link> or email{' '}
              <Link href={`mailto:${support_email}`}>{support_email}</Link>
            </Typography>
            <Button type="submit" variant="contained" size="large" disabled={update.isPending}>
              {firstTime ? 'Submit' : 'Save changes'}
            </Button>
          </Stack>
        </Stack>
      </Paper>
    </Box>
  );
}
