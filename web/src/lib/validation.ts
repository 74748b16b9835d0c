import { z } from 'zod';

/** Trader spec section 5: the e-mail messages. */
export const EMAIL_MESSAGES = {
  required: 'Email is required',
  invalid: 'Please enter a valid email address',
  tooShort: 'Email must be at least 5 characters long',
} as const;

// Whitespace (Unicode White_Space, as Rust's char::is_whitespace), control characters or '@'.
const NOT_IN_PART = /[\p{White_Space}\p{Cc}@]/u;

/**
 * The server's format rule (`Email::looks_valid`, crates/domain/src/account.rs), so the browser
 * accepts and refuses exactly the addresses the server does: one '@' between a non-empty local
 * part and a domain holding a '.' (not first, not last, never two in a row), no whitespace or
 * control characters, at most 254 bytes of UTF-8.
 */
export function looksLikeEmail(s: string): boolean {
  const at = s.indexOf('@');
  if (at < 0) return false;
  const local = s.slice(0, at);
  const domain = s.slice(at + 1);
  const okPart = (p: string) => p !== '' && !NOT_IN_PART.test(p);
  return (
    okPart(local) &&
    okPart(domain) &&
    new TextEncoder().encode(s).length <= 254 &&
    domain.includes('.') &&
    !domain.startsWith('.') &&
    !domain.endsWith('.') &&
    !domain.includes('..')
  );
}

/**
 * The first message the e-mail rules give for a value, checked in the server's order
 * (`Email::parse`, which follows the spec's): trimmed, required, valid format, at least 5 characters.
 */
export function emailError(value: string): string | undefined {
  const s = value.trim();
  if (s === '') return EMAIL_MESSAGES.required;
  if (!looksLikeEmail(s)) return EMAIL_MESSAGES.invalid;
  // Characters, as the server counts them (not UTF-16 units).
  if ([...s].length < 5) return EMAIL_MESSAGES.tooShort;
  return undefined;
}

/** The e-mail field's zod schema: the trimmed value, with the one message `emailError` gives. */
export const emailSchema = z
  .string()
  .trim()
  .superRefine((s, ctx) => {
    const message = emailError(s);
    if (message) ctx.addIssue({ code: 'custom', message });
  });

/**
 * Adds a form's cross-field rules (field → message) to a zod schema as issues on
 * those fields, so one schema drives react-hook-form through the zod resolver.
 */
export function addIssues(ctx: z.RefinementCtx, errors: Partial<Record<string, string>>) {
  for (const [field, message] of Object.entries(errors)) {
    if (message) ctx.addIssue({ code: 'custom', path: [field], message });
  }
}

/**
 * The key of a form's issue that keeps it invalid (submit disabled) without a message under
 * any field: an empty required field for which the spec gives no text.
 */
export const INCOMPLETE = 'incomplete';
