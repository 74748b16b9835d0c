import { QueryClient } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import type { IncomingRfq } from '../api/get-incoming-rfqs';
import { rfqKeys, type Rfq } from '../api/get-rfqs';
import { applyRfqFrame, withIncomingRfq, withRfq, type RfqMessage } from '../api/rfq-frames';

const rfq = (id: string, state: Rfq['state']) => ({ rfq_id: id, state }) as Rfq;
const incoming = (id: string, state: IncomingRfq['response']['state']) =>
  ({ rfq_id: id, state: 'OPEN', response: { state } }) as IncomingRfq;

describe('RFQ frames', () => {
  it('write our RFQ into the open list: replaced, first when new, gone once it ends', () => {
    const list = [rfq('r-2', 'OPEN'), rfq('r-1', 'OPEN')];
    expect(withRfq(list, rfq('r-3', 'OPEN'))?.map((r) => r.rfq_id)).toEqual(['r-3', 'r-2', 'r-1']);
    expect(withRfq(list, rfq('r-1', 'COMPLETED'))?.map((r) => r.rfq_id)).toEqual(['r-2']);
    expect(withRfq(list, rfq('r-9', 'EXPIRED'))).toBe(list);
  });

  it('keep an RFQ sent to us in its list once it ends: the panel shows it under Earlier today', () => {
    const list = [incoming('r-1', 'AWAITING_RESPONSE')];
    expect(withIncomingRfq(list, incoming('r-1', 'EXPIRED'))?.map((r) => r.response.state)).toEqual(['EXPIRED']);
    expect(withIncomingRfq(list, incoming('r-2', 'AWAITING_RESPONSE'))?.map((r) => r.rfq_id)).toEqual(['r-2', 'r-1']);
    expect(withIncomingRfq(undefined, incoming('r-2', 'AWAITING_RESPONSE'))).toBeUndefined();
  });

  it('are applied by the panel of their kind only; one that cannot be read reads the list again', () => {
    const client = new QueryClient();
    client.setQueryData(rfqKeys.open, [] as Rfq[]);
    client.setQueryData(rfqKeys.incoming, [] as IncomingRfq[]);
    const frame = { type: 'RFQ_UPDATED', seq: 1, rfq_id: 'r-1', state: 'OPEN' } as unknown as RfqMessage;
    applyRfqFrame(client, frame, 'INCOMING_RFQ_UPDATED');
    expect(client.getQueryState(rfqKeys.open)?.isInvalidated).toBe(false);
    applyRfqFrame(client, frame, 'RFQ_UPDATED');
    expect(client.getQueryState(rfqKeys.open)?.isInvalidated, 'a frame without its row').toBe(true);
    expect(client.getQueryState(rfqKeys.incoming)?.isInvalidated).toBe(false);
  });
});
