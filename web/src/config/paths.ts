/** Route paths of the app, so links and redirects never drift apart. */
export const paths = {
  home: '/',
  login: '/login',
  accountActivate: '/account-activate',
  password: '/password',
  resetPassword: '/reset-password',
  acceptOrder: '/accept-order',
  fillOrder: '/fill-order',
  dashboard: '/dashboard',
  settings: '/settings',
  account: '/user/account',
  adminCompanies: '/admin/company',
  adminUsers: '/admin/user',
  adminInstruments: '/admin/instrument',
  blockCalculator: '/admin/block-calculator',
  privacyPolicy: '/privacy-policy.html',
  cookiePolicy: '/cookie-policy.html',
} as const;
