import type { QueryClient } from '@tanstack/react-query';
import { withRow, writeList } from '@/lib/api/list-frames';
import type { components } from '@/lib/api/schema';
import { incomingRfqSchema, type IncomingRfq } from './get-incoming-rfqs';
import { rfqKeys, rfqSchema, type Rfq } from './get-rfqs';

export type RfqMessage = components['schemas']['RfqMessage'];

/** The active panel's list (`GET /rfqs?state=OPEN`) with a pushed RFQ of ours written in. */
export function withRfq(list: Rfq[] | undefined, rfq: Rfq): Rfq[] | undefined {
  return withRow(list, rfq, (r) => r.rfq_id, rfq.state === 'OPEN');
}

/** The incoming panel's list (open responses and today's ended ones) with a pushed RFQ written in. */
export function withIncomingRfq(list: IncomingRfq[] | undefined, rfq: IncomingRfq): IncomingRfq[] | undefined {
  return withRow(list, rfq, (r) => r.rfq_id, true);
}

/**
 * Applies one `/user/topic/rfqs` frame of the kind `kind` (ADR 0029): an RFQ we sent
 * (`RFQ_UPDATED`, the active panel) or one sent to our firm (`INCOMING_RFQ_UPDATED`, the
 * incoming panel), written in as the panel lists it, without a read. Each panel applies
 * its own kind.
 */
export function applyRfqFrame(queryClient: QueryClient, message: RfqMessage, kind: RfqMessage['type']) {
  if (message.type !== kind) return;
  if (message.type === 'RFQ_UPDATED') {
    const rfq = rfqSchema.safeParse(message);
    writeList<Rfq>(queryClient, rfqKeys.open, rfq.success ? (list) => withRfq(list, rfq.data) : null);
  } else {
    const rfq = incomingRfqSchema.safeParse(message);
    writeList<IncomingRfq>(queryClient, rfqKeys.incoming, rfq.success ? (list) => withIncomingRfq(list, rfq.data) : null);
  }
}
