import type { components } from '@/lib/api/schema';
import { http, HttpResponse, type HttpHandler } from 'msw';
import { minuteOfSession } from '@/lib/trading-format';
import { db } from './db';

// In-memory admin data behind the MSW handlers; the server's own rules are
// tested against the real server, these only echo what the panels send.

type Ref = { company_id: string; name: string };
export type MockCompany = components['schemas']['CompanyDto'];
export type MockAccount = components['schemas']['AccountDto'];
export type MockExchange = components['schemas']['ExchangeDto'];
type ExchangeInput = components['schemas']['ExchangeInput'];

export const admin = {
  companies: [] as MockCompany[],
  instruments: [] as Record<string, unknown>[],
  requests: [] as { method: string; path: string; body: unknown }[],
  nextId: 1,
  /** The venue's firms a counterparty filter may name, and each owner's filter ('me' or a company id). */
  firms: [] as Ref[],
  filters: {} as Record<string, { blocked_companies: Ref[]; min_reliability_score: number | null }>,
  /** The answering node's FIX acceptor; null: FIX off there. */
  fixAcceptor: { address: '127.0.0.1:9878', tls: false, comp_id: 'UPSTAIRS' } as { address: string; tls: boolean; comp_id: string } | null,
  /** Every company's accounts (ADR 0045), oldest first. */
  accounts: [] as MockAccount[],
  /** Each instrument's dated settings (absent: one version in force, read from the instrument). */
  settings: {} as Record<string, MockSetting[]>,
  /** The exchanges' calendars (ADR 0052), by MIC. */
  exchanges: [] as MockExchange[],
};

/** An exchange as the server lists it: its calendar, its instruments (counted by MIC) and a closed status unless overridden. */
export function mockExchange(calendar: Pick<MockExchange, 'mic' | 'name'> & Partial<MockExchange>): MockExchange {
  const x = {
    time_zone: 'Europe/London',
    open_time: '08:00',
    close_time: '18:00',
    parent_orders_from: '07:00',
    days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri'] as MockExchange['days'],
    holidays: [],
    updated_at: now,
    ...calendar,
  };
  const { holidays: _holidays, updated_at: _updatedAt, status, instruments, ...rest } = x;
  return {
    ...x,
    instruments: instruments ?? admin.instruments.filter((i) => i.exchange_iso_code === x.mic).length,
    status: status ?? { ...rest, open: false, parent_orders_open: false, closing_soon: false, next_open: null, next_close: null, holiday: null },
  };
}

/** The server's field rules for PUT /admin/exchanges/{mic}, with its messages. */
function exchangeErrors(mic: string, body: ExchangeInput) {
  const errors: { field: string; message: string }[] = [];
  if (!/^[A-Z0-9]{4}$/.test(mic)) errors.push({ field: 'mic', message: 'A MIC is 4 capital letters or digits' });
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: body.time_zone });
  } catch {
    errors.push({ field: 'time_zone', message: `Unknown time zone: ${body.time_zone}` });
  }
  if (body.close_time === body.open_time) errors.push({ field: 'close_time', message: 'The close must differ from the open' });
  const inSession = (t: string) => minuteOfSession(t, body.open_time, body.close_time);
  if (inSession(body.parent_orders_from) > inSession(body.open_time)) {
    errors.push({ field: 'parent_orders_from', message: 'Parent orders cannot open after the open' });
  }
  if (body.days.length === 0) errors.push({ field: 'days', message: 'Pick at least one trading day' });
  const twice = body.holidays.find((h, n) => body.holidays.findIndex((x) => x.date === h.date) !== n);
  if (twice) errors.push({ field: 'holidays', message: `${twice.date} is listed twice` });
  return errors;
}

/** A dated version of an instrument's settings as the server sends it (GET /admin/instruments/{id}/settings). */
export type MockSetting = {
  setting_id: string;
  instrument_id: string;
  effective_from: string;
  tick_size: number;
  exchange_tick_size: number | null;
  min_quantity: number;
  state: 'SCHEDULED' | 'IN_FORCE' | 'SUPERSEDED';
  created_by_email: string | null;
  created_at: string;
};

/** A setting id (a UUID) from a number. */
export const settingId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** An account as the server sends it. */
export function mockAccount(company_id: string, code: string, name: string, active = true): MockAccount {
  return { account_id: `acc-${code.toLowerCase()}`, company_id, code, name, active, created_at: now, updated_at: now };
}

const now = '2026-11-23T09:00:00Z';

