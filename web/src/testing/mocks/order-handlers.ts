import { http, HttpResponse, ws, type HttpHandler, type WebSocketHandler } from 'msw';
import type { components } from '@/lib/api/schema';
import { admin } from './admin-handlers';
import { db } from './db';

type PlatformStatus = components['schemas']['PlatformStatusDto'];

// In-memory trading data behind the MSW handlers, for the dashboard tests.
// Deliberately small: the real rules are tested against the real server.

export type MockInstrument = {
  instrument_id: string;
  name: string;
  term: string;
  tick_size: number;
  min_quantity: number;
  min_tick_price: number;
  max_tick_price: number;
  reversed_spread: boolean;
  /** No recent exchange price (issue 30); fresh when absent. */
  prices_stale?: boolean;
  /** The exchange's MIC and name (ADR 0052): IFEU, ICE Futures Europe when absent. */
  exchange_iso_code?: string;
  exchange?: string;
};

export type MockParent = {
  parent_order_id: string;
  instrument_id: string;
  direction: 'BUY' | 'SELL';
  quantity: number;
  quantities: { tradable: number; working: number; matched: number };
  eligible_brokers: { company_id: string; name: string }[];
  broker_instructions: string | null;
  min_execution?: number | null;
  state: string;
  created_at: string;
};

export type MockOrder = {
  order_id: string;
  parent_order_id: string;
  instrument_id: string;
  state: string;
  price: number;
  quantity: number;
  direction: 'BUY' | 'SELL';
  iceberg: boolean;
  residual: boolean;
  min_execution?: number | null;
  broker_id: string;
  matchable: boolean;
  waiting_for_open?: boolean;
  /** The trader who placed it: the signed-in user (u-1) unless set. */
  created_by?: string;
  created_at: string;
};

const STAMP = '2026-11-23T09:00:00Z';

/** The instrument as the server sends it: the mock's fields plus the ones the dashboard does not read. */
const instrumentDto = (i: MockInstrument) => ({
  description: '', country: 'EU', currency: 'EUR', exchange: 'ICE Futures Europe', exchange_id: 'I', exchange_iso_code: 'IFEU',
  exchange_instrument_id: null, bbg_code: null, exchange_tick_size: i.tick_size, active: true, is_sandbox: false,
  created_at: STAMP, updated_at: STAMP, band_seen_at: STAMP, prices_stale_after: null, prices_stale: false, ...i,
});
const parentDto = (p: MockParent) => ({ created_by: 'u-1', updated_at: p.created_at, min_execution: null, ...p });
const orderDto = (o: MockOrder) => ({ created_by: 'u-1', updated_at: o.created_at, waiting_for_open: false, min_execution: null, ...o });

/** An exchange's status in GET /platform/status (ADR 0052): ICE Futures Europe, open on weekdays 8:00 AM to 6:00 PM, unless overridden. */
export function exchangeStatus(overrides: Partial<components['schemas']['ExchangeStatusDto']> = {}): components['schemas']['ExchangeStatusDto'] {
  return {
    mic: 'IFEU', name: 'ICE Futures Europe', time_zone: 'Europe/London', open_time: '08:00', close_time: '18:00', parent_orders_from: '07:00',
    days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri'], open: true, parent_orders_open: true, closing_soon: false, next_open: null, next_close: null, holiday: null,
    ...overrides,
  };
}

export const BROKER = { company_id: 'b-1', name: 'Northgate' };
/** The firm's other broker, a trade may be given up to. */
export const GIVE_UP_BROKER = { company_id: 'b-2', name: 'Baltic' };

export type MockMatchRequest = {
  order_match_request_id: string;
  instrument_id: string;
  order_id: string;
  role: 'REQUESTER' | 'RESPONDER';
  direction: 'BUY' | 'SELL';
  price: number;
  quantity: number;
  iceberg: boolean;
  state: string;
  created_at: string;
  expired_at: string;
  updated_at: string;
  auto_answer_at: string | null;
  auto_accept: boolean | null;
  answered_automatically: boolean;
};

