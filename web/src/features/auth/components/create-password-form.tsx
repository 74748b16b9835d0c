import { useEffect, useState } from 'react';
import { useForm, useWatch } from 'react-hook-form';
import { zodResolver } from '@hookform/resolvers/zod';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { useNavigate } from 'react-router';
import { PasswordField } from '@/components/ui/password-field';
import { useToast } from '@/components/ui/toast';
import { PASSWORD_REDIRECT_MS } from '@/config/constants';
import { paths } from '@/config/paths';
import { ApiError, errorDetail } from '@/lib/api-errors';
import type { LinkPurpose } from '../api/check-password-link';
import { setPasswordInputSchema, useSetPassword, type SetPasswordInput } from '../api/set-password';
import { PasswordRuleChecklist } from './password-rule-checklist';

/** 'Create Your New Password' with the live rule checklist; on success goes to /login after 2 s. */
export function CreatePasswordForm({
  hash,
  purpose,
  onExpired,
}: {
  hash: string;
  purpose: LinkPurpose;
  onExpired: () => void;
}) {
  const navigate = useNavigate();
  const { showToast } = useToast();
  const mutation = useSetPassword();
  const [failure, setFailure] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const {
    register,
    handleSubmit,
    control,
    setError,
    formState: { errors, isSubmitted },
  } = useForm<SetPasswordInput>({
    resolver: zodResolver(setPasswordInputSchema),
    mode: 'onTouched',
    defaultValues: { password: '', confirmPassword: '' },
  });
  const password = useWatch({ control, name: 'password' });
  const confirm = useWatch({ control, name: 'confirmPassword' });
  const mismatch = confirm.length > 0 && confirm !== password;

  useEffect(() => {
    if (!done) return;
    const t = setTimeout(() => navigate(paths.login, { replace: true }), PASSWORD_REDIRECT_MS);
    return () => clearTimeout(t);
  }, [done, navigate]);

  const onSubmit = handleSubmit(({ password }) => {
    setFailure(null);
    mutation.mutate(
      { hash, password, purpose },
      {
        onSuccess: () => {
          showToast({ message: 'Your password has been updated successfully. You can now log in.', type: 'success' });
          setDone(true);
        },
        onError: (error) => {
          if (error instanceof ApiError && error.status === 410) {
            onExpired();
            return;
          }
          const fieldError = error instanceof ApiError ? error.fieldErrors.find((e) => e.field === 'password') : undefined;
          if (fieldError) {
            setError('password', { type: 'server', message: fieldError.message });
            return;
          }
          setFailure(errorDetail(error, 'An error occurred while changing your password.'));
        },
      },
    );
  });

  const confirmError = mismatch
    ? 'Passwords do not match. Please try again'
    : (errors.confirmPassword?.message ?? undefined);
  const serverError = errors.password?.type === 'server';
  const showPasswordError = isSubmitted || serverError;

  return (
    <Box component="form" noValidate onSubmit={onSubmit}>
      <Stack spacing={3}>
        <Stack spacing={1}>
          <Typography variant="h1">Create Your New Password</Typography>
          <Typography color="text.secondary">Choose a password that meets every rule below.</Typography>
        </Stack>
        {failure && (
          <Alert severity="error" role="alert">
            {failure}
          </Alert>
        )}
        <PasswordField
          label="Create Password"
          autoComplete="new-password"
          autoFocus
          {...register('password')}
          error={showPasswordError && !!errors.password}
          helperText={serverError ? errors.password?.message : undefined}
        />
        <PasswordRuleChecklist value={password} />
        <PasswordField
          label="Repeat Password"
          autoComplete="new-password"
          {...register('confirmPassword')}
          error={!!confirmError}
          helperText={confirmError}
        />
        <Button type="submit" variant="contained" size="large" disabled={mutation.isPending || done}>
          Save password
        </Button>
      </Stack>
    </Box>
  );
}
