import { useState } from 'react';

/** Books the trader added by hand (besides those of their parent orders), kept per user in this browser. */
export function useAddedBooks(userId: string) {
  const key = `upstairs.books.${userId}`;
  const [ids, setIds] = useState<string[]>(() => {
    try {
      const v: unknown = JSON.parse(localStorage.getItem(key) ?? '[]');
      return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
    } catch {
      return [];
    }
  });
  const save = (next: string[]) => {
    localStorage.setItem(key, JSON.stringify(next));
    setIds(next);
  };
  return {
    ids,
    add: (id: string) => !ids.includes(id) && save([...ids, id]),
    remove: (id: string) => save(ids.filter((x) => x !== id)),
  };
}
