import { setupServer } from 'msw/node';
import { adminHandlers } from './admin-handlers';
import { handlers } from './handlers';
import { orderHandlers, stompHandlers } from './order-handlers';

export const server = setupServer(...handlers, ...adminHandlers, ...orderHandlers, ...stompHandlers);
