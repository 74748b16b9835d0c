import { http, HttpResponse, type HttpHandler } from 'msw';
import type { components } from '@/lib/api/schema';
import { dec, onTick } from '@/lib/decimal';
import { db } from './db';
import { trading } from './order-handlers';

// The Orders panel's and Billing's endpoints behind MSW: in-memory, answering like the
// server (who may call them, paging, filters, the tick and state rules of the price
// correction); the server's own rules are tested against the real server.

export type MockAdminOrder = components['schemas']['AdminOrderDto'];
export type MockBillingItem = components['schemas']['BillingItemDto'];

export const adminOrders = {
  orders: [] as MockAdminOrder[],
  billing: [] as MockBillingItem[],
  /** Every call, with its query or body, in order. */
  requests: [] as { method: string; path: string; query: URLSearchParams; body: unknown }[],
};

export function resetAdminOrderMocks() {
  adminOrders.orders = [];
  adminOrders.billing = [];
  adminOrders.requests = [];
}

const COMPANIES = [
  { company_id: 'c-halyard', company_name: 'Halyard', email: 'tess@halyard.test', user_id: 'u-tess' },
  { company_id: 'c-kestrel', company_name: 'Kestrel', email: 'kai@kestrel.test', user_id: 'u-kai' },
];
const BROKERS = [
  { id: 'b-1', name: 'Northgate' },
  { id: 'b-2', name: 'Baltic' },
];
const STATES = ['WORKING', 'MATCHED', 'CANCELLED', 'BROKER_FILLED', 'EXPIRED'];

/**
 * `n` orders, one a minute from 24/11/2026 09:00 UTC (newest last here, listed newest first):
 * Halyard and Kestrel in turn, every fourth on instrument i-2 (tick 0.01, at 0.45) and the
 * others on i-1 (tick 0.005, at -0.02) of the trading mocks, states cycling from WORKING.
 */
export function mockAdminOrders(n: number): MockAdminOrder[] {
  return Array.from({ length: n }, (_, i) => {
    const by = COMPANIES[i % 2]!;
    const euribor = i % 4 !== 3;
    const at = new Date(Date.UTC(2026, 10, 24, 9, i)).toISOString();
    return {
      // Like UUIDv7: the leading digits are the same for orders created close together.
      order_id: `01a2136e-0000-7000-8000-${String(i).padStart(12, '0')}`,
      parent_order_id: `p-${i}`,
      created_by: by,
      instrument: euribor ? { id: 'i-1', name: 'Euribor 3M Dec26-Mar27' } : { id: 'i-2', name: 'Euro-Bund Dec26-Mar27 calendar spread block' },
      quantity: 1000 + i * 100,
      direction: i % 2 === 0 ? 'BUY' : 'SELL',
      price: euribor ? -0.02 : 0.45,
      tick_size: euribor ? 0.005 : 0.01,
      rfq: false,
      state: STATES[i % STATES.length]!,
      iceberg: false,
      residual: true,
      broker: BROKERS[i % 2]!,
      created_at: at,
      updated_at: at,
    };
  });
}

/** Both sides of `n` trades, one a minute from 25/11/2026 14:03 UTC. */
export function mockBilling(n: number): MockBillingItem[] {
  return Array.from({ length: n }, (_, i) =>
    (['BUY', 'SELL'] as const).map((direction, side) => {
      const by = COMPANIES[side]!;
      return {
        company_name: by.company_name,
        first_name: side === 0 ? 'Tess' : 'Kai',
        last_name: side === 0 ? 'Trader' : 'Keller',
        user_id: by.user_id,
        broker_name: BROKERS[side]!.name,
        broker_id: BROKERS[side]!.id,
        match_request_id: `mr-${String(i).padStart(3, '0')}`,
        order_id: `o-${i}-${side}`,
        payment_order_id: `p-${i}-${side}`,
        match_request_created_at: new Date(Date.UTC(2026, 10, 25, 14, 3 + i)).toISOString(),
        instrument_name: 'Euribor 3M Dec26-Mar27',
        bbg_code: i % 2 === 0 ? 'ERZ6ERH7 Comdty' : null,
        exchange_instrument_id: null,
        exchange: 'ICE Futures Europe',
        exchange_iso_code: 'IFEU',
        tick_size: 0.005,
        term: 'Dec26-Mar27',
        direction,
        quantity: 1500 + i,
        price: -0.025,
        // The first trade's buyer split it across two accounts and gave it up to Baltic.
        allocations:
          i === 0 && side === 0
            ? [
                { account_id: 'a-macro', code: 'HAL-MACRO', name: 'Halyard Global Macro Fund', quantity: 1000 },
                { account_id: 'a-rates', code: 'HAL-RATES', name: 'Halyard Rates Opportunities', quantity: 500 },
              ]
            : [],
        give_up_broker_name: i === 0 && side === 0 ? 'Baltic' : null,
      };
    }),
  ).flat();
}

