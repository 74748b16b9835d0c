import { dec, toPlain } from '@/lib/decimal';

/** UUIDv7 ids share their leading (time) digits: the trailing random ones tell orders apart. */
export const shortOrderId = (id: string) => id.slice(-8);

/** A price as the exact decimal the server sent ('0.035', '-0.02', '5520'), never through float arithmetic. */
export const formatOrderPrice = (price: number) => toPlain(dec(price));
