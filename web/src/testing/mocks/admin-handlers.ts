import type { HttpHandler } from 'msw';

/** In-memory state behind the admin MSW handlers; reset before each test. */
export function resetAdminMocks() {}

export const adminHandlers: HttpHandler[] = [];
