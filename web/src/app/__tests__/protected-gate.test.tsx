import { act, waitFor } from '@testing-library/react';
import { delay, http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { TOKEN_STORAGE_KEY } from '@/config/constants';
import { meQueryKey } from '@/lib/api/get-me';
import { getLastErrorStatus } from '@/lib/api-errors';
import { db, SUPPORT_EMAIL, SUPPORT_PHONE } from '@/testing/mocks/db';
import { server } from '@/testing/mocks/server';
import { renderApp, screen } from '@/testing/test-utils';

describe('protected gate', () => {
  it('sends / to /dashboard', async () => {
    const { router } = renderApp('/', { signedInAs: 'trader@acme.test' });
    await waitFor(() => expect(router.state.location.pathname).toBe('/dashboard'));
    expect(await screen.findByRole('heading', { name: 'Getting started' })).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'No active orders yet' })).toBeInTheDocument();
  });

  it('sends a visitor without a session to /login and back to the origin after sign-in', async () => {
    const { router, user } = renderApp('/user/account');
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    await user.type(await screen.findByLabelText('Email'), 'trader@acme.test');
    await user.type(screen.getByLabelText('Password'), 'Valid-Pass-2026{Enter}');
    await waitFor(() => expect(router.state.location.pathname).toBe('/user/account'));
    expect(await screen.findByRole('heading', { name: 'Account information' })).toBeInTheDocument();
  });

  it('sends a user without preferences to /settings', async () => {
    db.user().auto_accept = null;
    const { router } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    await waitFor(() => expect(router.state.location.pathname).toBe('/settings'));
    expect(await screen.findByRole('heading', { name: 'Welcome to Upstairs' })).toBeInTheDocument();
  });

  it('logs out and resets state on a failed session check (401)', async () => {
    const token = 'stale-token';
    localStorage.setItem(TOKEN_STORAGE_KEY, token);
    const { router } = renderApp('/settings');
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    expect(localStorage.getItem(TOKEN_STORAGE_KEY)).toBeNull();
    expect(await screen.findByRole('button', { name: 'Sign in' })).toBeInTheDocument();
  });

  it('goes to /login on any failed session check', async () => {
    server.use(http.get('*/api/users/me', () => new HttpResponse('boom', { status: 500 })));
    const { router } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    await waitFor(() => expect(localStorage.getItem(TOKEN_STORAGE_KEY)).toBeNull());
  });

  it("shows 'Please Wait' and, after more than 10 seconds, a Login button that clears the session", async () => {
    server.use(
      http.get('*/api/users/me', async () => {
        await delay('infinite');
        return HttpResponse.json({});
      }),
    );
    const { router, user } = renderApp('/dashboard', { signedInAs: 'trader@acme.test', fakeTimers: true });
    expect(await screen.findByRole('heading', { name: 'Please Wait' })).toBeInTheDocument();
    expect(screen.getByText(/session timed out/)).toBeInTheDocument();
    act(() => vi.advanceTimersByTime(9_000));
    expect(screen.queryByRole('button', { name: 'Login' })).not.toBeInTheDocument();
    act(() => vi.advanceTimersByTime(1_100));
    await user.click(screen.getByRole('button', { name: 'Login' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    expect(localStorage.getItem(TOKEN_STORAGE_KEY)).toBeNull();
  });

  it('logs out on a 401 from any call', async () => {
    server.use(http.patch('*/api/users/:id', () => HttpResponse.json({ status: 401, title: 'Unauthorized' }, { status: 401 })));
    const { router, user, queryClient } = renderApp('/settings', { signedInAs: 'trader@acme.test' });
    await user.click(await screen.findByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    expect(localStorage.getItem(TOKEN_STORAGE_KEY)).toBeNull();
    expect(queryClient.getQueryData(meQueryKey)).toBeUndefined();
    expect(getLastErrorStatus()).toBeNull();
  });
});

describe('404 page', () => {
  it('shows the title, the support phone and e-mail and a link home', async () => {
    const { router, user } = renderApp('/no/such/page');
    expect(await screen.findByRole('heading', { name: 'Oops! Page Not Found (404)' })).toBeInTheDocument();
    expect(await screen.findByRole('link', { name: SUPPORT_PHONE })).toHaveAttribute('href', 'tel:+442079460000');
    expect(screen.getByRole('link', { name: SUPPORT_EMAIL })).toHaveAttribute('href', `mailto:${SUPPORT_EMAIL}`);
    await user.click(screen.getByRole('link', { name: 'Go to the homepage' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
  });
});
