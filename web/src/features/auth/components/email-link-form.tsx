import { useState } from 'react';
import { useForm, useWatch } from 'react-hook-form';
import { zodResolver } from '@hookform/resolvers/zod';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Link from '@mui/material/Link';
import Stack from '@mui/material/Stack';
import { TextInput } from '@/components/ui/text-input';
import Typography from '@mui/material/Typography';
import MarkEmailReadOutlined from '@mui/icons-material/MarkEmailReadOutlined';
import { Link as RouterLink } from 'react-router';
import { paths } from '@/config/paths';
import { errorDetail } from '@/lib/api-errors';
import { passwordLinkInputSchema, useRequestPasswordLink, type PasswordLinkInput } from '../api/request-password-link';

type Props = {
  title: string;
  description: string;
  /** Ask for a new activation link instead of a password reset. */
  newAccount: boolean;
};

/** E-mail form that sends a link, then 'All done!' with 'try again'. */
export function EmailLinkForm({ title, description, newAccount }: Props) {
  const request = useRequestPasswordLink();
  const [sentTo, setSentTo] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const {
    register,
    handleSubmit,
    control,
    reset,
    formState: { errors },
  } = useForm<PasswordLinkInput>({ resolver: zodResolver(passwordLinkInputSchema), defaultValues: { email: '' } });
  const email = useWatch({ control, name: 'email' });

  const onSubmit = handleSubmit(({ email }) => {
    setFailure(null);
    request.mutate(
      { email, newAccount },
      {
        onSuccess: () => setSentTo(email),
        onError: (error) =>
          setFailure(
            errorDetail(
              error,
              newAccount
                ? 'An error occurred while creating a password creation link.'
                : 'An error occurred while resetting your password.',
            ),
          ),
      },
    );
  });

  if (sentTo) {
    return (
      <Stack spacing={2.5} sx={{ alignItems: 'center', textAlign: 'center' }}>
        <MarkEmailReadOutlined color="primary" sx={{ fontSize: 48 }} />
        <Typography variant="h1">All done!</Typography>
        <Typography color="text.secondary">
          If an account exists for <strong>{sentTo}</strong>, we have sent it an email with a link. Please check your
          inbox.
        </Typography>
        <Typography variant="body2" color="text.secondary">
          Didn&apos;t receive it?{' '}
          <Link
            component="button"
            type="button"
            variant="body2"
            onClick={() => {
              reset({ email: sentTo });
              setSentTo(null);
            }}
          >
            try again
          </Link>
        </Typography>
        <Link component={RouterLink} to={paths.login} variant="body2">
          Back to sign in
        </Link>
      </Stack>
    );
  }

  return (
    <Box component="form" noValidate onSubmit={onSubmit}>
      <Stack spacing={3}>
        <Stack spacing={1}>
          <Typography variant="h1">{title}</Typography>
          <Typography color="text.secondary">{description}</Typography>
        </Stack>
        {failure && (
          <Alert severity="error" role="alert">
            {failure}
          </Alert>
        )}
        <TextInput
          label="Email"
          type="email"
          autoComplete="email"
          autoFocus
          {...register('email')}
          error={!!errors.email}
          helperText={errors.email?.message}
        />
        <Button type="submit" variant="contained" size="large" disabled={!email.trim() || request.isPending}>
          Send link
        </Button>
        <Link component={RouterLink} to={paths.login} variant="body2" sx={{ alignSelf: 'center' }}>
          Back to sign in
        </Link>
      </Stack>
    </Box>
  );
}
