import { describe, expect, it } from 'vitest';
import { multiplierValue, userErrors } from '../lib/user-form';

describe('user rules', () => {
  const ok = { first_name: 'Tess', last_name: 'Trader', email: 'tess@acme.test', company_id: 'c', ems_trader_id: '', parent_order_limit_multiplier: '', roles: ['trader'], active: true, fix_integration: false };
  it('checks names, e-mail, multiplier and roles', () => {
    expect(userErrors(ok)).toMatchObject({});
    expect(Object.values(userErrors(ok)).filter(Boolean)).toEqual([]);
    expect(userErrors({ ...ok, email: 'a@b' }).email).toBe('Please enter a valid email address');
    expect(userErrors({ ...ok, email: 'tess-at-acme' }).email).toBe('Please enter a valid email address');
    expect(userErrors({ ...ok, first_name: 'T' }).first_name).toBe('First name must be at least 2 characters long');
    expect(userErrors({ ...ok, parent_order_limit_multiplier: '0' }).parent_order_limit_multiplier).toBe('Must be greater than 0');
    expect(userErrors({ ...ok, parent_order_limit_multiplier: '3' }).parent_order_limit_multiplier).toBeUndefined();
    expect(multiplierValue('')).toBe(-1);
    expect(multiplierValue(' 4 ')).toBe(4);
  });
});