function company(name: string, roles: string[], brokers: Ref[] = []): MockCompany {
  return {
    company_id: `c-${name.toLowerCase()}`,
    name,
    full_name: `${name} Ltd`,
    ems_identifier: null,
    account: null,
    trade_confirmation_email: roles.includes('broker') ? `ops@${name.toLowerCase()}.test` : null,
    trade_confirmation_via_email_enabled: roles.includes('broker'),
    fix_comp_id: null,
    fix_password_set: false,
    fix_reset_on_logon: false,
    fix_cancel_on_disconnect: true,
    default_broker: brokers[0] ?? null,
    brokers,
    roles,
    reliability_score: 100,
    trading_stopped_at: null,
    created_at: now,
    updated_at: now,
  };
}

export function resetAdminMocks() {
  const northgate = company('Northgate', ['broker']);
  const baltic = company('Baltic', ['broker']);
  const ref = (c: MockCompany) => ({ company_id: c.company_id, name: c.name });
  admin.companies = [northgate, baltic, company('Halyard', [], [ref(northgate), ref(baltic)])];
  admin.fixAcceptor = { address: '127.0.0.1:9878', tls: false, comp_id: 'UPSTAIRS' };
  admin.instruments = [
    {
      instrument_id: 'ai-1', name: 'Euribor 3M Dec26-Mar27', term: 'Dec26-Mar27', description: '', country: 'EU', currency: 'EUR', exchange_id: 'I',
      exchange: 'ICE Futures Europe', exchange_iso_code: 'IFEU', exchange_instrument_id: null, bbg_code: 'ERZ6ERH7 Comdty', tick_size: 0.005,
      exchange_tick_size: 0.005, min_quantity: 500, min_tick_price: -0.04, max_tick_price: -0.015, active: true, is_sandbox: false,
      reversed_spread: false, created_at: now, updated_at: now, band_seen_at: now, prices_stale_after: null, prices_stale: false,
    },
  ];
  admin.settings = {
    'ai-1': [
      {
        setting_id: settingId(3), instrument_id: 'ai-1', effective_from: '2027-01-04T07:00:00Z', tick_size: 0.0025, exchange_tick_size: 0.0025,
        min_quantity: 250, state: 'SCHEDULED', created_by_email: 'ada@upstairs.test', created_at: '2026-11-20T10:15:00Z',
      },
      {
        setting_id: settingId(2), instrument_id: 'ai-1', effective_from: '2026-06-01T06:00:00Z', tick_size: 0.005, exchange_tick_size: 0.005,
        min_quantity: 500, state: 'IN_FORCE', created_by_email: 'ada@upstairs.test', created_at: '2026-05-20T08:00:00Z',
      },
      {
        setting_id: settingId(1), instrument_id: 'ai-1', effective_from: '2025-03-03T07:00:00Z', tick_size: 0.01, exchange_tick_size: null,
        min_quantity: 100, state: 'SUPERSEDED', created_by_email: null, created_at: '2025-03-03T07:00:00Z',
      },
    ],
  };
  admin.exchanges = [
    mockExchange({
      mic: 'IFEU',
      name: 'ICE Futures Europe',
      holidays: [
        { date: '2020-12-25', name: 'Christmas Day' },
        { date: '2099-12-25', name: 'Christmas Day' },
        { date: '2099-12-28', name: null },
      ],
    }),
  ];
  admin.requests = [];
  admin.nextId = 1;
  admin.firms = [{ company_id: 'c-corvid', name: 'Corvid' }, { company_id: 'c-halyard', name: 'Halyard' }, { company_id: 'c-kestrel', name: 'Kestrel' }];
  admin.filters = {};
  admin.accounts = [
    // The trading mocks' user's firm (Acme Capital), one of its accounts closed.
    mockAccount('c-1', 'ACME-MACRO', 'Acme Global Macro'),
    mockAccount('c-1', 'ACME-RATES', 'Acme Rates'),
    mockAccount('c-1', 'ACME-OLD', 'Acme legacy book', false),
    mockAccount('c-halyard', 'HAL-MACRO', 'Halyard Global Macro Fund'),
  ];
}

/** A filter as the server answers it, the blocked firms by name. */
const filterOf = (owner: string) => admin.filters[owner] ?? { blocked_companies: [], min_reliability_score: null };

async function putFilter(request: Request, owner: string) {
  await record(request);
  const body = (await request.json()) as { blocked_company_ids: string[]; min_reliability_score: number | null };
  admin.filters[owner] = {
    blocked_companies: admin.firms.filter((f) => body.blocked_company_ids.includes(f.company_id)),
    min_reliability_score: body.min_reliability_score,
  };
  return HttpResponse.json(filterOf(owner));
}

