import { z } from 'zod';
import type { CompanyRef } from '@/lib/api/dto';
import type { Account } from '@/lib/api/company-accounts';
import { parseQuantity } from '@/lib/order-validation';
import { INCOMPLETE } from '@/lib/validation';
import type { Allocation } from '../api/get-allocation';
import type { AllocationRequest } from '../api/save-allocation';

// Allocations and give-ups (ADR 0045): a trader splits the fill of one of their matched
// child orders across the firm's open accounts, and may give it up to another of the
// firm's brokers. The rules and their texts are the server's
// (crates/engine/src/allocations.rs `allocate`).

/** The most accounts one trade is split across. */
export const MAX_LINES = 50;

/** The states of a side whose trade stands and whose fill its broker has not confirmed yet. */
export const ALLOCATABLE_STATES: readonly string[] = ['MATCHED', 'PARTIAL_BROKER_ACCEPTED', 'BROKER_ACCEPTED', 'PARTIAL_BROKER_FILLED'];

export const ALLOCATION_MESSAGES = {
  lines: `1 to ${MAX_LINES} accounts`,
  total: (total: number, quantity: number) => `The quantities add up to ${total}, not the trade's ${quantity}`,
  notOurs: 'Not an account of your firm',
  once: 'Each account once',
  atLeastOne: 'At least 1',
  executing: 'The executing broker clears it already',
  notOurBroker: "Not one of your firm's brokers",
} as const;

export type AllocationLineForm = { account_id: string; quantity: string };

export type AllocationForm = {
  lines: AllocationLineForm[];
  /** '' for none. */
  give_up_broker_id: string;
};

/** What the rules read besides the fields. */
export type AllocationContext = {
  /** The trade's quantity: the child order's. */
  quantity: number;
  /** The executing broker: the child order's. */
  brokerId: string;
  /** The firm's accounts (only the open ones may be allocated to). */
  accounts: readonly Account[];
  /** The firm's brokers. */
  brokers: readonly CompanyRef[];
};

/** A whole quantity of at least 1, or null. */
function lineQuantity(text: string): number | null {
  const q = parseQuantity(text);
  return q !== null && q >= 1 && Number.isSafeInteger(q) ? q : null;
}

/** The quantities allocated so far (the lines whose quantity is a whole number of at least 1). */
export function allocatedTotal(f: Pick<AllocationForm, 'lines'>): number {
  return f.lines.reduce((n, l) => n + (lineQuantity(l.quantity) ?? 0), 0);
}

/**
 * The form's messages by field path (`lines`, `lines.1.account_id`, `lines.0.quantity`,
 * `give_up_broker_id`), checked in the server's order: the total only once every line is
 * right. An account or quantity not filled in yet has no message of its own (INCOMPLETE).
 */
export function allocationErrors(f: AllocationForm, ctx: AllocationContext): Record<string, string> {
  const e: Record<string, string> = {};
  if (f.lines.length === 0 || f.lines.length > MAX_LINES) e.lines = ALLOCATION_MESSAGES.lines;
  const seen = new Set<string>();
  let lineErrors = false;
  let incomplete = false;
  f.lines.forEach((l, n) => {
    if (l.account_id === '') {
      incomplete = true;
    } else if (!ctx.accounts.some((a) => a.account_id === l.account_id && a.active)) {
      e[`lines.${n}.account_id`] = ALLOCATION_MESSAGES.notOurs;
      lineErrors = true;
    } else if (seen.has(l.account_id)) {
      e[`lines.${n}.account_id`] = ALLOCATION_MESSAGES.once;
      lineErrors = true;
    } else {
      seen.add(l.account_id);
    }
    if (l.quantity.trim() === '') {
      incomplete = true;
    } else if (lineQuantity(l.quantity) === null) {
      e[`lines.${n}.quantity`] = ALLOCATION_MESSAGES.atLeastOne;
      lineErrors = true;
    }
  });
  const total = allocatedTotal(f);
  if (!e.lines && !lineErrors && !incomplete && total !== ctx.quantity) e.lines = ALLOCATION_MESSAGES.total(total, ctx.quantity);
  const giveUp = f.give_up_broker_id;
  if (giveUp === ctx.brokerId) e.give_up_broker_id = ALLOCATION_MESSAGES.executing;
  else if (giveUp !== '' && !ctx.brokers.some((b) => b.company_id === giveUp)) e.give_up_broker_id = ALLOCATION_MESSAGES.notOurBroker;
  if (incomplete) e[INCOMPLETE] = 'An account or a quantity is missing';
  return e;
}

/** The form's zod schema: its rules as issues at their fields, for react-hook-form. */
export function allocationFormSchema(ctx: AllocationContext) {
  return z
    .object({
      lines: z.array(z.object({ account_id: z.string(), quantity: z.string() })),
      give_up_broker_id: z.string(),
    })
    .superRefine((f, c) => {
      for (const [field, message] of Object.entries(allocationErrors(f, ctx))) {
        c.addIssue({ code: 'custom', path: field.split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : p)), message });
      }
    }) satisfies z.ZodType<AllocationForm>;
}

/**
 * The form as it opens: the allocation there is, else the whole trade on one line (to the
 * firm's only open account, when it has just one).
 */
export function allocationDefaults(allocation: Allocation | null, ctx: Pick<AllocationContext, 'quantity' | 'accounts'>): AllocationForm {
  if (allocation) {
    return {
      lines: allocation.lines.map((l) => ({ account_id: l.account_id, quantity: String(l.quantity) })),
      give_up_broker_id: allocation.give_up_broker?.company_id ?? '',
    };
  }
  const open = ctx.accounts.filter((a) => a.active);
  return { lines: [{ account_id: open.length === 1 ? open[0]!.account_id : '', quantity: String(ctx.quantity) }], give_up_broker_id: '' };
}

/** The PUT /orders/{id}/allocation body of a valid form. */
export function allocationBody(f: AllocationForm): AllocationRequest {
  return {
    lines: f.lines.map((l) => ({ account_id: l.account_id, quantity: lineQuantity(l.quantity) ?? 0 })),
    give_up_broker_id: f.give_up_broker_id || null,
  };
}

/** The executing broker's answer to the allocation's version, in words. */
export function brokerAnswer(a: Pick<Allocation, 'broker_ack' | 'broker_ack_text'>): string {
  switch (a.broker_ack) {
    case 'ACCEPTED':
      return 'Accepted by broker';
    case 'REJECTED':
      return a.broker_ack_text ? `Rejected by broker: ${a.broker_ack_text}` : 'Rejected by broker';
    default:
      return 'Sent to broker';
  }
}
