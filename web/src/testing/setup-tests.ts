import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, beforeEach, vi } from 'vitest';
import { setLastErrorStatus } from '@/lib/api-errors';
import { resetAdminMocks } from './mocks/admin-handlers';
import { resetAdminOrderMocks } from './mocks/admin-order-handlers';
import { db } from './mocks/db';
import { resetOrderMocks } from './mocks/order-handlers';
import { server } from './mocks/server';

// jsdom lays nothing out, so it has no scrolling: a new parent card's scroll into view is
// Chromium's to test (e2e/dashboard.test.mjs).
Element.prototype.scrollIntoView = function scrollIntoView() {};

// Lazy route chunks load slowly on a busy machine; findBy* waits up to this deadline.
configure({ asyncUtilTimeout: 5_000 });

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
beforeEach(() => {
  db.reset();
  resetAdminMocks();
  resetAdminOrderMocks();
  resetOrderMocks();
  localStorage.clear();
  sessionStorage.clear();
  setLastErrorStatus(null);
  // The banner has its own tests; elsewhere it is already answered.
  localStorage.setItem('upstairs.cookie-consent', JSON.stringify({ essential: true, functional: false, performance: false }));
});
afterEach(() => {
  cleanup();
  server.resetHandlers();
  vi.useRealTimers();
  // A worker runs file after file in one module registry (vite.config.ts): no spy outlives its test.
  vi.restoreAllMocks();
});
afterAll(() => server.close());
