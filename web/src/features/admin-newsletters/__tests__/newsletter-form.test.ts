import { describe, expect, it } from 'vitest';
import { newsletterBody, newsletterErrors, newsletterFormSchema } from '../lib/newsletter-form';

describe('newsletter rules (admin spec section 5)', () => {
  it('keeps the 2-character rules and shows the messages as quoted', () => {
    expect(newsletterErrors({ name: 'Eu', description: 'Re' })).toEqual({});
    expect(newsletterErrors({ name: 'E', description: 'R' })).toEqual({
      name: 'Name must be at least 2 characters long',
      description: 'Full name must be at least 4 characters long',
    });
    // Trimmed, and counted in characters as the server does.
    expect(newsletterErrors({ name: ' E ', description: '  ' }).name).toBe('Name must be at least 2 characters long');
    expect(newsletterErrors({ name: '€€', description: '😀😀' })).toEqual({});
    expect(newsletterErrors({ name: '😀', description: 'ok' }).name).toBe('Name must be at least 2 characters long');
  });

  it('drives the form through zod, and sends the trimmed texts', () => {
    expect(newsletterFormSchema.safeParse({ name: 'E', description: 'Re' }).success).toBe(false);
    expect(newsletterFormSchema.safeParse({ name: 'Eu', description: 'Re' }).success).toBe(true);
    expect(newsletterBody({ name: ' Euribor desk ', description: ' Resting interest\n' })).toEqual({ name: 'Euribor desk', description: 'Resting interest' });
  });
});
