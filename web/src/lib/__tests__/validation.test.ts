import { describe, expect, it } from 'vitest';
import { EMAIL_MESSAGES, emailError, emailSchema, looksLikeEmail } from '@/lib/validation';

// The server's Email::parse (crates/domain/src/account.rs) checks: trimmed, required, the
// format, then the length. The browser gives the same first message for the same input.
describe('e-mail rules, in the server order', () => {
  it('gives the spec texts', () => {
    expect(EMAIL_MESSAGES).toEqual({
      required: 'Email is required',
      invalid: 'Please enter a valid email address',
      tooShort: 'Email must be at least 5 characters long',
    });
  });

  it('checks required first, then the format, then the length', () => {
    expect(emailError('')).toBe('Email is required');
    expect(emailError('   ')).toBe('Email is required');
    // Shorter than 5 and not an address: the format message comes first, as on the server.
    for (const short of ['a', 'ab@', 'a@b', 'a@.b', '@b.c']) expect(emailError(short)).toBe('Please enter a valid email address');
    expect(emailError('tess-at-acme.test')).toBe('Please enter a valid email address');
  });

  it('accepts what the server accepts, trimmed', () => {
    for (const ok of ['a@b.c', 'tess@acme.test', '  tess@acme.test  ', 'o\'neil+desk@example.co.uk', 'δοκιμή@παράδειγμα.ελ']) {
      expect(emailError(ok), ok).toBeUndefined();
    }
    expect(emailSchema.parse('  tess@acme.test ')).toBe('tess@acme.test');
  });

  it('refuses what the server refuses', () => {
    for (const bad of ['a@@b.c', 'a@b@c.d', 'a b@c.d', 'a@b .c', 'a@b.', 'a@.b.c', 'a@b..c', 'a@bc', 'a\u0007@b.c', 'a\u00a0b@c.d', `${'x'.repeat(251)}@b.c`]) {
      expect(emailError(bad), bad).toBe('Please enter a valid email address');
    }
    expect(looksLikeEmail(`${'x'.repeat(249)}@b.cd`)).toBe(true); // 254 bytes
    expect(looksLikeEmail(`${'é'.repeat(125)}@b.cd`)).toBe(false); // 130 characters but 255 bytes, as Rust's len() counts
  });

  it('gives one message at a time, the first the server would', () => {
    const r = emailSchema.safeParse('a@b');
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.message)).toEqual(['Please enter a valid email address']);
  });

  it('never reaches the length rule: the shortest address the format accepts has 5 characters', () => {
    // Every value under 5 characters fails on its format (or on being empty) first.
    for (const s of ['x', 'x@', 'x@y', 'x@y.', '@y.z', 'x@.z', 'x.y@']) expect(emailError(s)).not.toBe(EMAIL_MESSAGES.tooShort);
    expect(emailError('a@b.c')).toBeUndefined();
  });
});
