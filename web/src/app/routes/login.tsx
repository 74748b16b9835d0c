import { Navigate, useLocation, type Location } from 'react-router';
import { AuthLayout } from '@/components/layout/auth-layout';
import { paths } from '@/config/paths';
import { useToken } from '@/lib/auth-token';
import { LoginForm } from '@/features/auth/components/login-form';

/** Sign-in; once signed in, goes to the page first asked for, else the dashboard. */
export default function LoginRoute() {
  const token = useToken();
  const location = useLocation();
  if (token) {
    const from = (location.state as { from?: Location } | null)?.from;
    const to = from && from.pathname !== paths.login ? `${from.pathname}${from.search}${from.hash}` : paths.dashboard;
    return <Navigate to={to} replace />;
  }
  return (
    <AuthLayout>
      <LoginForm />
    </AuthLayout>
  );
}
