import { lazy } from 'react';
import { Navigate, type RouteObject } from 'react-router';
import { NotFoundPage } from '@/components/errors/not-found-page';
import { RouteError } from '@/components/errors/route-error';
import { paths } from '@/config/paths';
import { RootLayout } from './root-layout';

// Each route is its own chunk, so the sign-in page loads no trading or admin code.
// The gate and the signed-in chrome are a chunk of their own too.
const ProtectedRoute = lazy(() => import('./protected-route'));
const LoginRoute = lazy(() => import('./routes/login'));
const ResetPasswordRoute = lazy(() => import('./routes/reset-password'));
const AccountActivateRoute = lazy(() => import('./routes/account-activate'));
const PasswordRoute = lazy(() => import('./routes/password'));
const AcceptOrderRoute = lazy(() => import('./routes/accept-order'));
const FillOrderRoute = lazy(() => import('./routes/fill-order'));
const DashboardRoute = lazy(() => import('./routes/dashboard'));
const SettingsRoute = lazy(() => import('./routes/settings'));
const AccountRoute = lazy(() => import('./routes/account'));
const ScorecardRoute = lazy(() => import('./routes/scorecard'));
const AdminActionLogsRoute = lazy(() => import('./routes/admin-action-logs'));
const AdminBillingRoute = lazy(() => import('./routes/admin-billing'));
const AdminCompaniesRoute = lazy(() => import('./routes/admin-company'));
const AdminUsersRoute = lazy(() => import('./routes/admin-user'));
const AdminInstrumentsRoute = lazy(() => import('./routes/admin-instrument'));
const AdminExchangesRoute = lazy(() => import('./routes/admin-exchanges'));
const AdminOrdersRoute = lazy(() => import('./routes/admin-order'));
const AdminOrdersNewsletterRoute = lazy(() => import('./routes/admin-orders-newsletter'));
const BlockCalculatorRoute = lazy(() => import('./routes/admin-block-calculator'));
const AdminOutboxRoute = lazy(() => import('./routes/admin-outbox'));
const AdminFixSessionsRoute = lazy(() => import('./routes/admin-fix-sessions'));

export const routes: RouteObject[] = [
  {
    element: <RootLayout />,
    errorElement: <RouteError />,
    children: [
      { path: paths.home, element: <Navigate to={paths.dashboard} replace /> },
      { path: paths.login, element: <LoginRoute /> },
      { path: paths.resetPassword, element: <ResetPasswordRoute /> },
      { path: paths.accountActivate, element: <AccountActivateRoute /> },
      { path: paths.password, element: <PasswordRoute /> },
      { path: paths.acceptOrder, element: <AcceptOrderRoute /> },
      { path: paths.fillOrder, element: <FillOrderRoute /> },
      {
        element: <ProtectedRoute />,
        children: [
          { path: paths.dashboard, element: <DashboardRoute /> },
          { path: paths.settings, element: <SettingsRoute /> },
          { path: paths.account, element: <AccountRoute /> },
          { path: paths.scorecard, element: <ScorecardRoute /> },
          { path: paths.adminActionLogs, element: <AdminActionLogsRoute /> },
          { path: paths.adminBilling, element: <AdminBillingRoute /> },
          { path: paths.adminCompanies, element: <AdminCompaniesRoute /> },
          { path: paths.adminUsers, element: <AdminUsersRoute /> },
          { path: paths.adminInstruments, element: <AdminInstrumentsRoute /> },
          { path: paths.adminExchanges, element: <AdminExchangesRoute /> },
          { path: paths.adminOrders, element: <AdminOrdersRoute /> },
          { path: paths.adminOrdersNewsletter, element: <AdminOrdersNewsletterRoute /> },
          { path: paths.blockCalculator, element: <BlockCalculatorRoute /> },
          { path: paths.adminOutbox, element: <AdminOutboxRoute /> },
          { path: paths.adminFixSessions, element: <AdminFixSessionsRoute /> },
        ],
      },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
];
