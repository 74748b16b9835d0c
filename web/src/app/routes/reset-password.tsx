import { useSearchParams } from 'react-router';
import { AuthLayout } from '@/components/layout/auth-layout';
import { EmailLinkForm } from '@/features/auth/components/email-link-form';
import { PasswordLinkScreen } from '@/features/auth/components/password-link-screen';

/** Forgot-password request form, or the reset form when the link's hash is present. */
export default function ResetPasswordRoute() {
  const [params] = useSearchParams();
  const hash = params.get('hash');
  return (
    <AuthLayout>
      {hash ? (
        <PasswordLinkScreen key={hash} hash={hash} mode="reset" />
      ) : (
        <EmailLinkForm
          newAccount={false}
          title="Forgot password?"
          description="Enter the email address of your account and we will send you a link to reset your password."
        />
      )}
    </AuthLayout>
  );
}