export const trading = {
  instruments: [] as MockInstrument[],
  parents: [] as MockParent[],
  orders: [] as MockOrder[],
  levels: new Map<string, { price: number; buy_quantity: number; sell_quantity: number; own_buy_quantity: number; own_sell_quantity: number }[]>(),
  /** GET /platform/status: the open flags, and any of the calendar's fields a test sets (hours, always_open). */
  status: { open: true, parent_orders_open: true, closing_soon: false } as { open: boolean; parent_orders_open: boolean; closing_soon: boolean } & Partial<PlatformStatus>,
  requests: [] as { method: string; path: string; body: unknown }[],
  /** What a take would hit (the dry run), and the match requests there are. */
  breakdown: [] as { price: number; quantity: number; responding_broker_name: string; responding_order_iceberg: boolean }[],
  matchRequests: [] as MockMatchRequest[],
  /** The requester's RFQs, and the RFQs addressed to the user's firm as a provider. */
  rfqs: [] as MockRfq[],
  incoming: [] as MockIncomingRfq[],
  /** The allocations of the caller's trades, by order id (ADR 0045). */
  allocations: new Map<string, MockAllocation>(),
  /** Whether the firm's execution system has a live FIX session (POST /parent-orders/execution-system-pulls). */
  executionSystemConnected: false,
  nextId: 1,
};

export type MockAllocation = components['schemas']['AllocationDto'];
export type MockRfq = components['schemas']['RfqDto'];
export type MockIncomingRfq = components['schemas']['IncomingRfqDto'];
export type MockRfqResponse = components['schemas']['RfqResponseDto'];

export const PROVIDERS = [
  { company_id: 'lp-1', name: 'Meridian' },
  { company_id: 'lp-2', name: 'Ostrava' },
];

/** An RFQ response as the server sends it, awaiting a quote unless overridden. */
export function rfqResponse(rfqId: string, companyName: string, overrides: Partial<MockRfqResponse> = {}): MockRfqResponse {
  return {
    rfq_response_id: `r-${trading.nextId++}`,
    rfq_id: rfqId,
    state: 'AWAITING_RESPONSE',
    company_name: companyName,
    buy_price: null,
    buy_quantity: null,
    sell_price: null,
    sell_quantity: null,
    created_at: STAMP,
    updated_at: STAMP,
    ...overrides,
  };
}

export function addIncomingRfq(overrides: Partial<MockIncomingRfq> = {}): MockIncomingRfq {
  const id = `q-${trading.nextId++}`;
  const r: MockIncomingRfq = {
    rfq_id: id,
    instrument_id: 'i-1',
    direction: 'BUY',
    quantity: 2000,
    two_way: false,
    requester_company_name: null,
    state: 'OPEN',
    created_at: new Date().toISOString(),
    expired_at: new Date(Date.now() + 120_000).toISOString(),
    expires_in_seconds: 120,
    response: rfqResponse(id, 'Acme Capital'),
    ...overrides,
  };
  trading.incoming.push(r);
  return r;
}

export function addMatchRequest(overrides: Partial<MockMatchRequest> = {}): MockMatchRequest {
  const m: MockMatchRequest = {
    order_match_request_id: `m-${trading.nextId++}`,
    instrument_id: 'i-1',
    order_id: `o-${trading.nextId++}`,
    role: 'RESPONDER',
    direction: 'SELL',
    price: -0.02,
    quantity: 1000,
    iceberg: false,
    state: 'PENDING',
    created_at: new Date().toISOString(),
    expired_at: new Date(Date.now() + 5 * 60_000).toISOString(),
    updated_at: new Date().toISOString(),
    auto_answer_at: null,
    auto_accept: null,
    answered_automatically: false,
    ...overrides,
  };
  trading.matchRequests.push(m);
  return m;
}

