import { useEffect, useState } from 'react';
import { useForm } from 'react-hook-form';
import { zodResolver } from '@hookform/resolvers/zod';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Checkbox from '@mui/material/Checkbox';
import FormControlLabel from '@mui/material/FormControlLabel';
import Link from '@mui/material/Link';
import Stack from '@mui/material/Stack';
import { TextInput } from '@/components/ui/text-input';
import Typography from '@mui/material/Typography';
import { Link as RouterLink } from 'react-router';
import { PasswordField } from '@/components/ui/password-field';
import { LOGIN_BANNER_MS } from '@/config/constants';
import { paths } from '@/config/paths';
import { errorDetail } from '@/lib/api-errors';
import { useAppConfig } from '@/lib/api/get-config';
import { loginInputSchema, useLogin, type LoginInput } from '../api/login';
import { SalesContact } from './sales-contact';

/** Sign-in form with the failure banner of spec section 8. */
export function LoginForm() {
  const { support_email, product_name } = useAppConfig();
  const login = useLogin();
  const [banner, setBanner] = useState<string | null>(null);
  const {
    register,
    handleSubmit,
    formState: { errors },
  } = useForm<LoginInput>({
    resolver: zodResolver(loginInputSchema),
    defaultValues: { email: '', password: '', rememberMe: false },
  });

  useEffect(() => {
    if (!banner) return;
    const t = setTimeout(() => setBanner(null), LOGIN_BANNER_MS);
    return () => clearTimeout(t);
  }, [banner]);

  const onSubmit = handleSubmit((input) => {
    setBanner(null);
    login.mutate(input, {
      onError: (error) => setBanner(errorDetail(error, 'An error occurred while logging in.')),
    });
  });

  const failed = banner !== null;

  return (
    <Box component="form" noValidate onSubmit={onSubmit}>
      <Stack spacing={3}>
        <Stack spacing={1}>
          <Typography variant="h1">Sign in</Typography>
          <Typography color="text.secondary">Welcome back to {product_name}. Sign in to continue.</Typography>
        </Stack>
        {banner && (
          <Alert severity="error" role="alert">
            {banner}
          </Alert>
        )}
        <TextInput
          label="Email"
          type="email"
          autoComplete="email"
          autoFocus
          {...register('email')}
          error={failed || !!errors.email}
          helperText={errors.email?.message}
        />
        <PasswordField
          label="Password"
          autoComplete="current-password"
          {...register('password')}
          error={failed || !!errors.password}
          helperText={errors.password?.message}
        />
        <Stack direction="row" sx={{ alignItems: 'center', justifyContent: 'space-between', mt: '8px !important' }}>
          <FormControlLabel control={<Checkbox {...register('rememberMe')} />} label="Remember me" />
          <Link component={RouterLink} to={paths.resetPassword} variant="body2">
            Forgot password?
          </Link>
        </Stack>
        <Button type="submit" variant="contained" size="large" disabled={login.isPending}>
          Sign in
        </Button>
        <Stack spacing={0.75} sx={{ alignItems: 'center' }}>
          <Typography variant="body2" color="text.secondary">
            Don&apos;t have an account? <Link href={`mailto:${support_email}`}>Email us</Link>
          </Typography>
          <SalesContact />
          <Typography variant="body2" color="text.secondary">
            Need help? <Link href={`mailto:${support_email}`}>Contact us</Link>
          </Typography>
          <Typography variant="body2" color="text.secondary">
            <Link href={paths.privacyPolicy} target="_blank" rel="noopener noreferrer">
              Privacy policy
            </Link>
            {' · '}
            <Link href={paths.cookiePolicy} target="_blank" rel="noopener noreferrer">
              Cookie policy
            </Link>
          </Typography>
        </Stack>
      </Stack>
    </Box>
  );
}
