import { act, waitFor } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { COOKIE_CONSENT_KEY, TOKEN_STORAGE_KEY } from '@/config/constants';
import { db } from '@/testing/mocks/db';
import { server } from '@/testing/mocks/server';
import { renderApp, screen } from '@/testing/test-utils';

describe('top bar', () => {
  it('links the logo to the dashboard', async () => {
    const { router, user } = renderApp('/user/account', { signedInAs: 'trader@acme.test' });
    await user.click(await screen.findByRole('link', { name: 'Dashboard' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/dashboard'));
  });

  it('shows the e-mail, Settings and Logout in the profile menu', async () => {
    const { router, user } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    await user.click(await screen.findByRole('button', { name: 'Profile menu' }));
    expect(screen.getByTestId('profile-email')).toHaveTextContent('trader@acme.test');
    await user.click(screen.getByRole('menuitem', { name: 'Settings' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/settings'));
  });

  it('logs out, revoking the session on the server', async () => {
    const { router, user } = renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    const token = localStorage.getItem(TOKEN_STORAGE_KEY)!;
    await user.click(await screen.findByRole('button', { name: 'Profile menu' }));
    await user.click(screen.getByRole('menuitem', { name: 'Logout' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    expect(db.sessions.has(token)).toBe(false);
    expect(localStorage.getItem(TOKEN_STORAGE_KEY)).toBeNull();
  });
});

describe('API error snackbar', () => {
  it('shows a detail in red at the bottom centre for 6 seconds while signed in', async () => {
    server.use(
      http.patch('*/api/users/:id', () =>
        HttpResponse.json({ status: 503, title: 'Unavailable', detail: 'The database is unavailable.' }, { status: 503 }),
      ),
    );
    const { user } = renderApp('/settings', { signedInAs: 'trader@acme.test', fakeTimers: true });
    await user.click(await screen.findByRole('button', { name: 'Save changes' }));
    const snackbar = await screen.findByTestId('api-error-snackbar');
    expect(snackbar).toHaveTextContent('The database is unavailable.');
    expect(snackbar).toHaveClass('MuiAlert-colorError', 'MuiAlert-filled');
    expect(snackbar.closest('.MuiSnackbar-anchorOriginBottomCenter')).not.toBeNull();
    act(() => vi.advanceTimersByTime(5_900));
    expect(screen.getByTestId('api-error-snackbar')).toBeInTheDocument();
    act(() => vi.advanceTimersByTime(1_000));
    await waitFor(() => expect(screen.queryByTestId('api-error-snackbar')).not.toBeInTheDocument());
  });
});

describe('cookie consent banner', () => {
  it('is accepted with Accept and remembered', async () => {
    localStorage.removeItem(COOKIE_CONSENT_KEY);
    const { user } = renderApp('/login');
    const banner = await screen.findByRole('region', { name: 'Cookie consent' });
    expect(banner).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Accept' }));
    expect(screen.queryByRole('region', { name: 'Cookie consent' })).not.toBeInTheDocument();
    expect(JSON.parse(localStorage.getItem(COOKIE_CONSENT_KEY)!)).toEqual({ essential: true, functional: true, performance: true });
  });

  it('lets the user manage the categories', async () => {
    localStorage.removeItem(COOKIE_CONSENT_KEY);
    const { user } = renderApp('/login');
    await user.click(await screen.findByRole('button', { name: 'Manage' }));
    const essential = screen.getByRole('switch', { name: 'Essential (always on)' });
    expect(essential).toBeChecked();
    expect(essential).toBeDisabled();
    expect(screen.getByRole('switch', { name: 'Functional' })).not.toBeChecked();
    expect(screen.getByRole('switch', { name: 'Performance' })).not.toBeChecked();
    expect(screen.getByRole('button', { name: 'Accept All Cookies' })).toBeInTheDocument();
    await user.click(screen.getByRole('switch', { name: 'Performance' }));
    await user.click(screen.getByRole('button', { name: 'Save Preferences' }));
    expect(JSON.parse(localStorage.getItem(COOKIE_CONSENT_KEY)!)).toEqual({ essential: true, functional: false, performance: true });
    expect(screen.queryByRole('region', { name: 'Cookie consent' })).not.toBeInTheDocument();
  });

  it('accepts everything from the manage view', async () => {
    localStorage.removeItem(COOKIE_CONSENT_KEY);
    const { user } = renderApp('/login');
    await user.click(await screen.findByRole('button', { name: 'Manage' }));
    await user.click(screen.getByRole('button', { name: 'Accept All Cookies' }));
    expect(JSON.parse(localStorage.getItem(COOKIE_CONSENT_KEY)!)).toEqual({ essential: true, functional: true, performance: true });
  });

  it('is not shown once answered', async () => {
    renderApp('/login');
    await screen.findByRole('button', { name: 'Sign in' });
    expect(screen.queryByRole('region', { name: 'Cookie consent' })).not.toBeInTheDocument();
  });
});