export function resetOrderMocks() {
  stomp.subscriptions = [];
  stomp.connectHeaders = [];
  trading.instruments = [
    { instrument_id: 'i-1', name: 'Euribor 3M Dec26-Mar27', term: 'Dec26-Mar27', tick_size: 0.005, min_quantity: 500, min_tick_price: -0.04, max_tick_price: -0.015, reversed_spread: false },
    { instrument_id: 'i-2', name: 'Euro-Bund Dec26-Mar27 calendar spread block', term: 'Dec26-Mar27', tick_size: 0.01, min_quantity: 1000, min_tick_price: 0.42, max_tick_price: 0.52, reversed_spread: true },
  ];
  trading.parents = [];
  trading.orders = [];
  trading.levels = new Map();
  trading.status = { open: true, parent_orders_open: true, closing_soon: false };
  trading.requests = [];
  trading.breakdown = [];
  trading.matchRequests = [];
  trading.rfqs = [];
  trading.incoming = [];
  trading.allocations = new Map();
  trading.executionSystemConnected = false;
  trading.nextId = 1;
}

export function addParent(overrides: Partial<MockParent> = {}): MockParent {
  const p: MockParent = {
    parent_order_id: `p-${trading.nextId++}`,
    instrument_id: 'i-1',
    direction: 'BUY',
    quantity: 3000,
    quantities: { tradable: 3000, working: 0, matched: 0 },
    eligible_brokers: [BROKER],
    broker_instructions: null,
    state: 'ACTIVE',
    created_at: '2026-11-23T10:00:00Z',
    ...overrides,
  };
  trading.parents.push(p);
  return p;
}

function problem(status: number, detail: string, errors?: { field: string; message: string }[]) {
  return HttpResponse.json({ type: 'about:blank', title: 'Error', status, detail, ...(errors ? { errors } : {}) }, { status });
}

function callerOf(request: Request) {
  const token = request.headers.get('Authorization')?.replace(/^Bearer /, '');
  const email = token ? db.sessions.get(token) : undefined;
  return db.users.find((u) => u.email === email);
}

function signedIn(request: Request) {
  const token = request.headers.get('Authorization')?.replace(/^Bearer /, '');
  return token !== undefined && db.sessions.has(token);
}

async function record(request: Request) {
  const text = request.method === 'GET' || request.method === 'DELETE' ? '' : await request.clone().text();
  const body: unknown = text === '' ? undefined : JSON.parse(text);
  trading.requests.push({ method: request.method, path: new URL(request.url).pathname + new URL(request.url).search, body });
}

function recompute(parent: MockParent) {
  const mine = trading.orders.filter((o) => o.parent_order_id === parent.parent_order_id);
  const working = mine.filter((o) => o.state === 'WORKING').reduce((s, o) => s + o.quantity, 0);
  const matched = mine.filter((o) => o.state === 'MATCHED').reduce((s, o) => s + o.quantity, 0);
  parent.quantities = { working, matched, tradable: parent.quantity - working - matched };
}

/** Every trading call needs a session; the calls are recorded for the tests to inspect. */
const signedInOnly: HttpHandler[] = [
  http.all('*/api/*', async ({ request }) => {
    const path = new URL(request.url).pathname;
    const isTrading = /^\/api\/(platform|instruments|companies|parent-orders|orders|order-match-requests|rfqs|liquidity-providers|allocations)(\/|$)/.test(path);
    if (!isTrading) return undefined;
    if (!signedIn(request)) return problem(401, 'Not signed in.');
    await record(request);
    return undefined;
  }),
];