function caller(request: Request) {
  const token = request.headers.get('Authorization')?.replace(/^Bearer /, '');
  const email = token ? db.sessions.get(token) : undefined;
  return db.users.find((u) => u.email === email);
}

function isAdminRequest(request: Request) {
  return caller(request)?.roles.includes('upstairs-admin') ?? false;
}

function isCompanyAdminListingUsers(request: Request) {
  return request.method === 'GET' && new URL(request.url).pathname === '/api/admin/users' && (caller(request)?.roles.includes('company-admin') ?? false);
}

/** Sales read the admin lists their panels need (the Orders panel's filters, newsletter recipients). */
function isSalesReadingLists(request: Request) {
  const path = new URL(request.url).pathname;
  const lists = ['/api/admin/companies', '/api/admin/instruments', '/api/admin/users'];
  return request.method === 'GET' && lists.includes(path) && (caller(request)?.roles.includes('upstairs-sales') ?? false);
}

function forbidden() {
  return HttpResponse.json({ status: 403, detail: 'You do not have permission to do this.' }, { status: 403 });
}

async function record(request: Request) {
  const url = new URL(request.url);
  // A POST without a body (a send) or a DELETE records none.
  const text = request.method === 'GET' ? '' : await request.clone().text();
  const body: unknown = text ? JSON.parse(text) : undefined;
  admin.requests.push({ method: request.method, path: url.pathname + url.search, body });
}

/** An instrument's settings, newest first (the scheduled ones first); one in force, from the instrument, when none were set. */
function settingsOf(instrument: Record<string, unknown>): MockSetting[] {
  const id = String(instrument.instrument_id);
  admin.settings[id] ??= [
    {
      setting_id: settingId(1000 + admin.nextId++), instrument_id: id, effective_from: String(instrument.created_at), tick_size: Number(instrument.tick_size),
      exchange_tick_size: instrument.exchange_tick_size == null ? null : Number(instrument.exchange_tick_size), min_quantity: Number(instrument.min_quantity),
      state: 'IN_FORCE', created_by_email: null, created_at: String(instrument.created_at),
    },
  ];
  return admin.settings[id].sort((a, b) => Date.parse(b.effective_from) - Date.parse(a.effective_from));
}

const notFound = (detail: string) => HttpResponse.json({ status: 404, detail }, { status: 404 });

/** The server's field rules (the decimals are compared as numbers here: the mock only echoes them). */
function settingErrors(body: Partial<Record<keyof MockSetting, unknown>>) {
  const errors: { field: string; message: string }[] = [];
  const at = typeof body.effective_from === 'string' ? Date.parse(body.effective_from) : NaN;
  if (!(at > Date.now())) errors.push({ field: 'effective_from', message: 'Choose a time after now' });
  if (!(typeof body.tick_size === 'number' && body.tick_size > 0)) errors.push({ field: 'tick_size', message: 'Tick size must be greater than 0' });
  if (body.exchange_tick_size != null && !(typeof body.exchange_tick_size === 'number' && body.exchange_tick_size > 0)) {
    errors.push({ field: 'exchange_tick_size', message: 'Tick size must be greater than 0' });
  }
  if (!(Number.isInteger(body.min_quantity) && Number(body.min_quantity) > 0)) errors.push({ field: 'min_quantity', message: 'The minimum block must be a whole number above 0' });
  return errors;
}

const page = (items: unknown[]) => HttpResponse.json({ items, total_items: items.length });

