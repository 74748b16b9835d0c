import { useMutation } from '@tanstack/react-query';
import { apiFetch } from '@/lib/api-client';
import { endSession } from '@/lib/auth-token';

export function logout(): Promise<void> {
  return apiFetch('/auth/session', { method: 'DELETE' });
}

/** Revokes the session on the server, then forgets it here whatever the answer. */
export function useLogout({ onDone }: { onDone?: () => void } = {}) {
  return useMutation({
    mutationFn: logout,
    onSettled: () => {
      endSession();
      onDone?.();
    },
  });
}
