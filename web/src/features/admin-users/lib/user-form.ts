import { z } from 'zod';
import { roleSchema } from '@/lib/api/dto';
import { addIssues, emailError } from '@/lib/validation';

// Admin spec section 5, with its texts as quoted (including the two where the
// rule and the message disagree: the rule is kept, the quoted message shown).

type Errors<K extends string> = Partial<Record<K, string>>;

export type UserForm = {
  first_name: string;
  last_name: string;
  email: string;
  company_id: string;
  ems_trader_id: string;
  parent_order_limit_multiplier: string;
  roles: string[];
  active: boolean;
  fix_integration: boolean;
};

export function userErrors(f: UserForm): Errors<keyof UserForm> {
  const e: Errors<keyof UserForm> = {};
  if (f.first_name.trim().length < 2) e.first_name = 'First name must be at least 2 characters long';
  if (f.last_name.trim().length < 2) e.last_name = 'Last name must be at least 2 characters long';
  e.email = emailError(f.email);
  if (!f.company_id) e.company_id = 'Company is required';
  const m = f.parent_order_limit_multiplier.trim();
  if (m && !(/^\d+$/.test(m) && Number(m) > 0)) e.parent_order_limit_multiplier = 'Must be greater than 0';
  if (f.roles.length === 0) e.roles = 'Select at least one role';
  return e;
}

/** Admin spec section 7: an empty multiplier is sent as -1. */
export function multiplierValue(text: string): number {
  return text.trim() ? Number(text.trim()) : -1;
}

export const userFormSchema = z
  .object({
    first_name: z.string(),
    last_name: z.string(),
    email: z.string(),
    company_id: z.string(),
    ems_trader_id: z.string(),
    parent_order_limit_multiplier: z.string(),
    roles: z.array(roleSchema),
    active: z.boolean(),
    fix_integration: z.boolean(),
  })
  .superRefine((f, ctx) => addIssues(ctx, userErrors(f)));