export const adminHandlers: HttpHandler[] = [
  http.get('*/api/counterparty-firms', ({ request }) => HttpResponse.json(admin.firms.filter((f) => f.company_id !== caller(request)?.company_id))),
  http.get('*/api/users/me/counterparty-filter', () => HttpResponse.json(filterOf('me'))),
  http.put('*/api/users/me/counterparty-filter', ({ request }) => putFilter(request, 'me')),
  http.get('*/api/companies/:id/counterparty-filter', ({ params }) => HttpResponse.json(filterOf(String(params.id)))),
  http.put('*/api/companies/:id/counterparty-filter', ({ request, params }) => putFilter(request, String(params.id))),
  http.all('*/api/admin/*', async ({ request }) => {
    await record(request);
    return isAdminRequest(request) || isCompanyAdminListingUsers(request) || isSalesReadingLists(request) ? undefined : forbidden();
  }),
  http.get('*/api/admin/companies', () => page(admin.companies)),
  http.post('*/api/admin/companies', async ({ request }) => {
    const { fix_password, ...body } = (await request.json()) as Partial<MockCompany> & {
      brokers: { company_id: string }[];
      default_broker: { company_id: string } | null;
      fix_password?: string | null;
    };
    const refOf = (id: string) => ({ company_id: id, name: admin.companies.find((c) => c.company_id === id)?.name ?? id });
    const c: MockCompany = {
      ...company(body.name ?? '', body.roles ?? []),
      ...body,
      fix_password_set: typeof fix_password === 'string',
      company_id: `c-new-${admin.nextId++}`,
      brokers: body.brokers.map((b) => refOf(b.company_id)),
      default_broker: body.default_broker ? refOf(body.default_broker.company_id) : null,
    } as MockCompany;
    if (admin.companies.some((x) => x.name === c.name)) {
      return HttpResponse.json({ status: 400, detail: 'The company is not valid.', errors: [{ field: 'name', message: 'A company with this name already exists.' }] }, { status: 400 });
    }
    admin.companies.push(c);
    return HttpResponse.json(c, { status: 201 });
  }),
  http.patch('*/api/admin/companies/:id', async ({ request, params }) => {
    const c = admin.companies.find((x) => x.company_id === params.id);
    if (!c) return HttpResponse.json({ status: 404, detail: 'Company not found.' }, { status: 404 });
    const body = (await request.json()) as {
      name: string;
      fix_comp_id?: string | null;
      fix_password?: string | null;
      fix_reset_on_logon?: boolean;
      fix_cancel_on_disconnect?: boolean;
    };
    Object.assign(c, { name: body.name });
    // The FIX fields as the server keeps them: an absent password stays as it is.
    if (body.fix_comp_id !== undefined) c.fix_comp_id = body.fix_comp_id || null;
    if (body.fix_password !== undefined) c.fix_password_set = body.fix_password !== null;
    if (body.fix_reset_on_logon !== undefined) c.fix_reset_on_logon = body.fix_reset_on_logon;
    if (body.fix_cancel_on_disconnect !== undefined) c.fix_cancel_on_disconnect = body.fix_cancel_on_disconnect;
    return HttpResponse.json(c);
  }),
  // A company admin lists its own company's users only (DESIGN section 4).
  http.get('*/api/admin/users', ({ request }) => {
    const companyId = isAdminRequest(request) || isSalesReadingLists(request) ? null : caller(request)?.company_id;
    return page(db.users.filter((u) => !companyId || u.company_id === companyId).map(({ password: _password, ...u }) => u));
  }),
  http.post('*/api/users', async ({ request }) => {
    await record(request);
    if (!isAdminRequest(request)) return forbidden();
    const body = (await request.json()) as Record<string, unknown> & { email: string; company_id: string };
    const u = db.addUser({ ...(body as object), user_id: `u-new-${admin.nextId++}`, company_name: admin.companies.find((c) => c.company_id === body.company_id)?.name ?? '', verified: false, auto_accept: null, parent_order_limit_multiplier: null });
    const { password: _password, ...rest } = u;
    return HttpResponse.json(rest, { status: 201 });
  }),
  // Every company with a FIX CompID, by name, never logged on (tests override it for the other states).
  http.get('*/api/admin/fix-sessions', () =>
    HttpResponse.json({
      items: admin.companies
        .filter((c) => c.fix_comp_id)
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((c) => ({ company_id: c.company_id, company_name: c.name, fix_comp_id: c.fix_comp_id, state: 'NEVER', next_sender_seq: 1, next_target_seq: 1, last_message_at: null })),
      acceptor: admin.fixAcceptor,
      market_data: null,
    }),
  ),
  http.post('*/api/admin/companies/:id/accounts', async ({ request, params }) => {
    const body = (await request.json()) as { code: string; name: string };
    const companyId = String(params.id);
    if (admin.accounts.some((a) => a.company_id === companyId && a.code === body.code)) {
      const detail = 'This company already has an account with this code';
      return HttpResponse.json({ status: 409, detail, errors: [{ field: 'code', message: detail }] }, { status: 409 });
    }
    const a = mockAccount(companyId, body.code, body.name);
    admin.accounts.push(a);
    return HttpResponse.json(a);
  }),
  http.patch('*/api/admin/companies/:id/accounts/:accountId', async ({ request, params }) => {
    const a = admin.accounts.find((x) => x.company_id === params.id && x.account_id === params.accountId);
    if (!a) return HttpResponse.json({ status: 404, detail: 'Account not found.' }, { status: 404 });
    const body = (await request.json()) as { name?: string; active?: boolean };
    if (body.name !== undefined) a.name = body.name;
    if (body.active !== undefined) a.active = body.active;
    return HttpResponse.json(a);
  }),
  http.get('*/api/admin/instruments', () => page(admin.instruments)),
  http.post('*/api/admin/instruments', async ({ request }) => {
    const body = (await request.json()) as Record<string, unknown>;
    const i = { ...body, instrument_id: `ai-new-${admin.nextId++}`, created_at: now, updated_at: now, band_seen_at: now, prices_stale: false };
    admin.instruments.push(i);
    return HttpResponse.json(i, { status: 201 });
  }),
  http.patch('*/api/admin/instruments/:id', async ({ request, params }) => {
    const i = admin.instruments.find((x) => x.instrument_id === params.id);
    if (!i) return HttpResponse.json({ status: 404, detail: 'Instrument not found.' }, { status: 404 });
    Object.assign(i, (await request.json()) as object);
    return HttpResponse.json(i);
  }),
  http.get('*/api/admin/exchanges', () => HttpResponse.json([...admin.exchanges].sort((a, b) => a.mic.localeCompare(b.mic)))),
  http.put('*/api/admin/exchanges/:mic', async ({ request, params }) => {
    const mic = String(params.mic);
    const body = (await request.json()) as ExchangeInput;
    const errors = exchangeErrors(mic, body);
    if (errors.length > 0) return HttpResponse.json({ status: 400, detail: 'The exchange is not valid.', errors }, { status: 400 });
    const x = mockExchange({ mic, ...body, updated_at: new Date().toISOString() });
    const at = admin.exchanges.findIndex((e) => e.mic === mic);
    if (at >= 0) admin.exchanges[at] = x;
    else admin.exchanges.push(x);
    return HttpResponse.json(x, { status: at >= 0 ? 200 : 201 });
  }),
  http.delete('*/api/admin/exchanges/:mic', ({ params }) => {
    const at = admin.exchanges.findIndex((e) => e.mic === params.mic);
    if (at < 0) return notFound('Exchange not found.');
    admin.exchanges.splice(at, 1);
    return new HttpResponse(null, { status: 204 });
  }),
  http.get('*/api/admin/instruments/:id/settings', ({ params }) => {
    const i = admin.instruments.find((x) => x.instrument_id === params.id);
    return i ? HttpResponse.json(settingsOf(i)) : notFound('Instrument not found.');
  }),
  http.post('*/api/admin/instruments/:id/settings', async ({ request, params }) => {
    const i = admin.instruments.find((x) => x.instrument_id === params.id);
    if (!i) return notFound('Instrument not found.');
    const body = (await request.json()) as Partial<Record<keyof MockSetting, unknown>>;
    const errors = settingErrors(body);
    if (errors.length > 0) return HttpResponse.json({ status: 400, detail: 'The settings are not valid.', errors }, { status: 400 });
    const at = Date.parse(String(body.effective_from));
    const list = settingsOf(i);
    if (list.some((s) => s.state === 'SCHEDULED' && Date.parse(s.effective_from) === at)) {
      return HttpResponse.json({ status: 409, detail: "A change of this instrument's settings is already scheduled for that time." }, { status: 409 });
    }
    const s: MockSetting = {
      setting_id: settingId(100 + admin.nextId++),
      instrument_id: String(i.instrument_id),
      effective_from: new Date(at).toISOString(),
      tick_size: body.tick_size as number,
      exchange_tick_size: (body.exchange_tick_size as number | null | undefined) ?? null,
      min_quantity: body.min_quantity as number,
      state: 'SCHEDULED',
      created_by_email: caller(request)?.email ?? null,
      created_at: new Date().toISOString(),
    };
    list.push(s);
    return HttpResponse.json(s, { status: 201 });
  }),
  http.delete('*/api/admin/instruments/:id/settings/:settingId', ({ params }) => {
    const i = admin.instruments.find((x) => x.instrument_id === params.id);
    if (!i) return notFound('Instrument not found.');
    const list = settingsOf(i);
    const s = list.find((x) => x.setting_id === params.settingId);
    if (!s) return notFound('Setting not found.');
    if (s.state !== 'SCHEDULED') return HttpResponse.json({ status: 409, detail: 'This change is in force already: schedule another to change it.' }, { status: 409 });
    list.splice(list.indexOf(s), 1);
    return new HttpResponse(null, { status: 204 });
  }),
];
