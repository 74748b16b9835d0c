import { z } from 'zod';
import { addIssues, emailError } from '@/lib/validation';

// Admin spec section 5, with its texts as quoted (including the two where the
// rule and the message disagree: the rule is kept, the quoted message shown).

type Errors<K extends string> = Partial<Record<K, string>>;

export type CompanyForm = {
  name: string;
  full_name: string;
  trade_confirmation_email: string;
  trade_confirmation_via_email_enabled: boolean;
  brokers: string[];
  default_broker: string;
  roles: string[];
  fix_comp_id: string;
  /** Blank keeps the current password (or sets none on create). */
  fix_password: string;
  /** Removes the current password; only offered when one is set. */
  fix_password_remove: boolean;
  fix_reset_on_logon: boolean;
  /** On unless turned off, as on the exchanges (ADR 0043). */
  fix_cancel_on_disconnect: boolean;
};

/** The server's FIX messages (crates/engine/src/reference.rs), as it words them. */
export const FIX_MESSAGES = {
  compId: "A FIX CompID is 1 to 32 letters, digits, '.', '_' or '-'",
  password: 'A FIX password has at least 8 characters',
} as const;

// The server's rule (`fix::valid_comp_id`) on the trimmed value; blank means no CompID.
const COMP_ID = /^[A-Za-z0-9._-]{1,32}$/;

export function fixCompIdError(value: string): string | undefined {
  const s = value.trim();
  return s === '' || COMP_ID.test(s) ? undefined : FIX_MESSAGES.compId;
}

/** Blank keeps the password; otherwise at least 8 characters as the server counts them (not trimmed). */
export function fixPasswordError(value: string): string | undefined {
  return value !== '' && [...value].length < 8 ? FIX_MESSAGES.password : undefined;
}

export function companyErrors(f: CompanyForm): Errors<keyof CompanyForm> {
  const e: Errors<keyof CompanyForm> = {};
  if (f.name.trim().length < 2) e.name = 'Name must be at least 2 characters long';
  // The rule is 2 characters; the spec's message says 4.
  if (f.full_name.trim().length < 2) e.full_name = 'Full name must be at least 4 characters long';
  if (f.trade_confirmation_email.trim() || f.trade_confirmation_via_email_enabled) {
    e.trade_confirmation_email = emailError(f.trade_confirmation_email);
  }
  // A broker needs no broker of its own; every other company trades through one.
  if (!f.default_broker && !f.roles.includes('broker')) e.default_broker = 'Broker is required';
  const compId = fixCompIdError(f.fix_comp_id);
  if (compId) e.fix_comp_id = compId;
  // A password about to be removed is not checked.
  const password = f.fix_password_remove ? undefined : fixPasswordError(f.fix_password);
  if (password) e.fix_password = password;
  return e;
}

/** Changing the brokers resets the default to the first selected one when it is no longer among them. */
export function nextDefaultBroker(current: string, brokers: string[]): string {
  return brokers.includes(current) ? current : (brokers[0] ?? '');
}

export const companyFormSchema = z
  .object({
    name: z.string(),
    full_name: z.string(),
    trade_confirmation_email: z.string(),
    trade_confirmation_via_email_enabled: z.boolean(),
    brokers: z.array(z.string()),
    default_broker: z.string(),
    roles: z.array(z.string()),
    fix_comp_id: z.string(),
    fix_password: z.string(),
    fix_password_remove: z.boolean(),
    fix_reset_on_logon: z.boolean(),
    fix_cancel_on_disconnect: z.boolean(),
  })
  .superRefine((f, ctx) => addIssues(ctx, companyErrors(f))) satisfies z.ZodType<CompanyForm>;
