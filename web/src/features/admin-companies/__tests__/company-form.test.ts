import { describe, expect, it } from 'vitest';
import { companyErrors, nextDefaultBroker } from '../lib/company-form';

describe('company rules', () => {
  const ok = { name: 'Halyard', full_name: 'Ha', trade_confirmation_email: '', trade_confirmation_via_email_enabled: false, brokers: ['b'], default_broker: 'b', roles: [] };
  it('keeps the rule and shows the quoted message', () => {
    expect(companyErrors(ok)).toEqual({});
    expect(companyErrors({ ...ok, full_name: 'H' }).full_name).toBe('Full name must be at least 4 characters long');
    expect(companyErrors({ ...ok, name: 'H' }).name).toBe('Name must be at least 2 characters long');
    expect(companyErrors({ ...ok, default_broker: '' }).default_broker).toBe('Broker is required');
    expect(companyErrors({ ...ok, default_broker: '', roles: ['broker'] }).default_broker).toBeUndefined();
    // The server's order (lib/validation): the format first, so 'a@b' (no dot in its domain) is invalid.
    expect(companyErrors({ ...ok, trade_confirmation_email: 'a@b' }).trade_confirmation_email).toBe('Please enter a valid email address');
    expect(companyErrors({ ...ok, trade_confirmation_email: ' ', trade_confirmation_via_email_enabled: true }).trade_confirmation_email).toBe('Email is required');
    expect(companyErrors({ ...ok, trade_confirmation_email: 'not-an-email' }).trade_confirmation_email).toBe('Please enter a valid email address');
  });

  it('resets the default broker to the first selected one when it is removed', () => {
    expect(nextDefaultBroker('b', ['a', 'b'])).toBe('b');
    expect(nextDefaultBroker('b', ['c', 'a'])).toBe('c');
    expect(nextDefaultBroker('b', [])).toBe('');
  });
});
