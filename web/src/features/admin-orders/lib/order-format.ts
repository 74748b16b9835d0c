import { formatPrice } from '@/lib/trading-format';

/** UUIDv7 ids share their leading (time) digits: the trailing random ones tell orders apart. */
export const shortOrderId = (id: string) => id.slice(-8);

/**
 * A price with its instrument's tick decimals ('-0.020' on a 0.005 tick), exactly as the
 * server sent it; an order an RFQ reserved and no quote priced has none (issue 28.19).
 */
export const formatOrderPrice = (price: number | null, tickSize: number) => (price === null ? 'RFQ, no price' : formatPrice(price, tickSize));
