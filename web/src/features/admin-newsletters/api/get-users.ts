import { useQuery } from '@tanstack/react-query';
import type { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { pageSchema } from '@/lib/api/dto';
import { userSchema } from '@/lib/api/get-me';
import type { components } from '@/lib/api/schema';

/** Admin spec section 2: recipient fetches use size 200 (page 0). */
export const RECIPIENT_FETCH_SIZE = 200;

const userPageSchema = pageSchema(userSchema) satisfies z.ZodType<components['schemas']['Page_UserDto']>;

export function getRecipientChoices(signal?: AbortSignal) {
  return apiFetch(`/admin/users?page=0&size=${RECIPIENT_FETCH_SIZE}`, { schema: userPageSchema, signal });
}

/** GET /admin/users, page 0 of 200: the users a newsletter's recipients are chosen from. */
export function useRecipientChoices() {
  // Under the users panel's key, so a change there refreshes the choices too.
  return useQuery({ queryKey: ['admin', 'users', 'recipient-choices'], queryFn: ({ signal }) => getRecipientChoices(signal) });
}