const rfqHandlers: HttpHandler[] = [
  http.get('*/api/liquidity-providers', () => HttpResponse.json(PROVIDERS)),
  http.get('*/api/rfqs/all/responses', () => HttpResponse.json(trading.incoming)),
  http.get('*/api/rfqs', () => HttpResponse.json(trading.rfqs.filter((r) => r.state === 'OPEN'))),
  http.post('*/api/rfqs', async ({ request }) => {
    const body = (await request.json()) as components['schemas']['CreateRfqRequest'];
    const parent = trading.parents.find((p) => p.parent_order_id === body.parent_order_id);
    if (!parent) return problem(404, 'Parent order not found.');
    const id = `q-${trading.nextId++}`;
    const seconds = body.expires_in_seconds ?? 120;
    const responses = body.liquidity_provider_ids.map((lp) => rfqResponse(id, PROVIDERS.find((p) => p.company_id === lp)?.name ?? lp));
    const rfq: MockRfq = {
      rfq_id: id,
      parent_order_id: parent.parent_order_id,
      order_id: `o-${trading.nextId++}`,
      instrument_id: parent.instrument_id,
      direction: parent.direction,
      quantity: body.quantity,
      two_way: body.two_way ?? false,
      anonymous: body.anonymous ?? false,
      state: 'OPEN',
      liquidity_provider_ids: body.liquidity_provider_ids,
      responses_ids: responses.map((r) => r.rfq_response_id),
      responses,
      created_at: new Date().toISOString(),
      expired_at: new Date(Date.now() + seconds * 1000).toISOString(),
      expires_in_seconds: seconds,
    };
    trading.rfqs.push(rfq);
    return HttpResponse.json(rfq, { status: 201 });
  }),
  http.patch('*/api/rfqs/:id/responses/:responseId', async ({ request, params }) => {
    const body = (await request.json()) as components['schemas']['AcceptQuoteRequest'];
    const rfq = trading.rfqs.find((r) => r.rfq_id === params.id);
    const chosen = rfq?.responses.find((x) => x.rfq_response_id === params.responseId);
    if (!rfq || !chosen) return problem(404, 'RFQ not found.');
    if (chosen.state !== 'RESPONDED') return problem(409, 'Only a received quote can be accepted.');
    // The requester trades against the provider's sell when buying, their buy when selling.
    const [price, quantity] =
      rfq.direction === 'BUY' ? [chosen.sell_price, chosen.sell_quantity] : [chosen.buy_price, chosen.buy_quantity];
    if (body.price != null && (body.price !== price || body.quantity !== quantity)) {
      return problem(409, 'The quote has changed: check the new price and accept again.');
    }
    for (const x of rfq.responses) x.state = x === chosen ? 'ACCEPTED' : 'REJECTED_BY_REQUESTER';
    rfq.state = 'COMPLETED';
    return HttpResponse.json(rfq);
  }),
  http.patch('*/api/rfqs/:id', ({ params }) => {
    const rfq = trading.rfqs.find((r) => r.rfq_id === params.id);
    if (!rfq) return problem(404, 'RFQ not found.');
    rfq.state = 'CANCELLED';
    for (const x of rfq.responses) x.state = 'CANCELLED';
    return HttpResponse.json(rfq);
  }),
  http.post('*/api/rfqs/:id/responses', async ({ request, params }) => {
    const body = (await request.json()) as components['schemas']['AnswerRfqRequest'];
    const rfq = trading.incoming.find((r) => r.rfq_id === params.id);
    if (!rfq) return problem(404, 'RFQ not found.');
    const r = rfq.response;
    if (body.state === 'REJECTED_BY_RESPONDER') r.state = 'REJECTED_BY_RESPONDER';
    else Object.assign(r, { state: 'RESPONDED', buy_price: body.buy_price ?? null, buy_quantity: body.buy_quantity ?? null, sell_price: body.sell_price ?? null, sell_quantity: body.sell_quantity ?? null });
    return HttpResponse.json(r);
  }),
];

