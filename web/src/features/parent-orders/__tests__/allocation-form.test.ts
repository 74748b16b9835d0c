import { describe, expect, it } from 'vitest';
import type { Account } from '@/lib/api/company-accounts';
import { INCOMPLETE } from '@/lib/validation';
import type { Allocation } from '../api/get-allocation';
import { allocationBody, allocationDefaults, allocationErrors, brokerAnswer, type AllocationContext } from '../lib/allocation-form';

const account = (id: string, active = true): Account => ({
  account_id: id, company_id: 'c-1', code: id.toUpperCase(), name: id, active, created_at: '', updated_at: '',
});

const ctx: AllocationContext = {
  quantity: 1500,
  brokerId: 'b-1',
  accounts: [account('a'), account('b'), account('old', false)],
  brokers: [{ company_id: 'b-1', name: 'Northgate' }, { company_id: 'b-2', name: 'Baltic' }],
};

const form = (lines: [string, string][], give_up_broker_id = '') => ({ lines: lines.map(([account_id, quantity]) => ({ account_id, quantity })), give_up_broker_id });

describe('allocation rules (the server’s, with its texts)', () => {
  it('takes 1 to 50 open accounts of the firm, each once, adding up to the trade', () => {
    expect(allocationErrors(form([['a', '1000'], ['b', '500']], 'b-2'), ctx)).toEqual({});
    expect(allocationErrors(form([]), ctx)).toEqual({ lines: '1 to 50 accounts' });
    const many = form(Array.from({ length: 51 }, () => ['a', '1'] as [string, string]));
    expect(allocationErrors(many, ctx).lines).toBe('1 to 50 accounts');
    expect(allocationErrors(form([['a', '1000'], ['a', '500']]), ctx)).toEqual({ 'lines.1.account_id': 'Each account once' });
    expect(allocationErrors(form([['old', '1500']]), ctx)).toEqual({ 'lines.0.account_id': 'Not an account of your firm' });
    expect(allocationErrors(form([['elsewhere', '1500']]), ctx)).toEqual({ 'lines.0.account_id': 'Not an account of your firm' });
  });

  it('wants whole quantities of at least 1, and says the total only once every line is right', () => {
    expect(allocationErrors(form([['a', '1000'], ['b', '0']]), ctx)).toEqual({ 'lines.1.quantity': 'At least 1' });
    expect(allocationErrors(form([['a', '1000.5'], ['b', '-3']]), ctx)).toEqual({ 'lines.0.quantity': 'At least 1', 'lines.1.quantity': 'At least 1' });
    expect(allocationErrors(form([['a', '1000'], ['b', '400']]), ctx)).toEqual({ lines: "The quantities add up to 1400, not the trade's 1500" });
    expect(allocationErrors(form([['a', '1,000'], ['b', '500']]), ctx)).toEqual({});
  });

  it('keeps an account or quantity not filled in yet incomplete, without a message', () => {
    expect(allocationErrors(form([['', '1500']]), ctx)).toEqual({ [INCOMPLETE]: expect.any(String) });
    expect(allocationErrors(form([['a', '1000'], ['b', '']]), ctx)).toEqual({ [INCOMPLETE]: expect.any(String) });
  });

  it('gives up only to another of the firm’s brokers', () => {
    expect(allocationErrors(form([['a', '1500']], 'b-1'), ctx)).toEqual({ give_up_broker_id: 'The executing broker clears it already' });
    expect(allocationErrors(form([['a', '1500']], 'b-9'), ctx)).toEqual({ give_up_broker_id: "Not one of your firm's brokers" });
  });

  it('opens on the allocation there is, else the whole trade on one line', () => {
    expect(allocationDefaults(null, ctx)).toEqual(form([['', '1500']]));
    expect(allocationDefaults(null, { ...ctx, accounts: [account('a'), account('old', false)] })).toEqual(form([['a', '1500']]));
    const a: Allocation = {
      order_id: 'o-1', version: 2, give_up_broker: { company_id: 'b-2', name: 'Baltic' }, broker_ack: 'PENDING', broker_ack_text: null, updated_at: '',
      lines: [{ account_id: 'a', code: 'A', name: 'a', quantity: 1000 }, { account_id: 'b', code: 'B', name: 'b', quantity: 500 }],
    };
    expect(allocationDefaults(a, ctx)).toEqual(form([['a', '1000'], ['b', '500']], 'b-2'));
  });

  it('sends whole numbers and null for no give-up', () => {
    expect(allocationBody(form([['a', '1,000'], ['b', ' 500 ']]))).toEqual({
      lines: [{ account_id: 'a', quantity: 1000 }, { account_id: 'b', quantity: 500 }],
      give_up_broker_id: null,
    });
  });

  it('says the broker’s answer', () => {
    expect(brokerAnswer({ broker_ack: 'PENDING', broker_ack_text: null })).toBe('Sent to broker');
    expect(brokerAnswer({ broker_ack: 'ACCEPTED', broker_ack_text: null })).toBe('Accepted by broker');
    expect(brokerAnswer({ broker_ack: 'REJECTED', broker_ack_text: 'Unknown account HAL-X' })).toBe('Rejected by broker: Unknown account HAL-X');
  });
});
