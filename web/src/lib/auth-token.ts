import { useSyncExternalStore } from 'react';
import { TOKEN_STORAGE_KEY } from '@/config/constants';

// The bearer token lives in local storage with "Remember me", otherwise in
// session storage (spec section 9). Listeners let React re-render on change.
const listeners = new Set<() => void>();

function notify() {
  listeners.forEach((l) => l());
}

export function getToken(): string | null {
  return localStorage.getItem(TOKEN_STORAGE_KEY) ?? sessionStorage.getItem(TOKEN_STORAGE_KEY);
}

export function setToken(token: string, remember: boolean) {
  localStorage.removeItem(TOKEN_STORAGE_KEY);
  sessionStorage.removeItem(TOKEN_STORAGE_KEY);
  (remember ? localStorage : sessionStorage).setItem(TOKEN_STORAGE_KEY, token);
  notify();
}

function clearToken() {
  localStorage.removeItem(TOKEN_STORAGE_KEY);
  sessionStorage.removeItem(TOKEN_STORAGE_KEY);
  notify();
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

export function useToken(): string | null {
  return useSyncExternalStore(subscribe, getToken, getToken);
}

const sessionEndListeners = new Set<() => void>();

/** Registers what else must be reset when the session ends (the query cache). */
export function onSessionEnd(listener: () => void) {
  sessionEndListeners.add(listener);
  return () => {
    sessionEndListeners.delete(listener);
  };
}

/** Forgets the token and resets all client state. */
export function endSession() {
  clearToken();
  sessionEndListeners.forEach((l) => l());
}
