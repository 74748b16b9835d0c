import { Suspense } from 'react';
import { Outlet } from 'react-router';
import { CookieConsentBanner } from '@/components/ui/cookie-consent';
import { PageLoader } from '@/components/ui/page-loader';

export function RootLayout() {
  return (
    <>
      <Suspense fallback={<PageLoader />}>
        <Outlet />
      </Suspense>
      <CookieConsentBanner />
    </>
  );
}
