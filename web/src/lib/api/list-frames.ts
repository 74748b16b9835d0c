import type { QueryClient, QueryKey } from '@tanstack/react-query';

/**
 * `list` with a pushed `row` written in (ADR 0029): replaced where it was, first when new
 * (the lists are newest first), left out once it is not `listed`; nothing before the
 * list's first read.
 */
export function withRow<T>(list: T[] | undefined, row: T, id: (t: T) => string, listed: boolean): T[] | undefined {
  if (!list) return list;
  const at = list.findIndex((x) => id(x) === id(row));
  if (at < 0) return listed ? [row, ...list] : list;
  return listed ? list.map((x, i) => (i === at ? row : x)) : list.filter((_, i) => i !== at);
}

/**
 * Writes `update` into the list under `key`; reads the list again instead when a frame
 * could not be read (`update` null) or a read is under way (it may answer from before the frame).
 */
export function writeList<T>(queryClient: QueryClient, key: QueryKey, update: ((list: T[] | undefined) => T[] | undefined) | null) {
  if (update && queryClient.isFetching({ queryKey: key }) === 0) queryClient.setQueryData<T[]>(key, update);
  else void queryClient.invalidateQueries({ queryKey: key });
}
