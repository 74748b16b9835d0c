import { z } from 'zod';

/** E-mail rules of spec section 5, in the order the messages are checked. */
export const emailSchema = z
  .string()
  .trim()
  .min(1, 'Email is required')
  .min(5, 'Email must be at least 5 characters long')
  .pipe(z.email('Please enter a valid email address'));

/** The first message of a value that fails the e-mail rules, if any. */
export function emailError(value: string): string | undefined {
  const r = emailSchema.safeParse(value);
  return r.success ? undefined : r.error.issues[0]?.message;
}

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