function roles(request: Request): string[] {
  const token = request.headers.get('Authorization')?.replace(/^Bearer /, '');
  const email = token ? db.sessions.get(token) : undefined;
  return db.users.find((u) => u.email === email)?.roles ?? [];
}

function problem(status: number, detail: string, errors?: { field: string; message: string }[]) {
  return HttpResponse.json(
    { type: 'about:blank', title: 'Error', status, detail, ...(errors ? { errors } : {}) },
    { status, headers: { 'Content-Type': 'application/problem+json' } },
  );
}

async function record(request: Request) {
  const url = new URL(request.url);
  const body: unknown = request.method === 'GET' ? undefined : await request.clone().json();
  adminOrders.requests.push({ method: request.method, path: url.pathname, query: url.searchParams, body });
}

const orderAdmin = (request: Request) => roles(request).some((r) => r === 'upstairs-admin' || r === 'upstairs-sales');

export const adminOrderHandlers: HttpHandler[] = [
  http.get('*/api/admin/orders', async ({ request }) => {
    await record(request);
    if (roles(request).length === 0) return problem(401, 'Sign in to continue.');
    if (!orderAdmin(request)) return problem(403, 'You do not have permission to do this.');
    const q = new URL(request.url).searchParams;
    const states = q.get('state')?.split(',') ?? [];
    const from = q.get('from');
    const until = q.get('until');
    if (from && until && until <= from) return problem(400, 'The request is not valid.', [{ field: 'until', message: 'The end must be after the start' }]);
    const matching = adminOrders.orders
      .filter(
        (o) =>
          (!q.get('company_id') || o.created_by.company_id === q.get('company_id')) &&
          (!q.get('instrument_id') || o.instrument.id === q.get('instrument_id')) &&
          (states.length === 0 || states.includes(o.state)) &&
          (!from || o.created_at >= from) &&
          (!until || o.created_at < until),
      )
      .sort((a, b) => b.created_at.localeCompare(a.created_at));
    const page = Number(q.get('page') ?? 0);
    const size = Number(q.get('size') ?? 50);
    return HttpResponse.json({ items: matching.slice(page * size, (page + 1) * size), total_items: matching.length });
  }),
  http.patch('*/api/admin/orders/:id', async ({ request, params }) => {
    await record(request);
    if (!roles(request).includes('upstairs-admin')) return problem(403, 'You do not have permission to do this.');
    const order = adminOrders.orders.find((o) => o.order_id === params.id);
    if (!order) return problem(404, 'Order not found.');
    const { limit_price } = (await request.json()) as { limit_price: number };
    const tick = trading.instruments.find((i) => i.instrument_id === order.instrument.id)?.tick_size;
    if (tick !== undefined && !onTick(dec(limit_price), dec(tick))) {
      return problem(400, 'The request is not valid.', [{ field: 'limit_price', message: 'Invalid value' }]);
    }
    if (order.state !== 'WORKING') return problem(409, 'Only a working order’s limit price can be corrected.');
    Object.assign(order, { price: limit_price, updated_at: '2026-11-24T12:00:00.000Z' });
    return HttpResponse.json(order);
  }),
  http.get('*/api/billing', async ({ request }) => {
    await record(request);
    if (roles(request).length === 0) return problem(401, 'Sign in to continue.');
    if (!orderAdmin(request)) return problem(403, 'You do not have permission to do this.');
    return HttpResponse.json({ items: adminOrders.billing });
  }),
];
