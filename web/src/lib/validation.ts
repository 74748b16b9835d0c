import { z } from 'zod';

/** E-mail rules of spec section 5, in the order the messages are checked. */
export const emailSchema = z
  .string()
  .trim()
  .min(1, 'Email is required')
  .min(5, 'Email must be at least 5 characters long')
  .pipe(z.email('Please enter a valid email address'));
