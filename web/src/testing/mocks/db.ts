import type { User } from '@/lib/api/get-me';
import type { components } from '@/lib/api/schema';

export type MockNotification = components['schemas']['NotificationDto'];

export type MockUser = User & { password: string };

export const SUPPORT_EMAIL = 'support@upstairs.test';
export const SUPPORT_PHONE = '+44 20 7946 0000';

function makeUser(overrides: Partial<MockUser> = {}): MockUser {
  return {
    user_id: 'u-1',
    company_id: 'c-1',
    company_name: 'Acme Capital',
    email: 'trader@acme.test',
    first_name: 'Tess',
    last_name: 'Trader',
    roles: ['trader'],
    auto_accept: 'INSTANT',
    parent_order_limit_multiplier: null,
    ui_metadata: [],
    active: true,
    verified: true,
    fix_integration: false,
    cancel_on_disconnect: false,
    ems_trader_id: null,
    reliability_score: 92,
    created_at: '2026-03-04T09:05:00Z',
    updated_at: '2026-03-04T09:05:00Z',
    password: 'Valid-Pass-2026',
    ...overrides,
  };
}

/** In-memory state behind the MSW handlers; reset before each test. */
export const db = {
  users: [] as MockUser[],
  sessions: new Map<string, string>(),
  links: new Map<string, { email: string; purpose: 'RESET' | 'ACTIVATION' }>(),
  resetRequests: [] as { email: string; newAccount: boolean }[],
  /** Bodies of PATCH /users/{id}, in order. */
  userPatches: [] as { userId: string; body: Record<string, unknown> }[],
  config: { product_name: 'Upstairs', support_email: SUPPORT_EMAIL, support_phone: SUPPORT_PHONE, always_open: true, disconnect_grace_seconds: 10 },
  /** The signed-in user's notifications, newest first. */
  notifications: [] as MockNotification[],
  /** How many times the list of notifications was read. */
  notificationReads: 0,
  reset() {
    this.notifications = [];
    this.notificationReads = 0;
    this.users = [makeUser()];
    this.sessions = new Map();
    this.links = new Map();
    this.resetRequests = [];
    this.userPatches = [];
    this.config = { product_name: 'Upstairs', support_email: SUPPORT_EMAIL, support_phone: SUPPORT_PHONE, always_open: true, disconnect_grace_seconds: 10 };
  },
  addUser(overrides: Partial<MockUser>) {
    const u = makeUser(overrides);
    this.users.push(u);
    return u;
  },
  user(email = 'trader@acme.test') {
    const u = this.users.find((x) => x.email === email);
    if (!u) throw new Error(`no user ${email}`);
    return u;
  },
  /** Creates a session for a user and returns its token. */
  signIn(email = 'trader@acme.test') {
    const token = `token-${email}-${this.sessions.size + 1}`;
    this.sessions.set(token, email);
    return token;
  },
};