export const orderHandlers: HttpHandler[] = [
  ...signedInOnly,
  ...rfqHandlers,
  http.get('*/api/platform/status', () =>
    HttpResponse.json({
      always_open: false,
      open_time: '09:00',
      close_time: '17:00',
      parent_orders_from: '05:30',
      time_zone: 'Europe/London',
      next_open: null,
      next_close: null,
      holiday: null,
      trading_stopped_at: null,
      exchanges: [],
      ...trading.status,
    } satisfies PlatformStatus),
  ),
  http.get('*/api/instruments', ({ request }) => {
    const name = (new URL(request.url).searchParams.get('name') ?? '').toLowerCase();
    return HttpResponse.json(trading.instruments.filter((i) => i.name.toLowerCase().includes(name)).map(instrumentDto));
  }),
  http.get('*/api/instruments/:id', ({ params }) => {
    const i = trading.instruments.find((x) => x.instrument_id === params.id);
    return i ? HttpResponse.json(instrumentDto(i)) : problem(404, 'Instrument not found.');
  }),
  http.get('*/api/instruments/:id/book', ({ params }) => {
    const i = trading.instruments.find((x) => x.instrument_id === params.id);
    if (!i) return problem(404, 'Instrument not found.');
    return HttpResponse.json({ instrument_id: i.instrument_id, min_tick_price: i.min_tick_price, max_tick_price: i.max_tick_price, prices_stale: i.prices_stale ?? false, levels: trading.levels.get(i.instrument_id) ?? [] });
  }),
  http.get('*/api/instruments/:id/market-data', ({ params }) => {
    const i = trading.instruments.find((x) => x.instrument_id === params.id);
    if (!i) return problem(404, 'Instrument not found.');
    const levels = trading.levels.get(i.instrument_id) ?? [];
    const buys = levels.filter((l) => l.buy_quantity > 0).map((l) => l.price);
    const sells = levels.filter((l) => l.sell_quantity > 0).map((l) => l.price);
    return HttpResponse.json({
      best_buy_price: buys.length ? Math.max(...buys) : null,
      best_sell_price: sells.length ? Math.min(...sells) : null,
      min_tick_price: i.min_tick_price,
      max_tick_price: i.max_tick_price,
      prices_stale: i.prices_stale ?? false,
    });
  }),
  // A company the admin mocks know comes whole (the kill switch reads it); any other, as trading needs it.
  http.get('*/api/companies/:id', ({ params }) =>
    HttpResponse.json(admin.companies.find((c) => c.company_id === params.id) ?? { company_id: params.id, default_broker: BROKER, brokers: [BROKER] }),
  ),
  // A company's accounts: all for the venue's staff, the open ones for its own people, none for other firms.
  http.get('*/api/companies/:id/accounts', ({ request, params }) => {
    const caller = callerOf(request);
    const staff = caller?.roles.some((r) => r === 'upstairs-admin' || r === 'upstairs-sales') ?? false;
    if (!staff && caller?.company_id !== params.id) return problem(404, 'Company not found.');
    return HttpResponse.json(admin.accounts.filter((a) => a.company_id === params.id && (staff || a.active)));
  }),
  // The caller's allocations, the latest first (this mock keeps one trader's).
  http.get('*/api/allocations', () => HttpResponse.json([...trading.allocations.values()].sort((a, b) => b.updated_at.localeCompare(a.updated_at)))),
  http.get('*/api/orders/:id/allocation', ({ params }) => {
    const a = trading.allocations.get(String(params.id));
    return a ? HttpResponse.json(a) : problem(404, 'This trade is not allocated.');
  }),
  // Echoes a whole allocation as a new version; the rules are the server's (tests override it for its refusals).
  http.put('*/api/orders/:id/allocation', async ({ request, params }) => {
    const orderId = String(params.id);
    const body = (await request.json()) as components['schemas']['AllocationRequest'];
    const before = trading.allocations.get(orderId);
    const broker = admin.companies.find((c) => c.company_id === body.give_up_broker_id) ?? [BROKER, GIVE_UP_BROKER].find((b) => b.company_id === body.give_up_broker_id);
    const a: MockAllocation = {
      order_id: orderId,
      version: (before?.version ?? 0) + 1,
      lines: body.lines.map((l) => {
        const account = admin.accounts.find((x) => x.account_id === l.account_id);
        return { account_id: l.account_id, code: account?.code ?? '?', name: account?.name ?? '?', quantity: l.quantity };
      }),
      give_up_broker: broker ? { company_id: broker.company_id, name: broker.name } : null,
      broker_ack: 'PENDING',
      broker_ack_text: null,
      updated_at: new Date().toISOString(),
    };
    trading.allocations.set(orderId, a);
    return HttpResponse.json(a);
  }),
  http.get('*/api/parent-orders', () => HttpResponse.json(trading.parents.filter((p) => p.state !== 'CANCELLED').map(parentDto))),
  http.post('*/api/parent-orders', async ({ request }) => {
    const body = (await request.json()) as { direction: 'BUY' | 'SELL'; instrument_id: string; quantity: number; broker_instructions: string | null };
    if (body.quantity > 100_000) return problem(400, 'The maximum quantity is 100000', [{ field: 'quantity', message: 'The maximum quantity is 100000' }]);
    const p = addParent({ ...body, quantities: { tradable: body.quantity, working: 0, matched: 0 } });
    return HttpResponse.json(parentDto(p), { status: 201 });
  }),
  http.post('*/api/parent-orders/execution-system-pulls', () =>
    trading.executionSystemConnected
      ? HttpResponse.json({ request_id: `pull-${trading.nextId++}`, requested_at: '2026-11-23T10:00:00Z' }, { status: 202 })
      : problem(409, 'Your firm has no execution system connected to the venue by FIX.'),
  ),
  http.delete('*/api/parent-orders/:id', ({ params }) => {
    const p = trading.parents.find((x) => x.parent_order_id === params.id);
    if (!p) return problem(404, 'Parent order not found.');
    p.state = 'CANCELLED';
    return new HttpResponse(null, { status: 204 });
  }),
  http.get('*/api/orders', () => HttpResponse.json(trading.orders.filter((o) => o.state !== 'CANCELLED').map(orderDto))),
  http.post('*/api/orders', async ({ request }) => {
    const body = (await request.json()) as Omit<MockOrder, 'order_id' | 'state' | 'price' | 'matchable' | 'created_at'> & { limit_price: number };
    const parent = trading.parents.find((p) => p.parent_order_id === body.parent_order_id);
    if (!parent) return problem(404, 'Parent order not found.');
    const o: MockOrder = {
      order_id: `o-${trading.nextId++}`,
      parent_order_id: body.parent_order_id,
      instrument_id: parent.instrument_id,
      direction: parent.direction,
      state: 'WORKING',
      price: body.limit_price,
      quantity: body.quantity,
      iceberg: body.iceberg,
      residual: body.residual,
      // The server's rule (ADR 0041): the order's own size, else its parent's up to its quantity.
      min_execution: body.min_execution ?? (parent.min_execution == null ? null : Math.min(parent.min_execution, body.quantity)),
      broker_id: body.broker_id,
      matchable: true,
      created_at: '2026-11-23T10:01:00Z',
    };
    trading.orders.push(o);
    recompute(parent);
    return HttpResponse.json(orderDto(o), { status: 201 });
  }),
  http.patch('*/api/orders/:id', async ({ request, params }) => {
    const o = trading.orders.find((x) => x.order_id === params.id);
    if (!o) return problem(404, 'Order not found.');
    const body = (await request.json()) as { quantity: number; limit_price: number; residual: boolean; iceberg: boolean; min_execution?: number | null };
    Object.assign(o, { quantity: body.quantity, price: body.limit_price, residual: body.residual, iceberg: body.iceberg });
    if (body.min_execution !== undefined) o.min_execution = body.min_execution;
    const parent = trading.parents.find((p) => p.parent_order_id === o.parent_order_id);
    if (parent) recompute(parent);
    return HttpResponse.json(orderDto(o));
  }),
  http.post('*/api/order-match-requests', async ({ request }) => {
    const body = (await request.json()) as { dry_run?: boolean; quantity: number; price: number };
    if (body.dry_run) return HttpResponse.json(trading.breakdown);
    if (trading.breakdown.length === 0) return problem(409, 'This trade could not be matched due to your trade criteria');
    const sent = trading.breakdown.map((b) =>
      addMatchRequest({ role: 'REQUESTER', direction: 'BUY', price: b.price, quantity: b.quantity, iceberg: b.responding_order_iceberg }),
    );
    return HttpResponse.json(sent, { status: 201 });
  }),
  http.get('*/api/order-match-requests', ({ request }) => {
    // The caller's requests in a state (default PENDING), newest first, as the server lists them.
    const state = new URL(request.url).searchParams.get('state') ?? 'PENDING';
    return HttpResponse.json(trading.matchRequests.filter((m) => m.state === state).reverse());
  }),
  http.get('*/api/order-match-requests/:id', ({ params }) => {
    const m = trading.matchRequests.find((x) => x.order_match_request_id === params.id);
    return m ? HttpResponse.json(m) : problem(404, 'Match request not found.');
  }),
  http.patch('*/api/order-match-requests/:id', async ({ request, params }) => {
    const m = trading.matchRequests.find((x) => x.order_match_request_id === params.id);
    if (!m) return problem(404, 'Match request not found.');
    if (m.state !== 'PENDING') return problem(409, 'This match request is no longer pending.');
    m.state = ((await request.json()) as { state: string }).state;
    // The received notification follows its request, as on the server.
    for (const n of db.notifications.filter((x) => x.order_match_request_id === m.order_match_request_id)) {
      n.status = m.state as typeof n.status;
    }
    return HttpResponse.json(m);
  }),
  http.delete('*/api/orders/:id', ({ params }) => {
    const o = trading.orders.find((x) => x.order_id === params.id);
    if (!o) return problem(404, 'Order not found.');
    o.state = 'CANCELLED';
    const parent = trading.parents.find((p) => p.parent_order_id === o.parent_order_id);
    if (parent) recompute(parent);
    return HttpResponse.json(o);
  }),
];

