import type { HttpHandler } from 'msw';

/** In-memory state behind the trading MSW handlers; reset before each test. */
export function resetOrderMocks() {}

export const orderHandlers: HttpHandler[] = [];
