import { describe, expect, it } from 'vitest';
import type { Instrument } from '@/lib/api/dto';
import { INCOMPLETE } from '@/lib/validation';
import { emptyParentOrderForm, parentOrderBody, parentOrderErrors, parentOrderFormSchema, type ParentOrderForm } from '../lib/parent-order-form';

const bund = { instrument_id: 'i-2', name: 'Euro-Bund', min_quantity: 1000, tick_size: 0.01 } as Instrument;

describe('parent order rules', () => {
  const errors = (f: Partial<ParentOrderForm>, multiplier: number | null = null) =>
    Object.fromEntries(Object.entries(parentOrderErrors({ ...emptyParentOrderForm, ...f }, multiplier)).filter(([, v]) => v));

  it('gives the spec texts, and none for an empty instrument or quantity, which only keep submit disabled', () => {
    expect(errors({})).toEqual({ direction: 'Direction is required', [INCOMPLETE]: 'No instrument chosen' });
    expect(errors({ direction: 'BUY', instrument: bund })).toEqual({ [INCOMPLETE]: 'No quantity' });
    expect(errors({ direction: 'BUY', instrument: bund, quantity: '999' })).toEqual({ quantity: 'The minimum block size is 1000' });
    expect(errors({ direction: 'BUY', instrument: bund, quantity: '-5' })).toEqual({ quantity: 'The minimum block size is 1000' });
    expect(errors({ direction: 'BUY', instrument: bund, quantity: '100001' })).toEqual({ quantity: 'The maximum quantity is 100000' });
    expect(errors({ direction: 'BUY', instrument: bund, quantity: '2001' }, 2)).toEqual({ quantity: 'The maximum quantity is 2000' });
    expect(errors({ direction: 'SELL', instrument: bund, quantity: '2000' }, 2)).toEqual({});
  });

  it('is one zod schema for the resolver and builds the request body', () => {
    const form: ParentOrderForm = { direction: 'SELL', instrument: bund, quantity: '5000', broker_instructions: '  ' };
    expect(parentOrderFormSchema(null).safeParse(form).success).toBe(true);
    expect(parentOrderFormSchema(null).safeParse({ ...form, quantity: '' }).error?.issues.map((i) => i.path)).toEqual([[INCOMPLETE]]);
    expect(parentOrderBody(form)).toEqual({ direction: 'SELL', instrument_id: 'i-2', quantity: 5000, broker_instructions: null });
    expect(parentOrderBody({ ...form, broker_instructions: ' Work slowly ' })?.broker_instructions).toBe('Work slowly');
  });
});
