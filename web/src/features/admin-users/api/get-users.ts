import { queryOptions, useQuery } from '@tanstack/react-query';
import type { z } from 'zod';
import { apiFetch } from '@/lib/api-client';
import { pageSchema } from '@/lib/api/dto';
import { userSchema } from '@/lib/api/get-me';
import type { components } from '@/lib/api/schema';

/** Admin spec sections 2 and 9: lists are fetched as page 0, size 200. */
export const LIST_SIZE = 200;

const userPageSchema = pageSchema(userSchema) satisfies z.ZodType<components['schemas']['Page_UserDto']>;

export const usersQueryKey = ['admin', 'users'] as const;

export function getUsers(signal?: AbortSignal) {
  return apiFetch(`/admin/users?page=0&size=${LIST_SIZE}`, { schema: userPageSchema, signal });
}

export const usersQueryOptions = () => queryOptions({ queryKey: usersQueryKey, queryFn: ({ signal }) => getUsers(signal) });

/** GET /admin/users, page 0 of 200. */
export function useUsers() {
  return useQuery(usersQueryOptions());
}
