import { http, HttpResponse, type HttpHandler } from 'msw';
import type { components } from '@/lib/api/schema';
import { admin } from './admin-handlers';
import { db } from './db';

// The orders newsletter and the kill switch behind MSW: in-memory, echoing what the
// panels send; the server's own rules are tested against the real server.

type Newsletter = components['schemas']['NewsletterDto'];
type Preview = components['schemas']['NewsletterPreviewDto'];

const STAMP = '2026-11-23T09:00:00Z';

export const newsletters = {
  items: [] as Newsletter[],
  /** Newsletters sent, by id, in order. */
  sent: [] as string[],
  /** The time the kill switch records (the server's clock). */
  now: '2026-11-23T10:15:00Z',
  nextId: 1,
};

/** Called by the tests that use these handlers, before each test. */
export function resetNewsletterMocks() {
  newsletters.items = [];
  newsletters.sent = [];
  newsletters.now = '2026-11-23T10:15:00Z';
  newsletters.nextId = 1;
}

/** A newsletter as the server sends it, for a test's starting state. */
export function mockNewsletter(overrides: Partial<Newsletter> = {}): Newsletter {
  const n: Newsletter = {
    newsletter_id: `n-${newsletters.nextId++}`,
    name: 'Euribor desk',
    description: 'Resting interest in Euribor spreads',
    filter_criteria: null,
    recipients: [],
    created_at: STAMP,
    updated_at: STAMP,
    last_sent_at: null,
    ...overrides,
  };
  newsletters.items.push(n);
  return n;
}

function caller(request: Request) {
  const token = request.headers.get('Authorization')?.replace(/^Bearer /, '');
  const email = token ? db.sessions.get(token) : undefined;
  return db.users.find((u) => u.email === email) ?? null;
}

const problem = (status: number, detail: string, errors?: { field: string; message: string }[]) =>
  HttpResponse.json({ type: 'about:blank', title: 'Error', status, detail, ...(errors ? { errors } : {}) }, { status, headers: { 'Content-Type': 'application/problem+json' } });

const find = (id: unknown) => newsletters.items.find((n) => n.newsletter_id === id);

const recipientOf = (userId: string) => {
  const u = db.users.find((x) => x.user_id === userId);
  return u && { user_id: u.user_id, email: u.email, first_name: u.first_name, last_name: u.last_name, company_name: u.company_name, roles: u.roles };
};

function preview(n: Newsletter): Preview {
  return {
    subject: `Upstairs orders digest: ${n.name}`,
    text: `Resting interest for ${n.name}`,
    html: `<!doctype html><html><body><h1>${n.name}</h1><p>Euribor 3M Dec26-Mar27: bid 2,000 @ -0.025</p></body></html>`,
    instruments: [{ name: 'Euribor 3M Dec26-Mar27', term: 'Dec26-Mar27', min_block: 500, bids: [{ price: -0.025, quantity: 2000 }], offers: [] }],
    recipients: n.recipients.length,
  };
}

export const newsletterHandlers: HttpHandler[] = [
  http.get('*/api/admin/newsletters', () => HttpResponse.json(newsletters.items)),
  http.post('*/api/admin/newsletters', async ({ request }) => {
    const body = (await request.json()) as { name: string; description: string };
    if (newsletters.items.some((n) => n.name === body.name)) {
      return problem(400, 'The newsletter is not valid.', [{ field: 'name', message: 'A newsletter with this name already exists.' }]);
    }
    return HttpResponse.json(mockNewsletter({ name: body.name, description: body.description }), { status: 201 });
  }),
  http.post('*/api/admin/newsletters/:id/recipients', async ({ request, params }) => {
    const n = find(params.id);
    if (!n) return problem(404, 'Newsletter not found.');
    const { recipient_ids } = (await request.json()) as { recipient_ids: string[] };
    for (const id of recipient_ids) {
      const r = recipientOf(id);
      if (r && !n.recipients.some((x) => x.user_id === id)) n.recipients.push(r);
    }
    n.recipients.sort((a, b) => a.email.localeCompare(b.email));
    return HttpResponse.json(n);
  }),
  http.delete('*/api/admin/newsletters/:id/recipients/:userId', ({ params }) => {
    const n = find(params.id);
    if (!n) return problem(404, 'Newsletter not found.');
    if (!n.recipients.some((r) => r.user_id === params.userId)) return problem(404, 'This user is not a recipient of the newsletter.');
    n.recipients = n.recipients.filter((r) => r.user_id !== params.userId);
    return HttpResponse.json(n);
  }),
  http.get('*/api/admin/newsletters/:id/preview', ({ params }) => {
    const n = find(params.id);
    return n ? HttpResponse.json(preview(n)) : problem(404, 'Newsletter not found.');
  }),
  http.post('*/api/admin/newsletters/:id/send', ({ params }) => {
    const n = find(params.id);
    if (!n) return problem(404, 'Newsletter not found.');
    if (n.recipients.length === 0) return problem(409, 'This newsletter has no recipients yet.');
    newsletters.sent.push(n.newsletter_id);
    n.last_sent_at = newsletters.now;
    return HttpResponse.json({ queued: n.recipients.length }, { status: 202 });
  }),

  // The kill switch: a venue admin stops any company, a company admin their own; only a
  // venue admin releases it (409 when not stopped).
  http.post('*/api/companies/:id/kill-switch', ({ request, params }) => {
    admin.requests.push({ method: 'POST', path: new URL(request.url).pathname, body: undefined });
    const who = caller(request);
    const own = who?.roles.includes('company-admin') && who.company_id === params.id;
    if (!who?.roles.includes('upstairs-admin') && !own) return problem(403, 'You do not have permission to do this.');
    const c = admin.companies.find((x) => x.company_id === params.id);
    if (!c) return problem(404, 'Company not found.');
    c.trading_stopped_at ??= newsletters.now;
    return HttpResponse.json(c);
  }),
  http.delete('*/api/companies/:id/kill-switch', ({ request, params }) => {
    admin.requests.push({ method: 'DELETE', path: new URL(request.url).pathname, body: undefined });
    if (!caller(request)?.roles.includes('upstairs-admin')) return problem(403, 'You do not have permission to do this.');
    const c = admin.companies.find((x) => x.company_id === params.id);
    if (!c) return problem(404, 'Company not found.');
    if (!c.trading_stopped_at) return problem(409, "This company's trading is not stopped.");
    c.trading_stopped_at = null;
    return HttpResponse.json(c);
  }),
];
