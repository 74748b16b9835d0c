/** Password rules of spec section 5, each with its own text. */
export const passwordRules: { id: string; text: string; test: (v: string) => boolean }[] = [
  { id: 'min', text: 'Minimum length: 10 characters', test: (v) => v.length >= 10 },
  { id: 'max', text: 'Maximum length: 30 characters', test: (v) => v.length <= 30 },
  { id: 'upper', text: 'At least one uppercase letter', test: (v) => /[A-Z]/.test(v) },
  { id: 'lower', text: 'At least one lowercase letter', test: (v) => /[a-z]/.test(v) },
  { id: 'digit', text: 'At least one number', test: (v) => /[0-9]/.test(v) },
  {
    id: 'special',
    text: 'At least one special character: !@#$%^&+=-',
    test: (v) => /[!@#$%^&+=-]/.test(v),
  },
  { id: 'spaces', text: 'No spaces', test: (v) => !/\s/.test(v) },
];