type Client = { send: (data: string) => void };

/** A minimal STOMP broker on /ws: CONNECT, SUBSCRIBE, UNSUBSCRIBE, and `publish` for the tests. */
export const stomp = {
  subscriptions: [] as { client: Client; id: string; destination: string }[],
  connectHeaders: [] as Record<string, string>[],
  publish(destination: string, body: unknown) {
    let n = 0;
    for (const s of this.subscriptions.filter((x) => x.destination === destination)) {
      s.client.send(`MESSAGE\ndestination:${destination}\nsubscription:${s.id}\nmessage-id:${++n}\ncontent-type:application/json\n\n${JSON.stringify(body)}\0`);
    }
  },
};

function frames(data: string) {
  return data
    .split('\0')
    .map((f) => f.replace(/^\n+/, ''))
    .filter(Boolean)
    .map((f) => {
      const [head = ''] = f.split('\n\n');
      const [command = '', ...lines] = head.split('\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1)]));
      return { command, headers };
    });
}

const socket = ws.link('*/ws');

export const stompHandlers: WebSocketHandler[] = [
  socket.addEventListener('connection', ({ client }) => {
    client.addEventListener('message', (event) => {
      if (typeof event.data !== 'string') return;
      for (const { command, headers } of frames(event.data)) {
        if (command === 'CONNECT' || command === 'STOMP') {
          stomp.connectHeaders.push(headers);
          client.send('CONNECTED\nversion:1.2\nheart-beat:0,0\n\n\0');
        } else if (command === 'SUBSCRIBE') {
          stomp.subscriptions.push({ client, id: headers.id ?? '', destination: headers.destination ?? '' });
        } else if (command === 'UNSUBSCRIBE') {
          stomp.subscriptions = stomp.subscriptions.filter((s) => !(s.client === client && s.id === headers.id));
        }
      }
    });
    client.addEventListener('close', () => {
      stomp.subscriptions = stomp.subscriptions.filter((s) => s.client !== client);
    });
  }),
];
