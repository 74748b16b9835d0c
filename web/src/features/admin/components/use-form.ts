import { useState } from 'react';
import { hasErrors } from '../lib/rules';

/**
 * Form state with rules: errors show once a field is touched (changed or left),
 * and `valid` tells whether the form may be submitted.
 */
export function useForm<F extends Record<string, unknown>>(initial: F, rules: (f: F) => Partial<Record<keyof F, string>>) {
  const [values, setValues] = useState(initial);
  const [touched, setTouched] = useState<Partial<Record<keyof F, boolean>>>({});
  const errors = rules(values);
  return {
    values,
    valid: !hasErrors(errors as Record<string, string | undefined>),
    set: <K extends keyof F>(key: K, value: F[K]) => {
      setValues((v) => ({ ...v, [key]: value }));
      setTouched((t) => ({ ...t, [key]: true }));
    },
    /** Sets several fields at once (e.g. the other side of the band) without touching them. */
    patch: (changes: Partial<F>) => setValues((v) => ({ ...v, ...changes })),
    touch: (key: keyof F) => setTouched((t) => ({ ...t, [key]: true })),
    error: (key: keyof F): string | undefined => (touched[key] ? errors[key] : undefined),
  };
}
