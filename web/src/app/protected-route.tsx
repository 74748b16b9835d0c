import { Suspense, useEffect } from 'react';
import { Navigate, Outlet, useLocation, useNavigate } from 'react-router';
import { AppLayout } from '@/components/layout/app-layout';
import { PageLoader } from '@/components/ui/page-loader';
import { PleaseWaitCard } from '@/components/ui/please-wait-card';
import { paths } from '@/config/paths';
import { useMe } from '@/lib/api/get-me';
import { endSession, useToken } from '@/lib/auth-token';
import { RealtimeProvider } from '@/lib/realtime';
import { NotificationsBell } from '@/features/notifications/components/notifications-bell';

/** The protected gate of spec section 2. */
export default function ProtectedRoute() {
  const token = useToken();
  const location = useLocation();
  const navigate = useNavigate();
  const me = useMe(token !== null);

  // A failed session check ends the session; the redirect below remembers the origin.
  useEffect(() => {
    if (token && me.isError) endSession();
  }, [token, me.isError]);

  if (!token || me.isError) {
    return <Navigate to={paths.login} replace state={{ from: location }} />;
  }
  if (!me.data) {
    return (
      <PleaseWaitCard
        onLogin={() => {
          endSession();
          navigate(paths.login, { replace: true });
        }}
      />
    );
  }
  if (me.data.auto_accept === null && location.pathname !== paths.settings) {
    return <Navigate to={paths.settings} replace />;
  }
  return (
    <RealtimeProvider token={token}>
      <AppLayout user={me.data} actions={<NotificationsBell />}>
        <Suspense fallback={<PageLoader />}>
          <Outlet />
        </Suspense>
      </AppLayout>
    </RealtimeProvider>
  );
}
