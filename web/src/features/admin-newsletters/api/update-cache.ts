import type { QueryClient } from '@tanstack/react-query';
import { newslettersQueryKey, type Newsletter } from './get-newsletters';

/** Puts a newsletter the server answered with into the list at once, then refetches the list. */
export function storeNewsletter(queryClient: QueryClient, n: Newsletter) {
  queryClient.setQueryData<Newsletter[]>(newslettersQueryKey, (list) => list?.map((x) => (x.newsletter_id === n.newsletter_id ? n : x)));
  return queryClient.invalidateQueries({ queryKey: newslettersQueryKey });
}
