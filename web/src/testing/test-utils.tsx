import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { vi } from 'vitest';
import { AppProvider, createQueryClient } from '@/app/provider';
import { routes } from '@/app/routes';
import { TOKEN_STORAGE_KEY } from '@/config/constants';
import { db } from './mocks/db';

type Options = { signedInAs?: string; remember?: boolean; fakeTimers?: boolean };

/** Renders the whole app at a path, optionally with a stored session. */
export function renderApp(path: string, { signedInAs, remember = true, fakeTimers = false }: Options = {}) {
  if (signedInAs) {
    (remember ? localStorage : sessionStorage).setItem(TOKEN_STORAGE_KEY, db.signIn(signedInAs));
  }
  if (fakeTimers) vi.useFakeTimers({ shouldAdvanceTime: true });
  const user = userEvent.setup(fakeTimers ? { advanceTimers: vi.advanceTimersByTime.bind(vi) } : {});
  const router = createMemoryRouter(routes, { initialEntries: [path] });
  const queryClient = createQueryClient();
  queryClient.setDefaultOptions({ queries: { ...queryClient.getDefaultOptions().queries, retry: false } });
  const utils = render(
    <AppProvider queryClient={queryClient}>
      <RouterProvider router={router} />
    </AppProvider>,
  );
  return { ...utils, router, user, queryClient };
}

export { screen };

/** The text of an element including its children, for texts split by links. */
export function byTextContent(text: string) {
  return (_: string, el: Element | null) => el?.textContent === text && Array.from(el.children).every((c) => c.textContent !== text);
}

/**
 * Types a date into a DD/MM/YYYY picker field (its day, month and year sections, then the
 * time's when given), replacing what it held, as a keyboard user does.
 */
export async function typeDate(user: ReturnType<typeof userEvent.setup>, label: string, text: string) {
  const field = screen.getByRole('group', { name: label });
  const [first] = within(field).getAllByRole('spinbutton');
  await user.click(first!);
  // Select every section and clear it, then type the digits across the sections.
  await user.keyboard('{Control>}a{/Control}{Backspace}');
  await user.keyboard(text.replace(/\D/g, ''));
}
