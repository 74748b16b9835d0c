import { describe, expect, it } from 'vitest';
import { companyErrors, FIX_MESSAGES, nextDefaultBroker } from '../lib/company-form';

describe('company rules', () => {
  const ok = {
    name: 'Halyard', full_name: 'Ha', trade_confirmation_email: '', trade_confirmation_via_email_enabled: false, brokers: ['b'], default_broker: 'b', roles: [],
    fix_comp_id: '', fix_password: '', fix_password_remove: false, fix_reset_on_logon: false, fix_cancel_on_disconnect: true,
  };
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

  it('checks the FIX CompID and password as the server does, with its messages', () => {
    expect(FIX_MESSAGES.compId).toBe("A FIX CompID is 1 to 32 letters, digits, '.', '_' or '-'");
    expect(FIX_MESSAGES.password).toBe('A FIX password has at least 8 characters');
    // Blank is no CompID; the value is trimmed, then 1 to 32 of letters, digits, '.', '_' or '-'.
    for (const id of ['', '  ', 'HALYARD', ' halyard.fix_2-a ', 'A', 'X'.repeat(32)]) {
      expect(companyErrors({ ...ok, fix_comp_id: id }).fix_comp_id, id).toBeUndefined();
    }
    for (const id of ['X'.repeat(33), 'HAL YARD', 'HALYARD!', 'HALYÄRD', 'A/B']) {
      expect(companyErrors({ ...ok, fix_comp_id: id }).fix_comp_id, id).toBe(FIX_MESSAGES.compId);
    }
    // Blank keeps the password; a typed one has at least 8 characters, counted as the server counts them.
    expect(companyErrors({ ...ok, fix_password: '' }).fix_password).toBeUndefined();
    expect(companyErrors({ ...ok, fix_password: 'Short-1' }).fix_password).toBe(FIX_MESSAGES.password);
    expect(companyErrors({ ...ok, fix_password: '🔑🔑🔑🔑🔑🔑🔑' }).fix_password).toBe(FIX_MESSAGES.password);
    expect(companyErrors({ ...ok, fix_password: 'Upstairs' }).fix_password).toBeUndefined();
    // A password being removed is not checked.
    expect(companyErrors({ ...ok, fix_password: 'x', fix_password_remove: true }).fix_password).toBeUndefined();
  });

  it('resets the default broker to the first selected one when it is removed', () => {
    expect(nextDefaultBroker('b', ['a', 'b'])).toBe('b');
    expect(nextDefaultBroker('b', ['c', 'a'])).toBe('c');
    expect(nextDefaultBroker('b', [])).toBe('');
  });
});
