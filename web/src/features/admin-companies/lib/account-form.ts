import { z } from 'zod';
import { addIssues, INCOMPLETE } from '@/lib/validation';

// A company's account (ADR 0045), with the server's rules and texts
// (crates/engine/src/allocations.rs `create_account`, `update_account`), on the trimmed values.

export const ACCOUNT_MESSAGES = {
  code: "1 to 32 letters, digits, '.', '_', '-' or '/'",
  name: '1 to 100 characters',
  codeTaken: 'This company already has an account with this code',
} as const;

const CODE = /^[A-Za-z0-9._\-/]{1,32}$/;

/** The server's message when it would refuse the code; none while blank (nothing typed yet). */
export function accountCodeError(value: string): string | undefined {
  const s = value.trim();
  return s === '' || CODE.test(s) ? undefined : ACCOUNT_MESSAGES.code;
}

/** At most 100 characters as the server counts them (code points, not UTF-16 units). */
export function accountNameError(value: string): string | undefined {
  return [...value.trim()].length > 100 ? ACCOUNT_MESSAGES.name : undefined;
}

export type AccountForm = { code: string; name: string };
export type AccountNameForm = { name: string };

export const accountFormSchema = z
  .object({ code: z.string(), name: z.string() })
  .superRefine((f, ctx) =>
    addIssues(ctx, {
      code: accountCodeError(f.code),
      name: accountNameError(f.name),
      [INCOMPLETE]: f.code.trim() === '' || f.name.trim() === '' ? 'A code and a name' : undefined,
    }),
  ) satisfies z.ZodType<AccountForm>;

export const accountNameFormSchema = z
  .object({ name: z.string() })
  .superRefine((f, ctx) => addIssues(ctx, { name: accountNameError(f.name), [INCOMPLETE]: f.name.trim() === '' ? 'A name' : undefined })) satisfies z.ZodType<AccountNameForm>;
