import { useSearchParams } from 'react-router';
import { AuthLayout } from '@/components/layout/auth-layout';
import { PasswordLinkScreen } from '@/features/auth/components/password-link-screen';

export default function AccountActivateRoute() {
  const [params] = useSearchParams();
  const hash = params.get('hash');
  return (
    <AuthLayout>
      <PasswordLinkScreen key={hash} hash={hash} mode="activate" />
    </AuthLayout>
  );
}
