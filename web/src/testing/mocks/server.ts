import { setupServer } from 'msw/node';
import { adminHandlers } from './admin-handlers';
import { adminOrderHandlers } from './admin-order-handlers';
import { handlers } from './handlers';
import { newsletterHandlers } from './newsletter-handlers';
import { orderHandlers, stompHandlers } from './order-handlers';

export const server = setupServer(...handlers, ...adminOrderHandlers, ...adminHandlers, ...newsletterHandlers, ...orderHandlers, ...stompHandlers);
