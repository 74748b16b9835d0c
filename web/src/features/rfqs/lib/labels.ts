import type { ResponseState } from '../api/get-rfqs';

/** Spec section 4: how each response state is shown. */
export function responseLabel(state: ResponseState): string {
  switch (state) {
    case 'AWAITING_RESPONSE':
      return 'Pending';
    case 'RESPONDED':
      return 'Received';
    case 'ACCEPTED':
      return 'Completed';
    case 'REJECTED_BY_REQUESTER':
    case 'REJECTED_BY_RESPONDER':
      return 'Rejected';
    case 'EXPIRED':
      return 'Expired';
    case 'CANCELLED':
      return 'Cancelled';
  }
}

export function responseColor(state: ResponseState): 'default' | 'info' | 'success' | 'error' {
  if (state === 'RESPONDED') return 'info';
  if (state === 'ACCEPTED') return 'success';
  if (state === 'REJECTED_BY_REQUESTER' || state === 'REJECTED_BY_RESPONDER') return 'error';
  return 'default';
}
