import { http, HttpResponse } from 'msw';
import { db, type MockNotification, type MockUser } from './db';

function problem(status: number, detail?: string, errors?: { field: string; message: string }[]) {
  return HttpResponse.json(
    { type: 'about:blank', title: 'Error', status, ...(detail ? { detail } : {}), ...(errors ? { errors } : {}) },
    { status, headers: { 'Content-Type': 'application/problem+json' } },
  );
}

function publicUser(u: MockUser) {
  const { password: _password, ...rest } = u;
  return rest;
}

function authed(request: Request): MockUser | null {
  const token = request.headers.get('Authorization')?.replace(/^Bearer /, '');
  const email = token ? db.sessions.get(token) : undefined;
  return email ? (db.users.find((u) => u.email === email) ?? null) : null;
}

export const handlers = [
  http.get('*/api/config', () => HttpResponse.json(db.config)),

  http.post('*/api/auth/login', async ({ request }) => {
    const body = (await request.json()) as { email: string; password: string };
    const user = db.users.find((u) => u.email === body.email && u.password === body.password);
    if (!user) return problem(401, 'Invalid email or password.');
    return HttpResponse.json({ token: db.signIn(user.email) });
  }),

  http.delete('*/api/auth/session', ({ request }) => {
    const token = request.headers.get('Authorization')?.replace(/^Bearer /, '');
    if (!token || !db.sessions.has(token)) return problem(401, 'Not signed in.');
    db.sessions.delete(token);
    return new HttpResponse(null, { status: 204 });
  }),

  http.get('*/api/users/me', ({ request }) => {
    const user = authed(request);
    return user ? HttpResponse.json(publicUser(user)) : problem(401, 'Not signed in.');
  }),

  http.patch('*/api/users/:id', async ({ request, params }) => {
    const user = authed(request);
    if (!user) return problem(401, 'Not signed in.');
    const admin = user.roles.includes('upstairs-admin');
    if (user.user_id !== params.id && !admin) return problem(403, 'Forbidden.');
    const target = db.users.find((u) => u.user_id === params.id);
    if (!target) return problem(404, 'User not found.');
    const body = (await request.json()) as Partial<MockUser>;
    db.userPatches.push({ userId: target.user_id, body });
    const multiplier = body.parent_order_limit_multiplier === -1 ? null : body.parent_order_limit_multiplier;
    Object.assign(target, body, multiplier === undefined ? {} : { parent_order_limit_multiplier: multiplier });
    return HttpResponse.json(publicUser(target));
  }),

  http.post('*/api/users/password-reset', async ({ request }) => {
    const body = (await request.json()) as { email: string };
    const newAccount = new URL(request.url).searchParams.get('new_account_email') === 'true';
    db.resetRequests.push({ email: body.email, newAccount });
    return new HttpResponse(null, { status: 204 });
  }),

  // As the server: a link asked for another purpose than it was made for is gone.
  http.get('*/api/users/password-reset/:hash', ({ request, params }) => {
    const link = db.links.get(String(params.hash));
    const purpose = new URL(request.url).searchParams.get('purpose');
    return link && (!purpose || purpose === link.purpose)
      ? HttpResponse.json({ purpose: link.purpose })
      : problem(410, 'This link has expired.');
  }),

  http.post('*/api/users/password-reset/:hash', async ({ request, params }) => {
    const link = db.links.get(String(params.hash));
    const { password, purpose } = (await request.json()) as { password: string; purpose?: string };
    if (!link || (purpose && purpose !== link.purpose)) return problem(410, 'This link has expired.');
    if (password.includes('Password')) {
      return problem(400, 'The password is not valid.', [{ field: 'password', message: 'Password is too common' }]);
    }
    const user = db.users.find((u) => u.email === link.email);
    if (user) user.password = password;
    db.links.delete(String(params.hash));
    return new HttpResponse(null, { status: 204 });
  }),

  http.get('*/api/notifications', ({ request }) => {
    if (!authed(request)) return problem(401, 'Sign in to continue.');
    db.notificationReads += 1;
    return HttpResponse.json({ items: db.notifications.filter((n) => !n.archived), total_items: db.notifications.length });
  }),

  http.patch('*/api/notifications/:id', async ({ request, params }) => {
    const n = db.notifications.find((x) => x.notification_id === params.id);
    if (!authed(request) || !n) return problem(404, 'Notification not found.');
    Object.assign(n, (await request.json()) as Partial<MockNotification>);
    return HttpResponse.json(n);
  }),
];
