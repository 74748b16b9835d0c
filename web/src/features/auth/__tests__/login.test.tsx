import { act, waitFor } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { TOKEN_STORAGE_KEY } from '@/config/constants';
import { db, SUPPORT_EMAIL, SUPPORT_PHONE } from '@/testing/mocks/db';
import { server } from '@/testing/mocks/server';
import { byTextContent, renderApp, screen } from '@/testing/test-utils';

async function fillAndSubmit(user: ReturnType<typeof renderApp>['user'], email: string, password: string) {
  await user.type(await screen.findByLabelText('Email'), email);
  await user.type(screen.getByLabelText('Password'), password);
  await user.click(screen.getByRole('button', { name: 'Sign in' }));
}

describe('login screen', () => {
  it('shows the fields, Remember me and the footer links', async () => {
    renderApp('/login');
    expect(await screen.findByLabelText('Email')).toBeInTheDocument();
    expect(screen.getByLabelText('Password')).toHaveAttribute('type', 'password');
    expect(screen.getByLabelText('Remember me')).not.toBeChecked();
    expect(screen.getByRole('link', { name: 'Forgot password?' })).toHaveAttribute('href', '/reset-password');
    expect(await screen.findByText(byTextContent("Don't have an account? Email us"))).toBeInTheDocument();
    await waitFor(() => expect(screen.getByRole('link', { name: 'Email us' })).toHaveAttribute('href', `mailto:${SUPPORT_EMAIL}`));
    expect(screen.getByText(byTextContent('Need help? Contact us'))).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Contact us' })).toHaveAttribute('href', `mailto:${SUPPORT_EMAIL}`);
    // Trader spec section 1: sales support by e-mail and by phone, both clickable.
    expect(screen.getByTestId('sales-contact')).toHaveTextContent(`Accounts are opened by our sales team: ${SUPPORT_EMAIL} · ${SUPPORT_PHONE}`);
    expect(screen.getByRole('link', { name: `E-mail sales support at ${SUPPORT_EMAIL}` })).toHaveAttribute('href', `mailto:${SUPPORT_EMAIL}`);
    expect(screen.getByRole('link', { name: `Call sales support on ${SUPPORT_PHONE}` })).toHaveAttribute('href', 'tel:+442079460000');
    for (const name of ['Privacy policy', 'Cookie policy']) {
      expect(screen.getByRole('link', { name })).toHaveAttribute('target', '_blank');
    }
  });

  it('toggles the password visibility', async () => {
    const { user } = renderApp('/login');
    const input = await screen.findByLabelText('Password');
    await user.click(screen.getByRole('button', { name: 'Show Password' }));
    expect(input).toHaveAttribute('type', 'text');
    await user.click(screen.getByRole('button', { name: 'Hide Password' }));
    expect(input).toHaveAttribute('type', 'password');
  });

  it('validates the email and password with the spec texts', async () => {
    const { user } = renderApp('/login');
    await user.click(await screen.findByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText('Email is required')).toBeInTheDocument();
    expect(screen.getByText('Password is required')).toBeInTheDocument();

    // The server's order: the format before the length, so a short address is 'not valid'.
    await user.type(screen.getByLabelText('Email'), 'a@b');
    await user.type(screen.getByLabelText('Password'), 'short');
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText('Please enter a valid email address')).toBeInTheDocument();
    expect(screen.queryByText('Email must be at least 5 characters long')).not.toBeInTheDocument();
    expect(screen.getByText('Password must be at least 10 characters long')).toBeInTheDocument();

    await user.clear(screen.getByLabelText('Email'));
    await user.type(screen.getByLabelText('Email'), 'not-an-email');
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText('Please enter a valid email address')).toBeInTheDocument();
  });

  it('trims the email before sending it', async () => {
    let sent: unknown;
    server.use(
      http.post('*/api/auth/login', async ({ request }) => {
        sent = await request.json();
        return HttpResponse.json({ token: db.signIn() });
      }),
    );
    const { user, router } = renderApp('/login');
    await fillAndSubmit(user, '  trader@acme.test  ', 'Valid-Pass-2026');
    await waitFor(() => expect(router.state.location.pathname).toBe('/dashboard'));
    expect(sent).toEqual({ email: 'trader@acme.test', password: 'Valid-Pass-2026', rememberMe: false });
  });

  it('shows the server detail in a banner for 5 seconds with the inputs in error', async () => {
    const { user } = renderApp('/login', { fakeTimers: true });
    await fillAndSubmit(user, 'trader@acme.test', 'Wrong-Pass-2026');
    expect(await screen.findByRole('alert')).toHaveTextContent('Invalid email or password.');
    expect(screen.getByLabelText('Email')).toHaveAttribute('aria-invalid', 'true');
    expect(screen.getByLabelText('Password')).toHaveAttribute('aria-invalid', 'true');
    // No snackbar while signed out: the text appears only in the banner.
    expect(screen.getAllByText('Invalid email or password.')).toHaveLength(1);

    act(() => vi.advanceTimersByTime(4_900));
    expect(screen.getByText('Invalid email or password.')).toBeInTheDocument();
    act(() => vi.advanceTimersByTime(200));
    expect(screen.queryByText('Invalid email or password.')).not.toBeInTheDocument();
    expect(screen.getByLabelText('Email')).toHaveAttribute('aria-invalid', 'false');
  });

  it('shows the rate-limit detail', async () => {
    server.use(
      http.post('*/api/auth/login', () =>
        HttpResponse.json({ status: 429, title: 'Too Many Requests', detail: 'Too many attempts. Please wait a minute and try again.' }, { status: 429 }),
      ),
    );
    const { user } = renderApp('/login');
    await fillAndSubmit(user, 'trader@acme.test', 'Valid-Pass-2026');
    expect(await screen.findByRole('alert')).toHaveTextContent('Too many attempts. Please wait a minute and try again.');
  });

  it('falls back to the generic failure text without a detail', async () => {
    server.use(http.post('*/api/auth/login', () => new HttpResponse(null, { status: 500 })));
    const { user } = renderApp('/login');
    await fillAndSubmit(user, 'trader@acme.test', 'Valid-Pass-2026');
    expect(await screen.findByRole('alert')).toHaveTextContent('An error occurred while logging in.');
  });

  it('keeps the token in session storage without Remember me', async () => {
    const { user, router } = renderApp('/login');
    await fillAndSubmit(user, 'trader@acme.test', 'Valid-Pass-2026');
    await waitFor(() => expect(router.state.location.pathname).toBe('/dashboard'));
    expect(sessionStorage.getItem(TOKEN_STORAGE_KEY)).toMatch(/^token-/);
    expect(localStorage.getItem(TOKEN_STORAGE_KEY)).toBeNull();
    expect(await screen.findByText('Getting started')).toBeInTheDocument();
  });

  it('keeps the token in local storage with Remember me', async () => {
    const { user, router } = renderApp('/login');
    await user.click(await screen.findByLabelText('Remember me'));
    await fillAndSubmit(user, 'trader@acme.test', 'Valid-Pass-2026');
    await waitFor(() => expect(router.state.location.pathname).toBe('/dashboard'));
    expect(localStorage.getItem(TOKEN_STORAGE_KEY)).toMatch(/^token-/);
    expect(sessionStorage.getItem(TOKEN_STORAGE_KEY)).toBeNull();
  });

  it('can be done with the keyboard alone', async () => {
    const { user, router } = renderApp('/login');
    await screen.findByLabelText('Email');
    await user.keyboard('trader@acme.test');
    await user.tab();
    await user.keyboard('Valid-Pass-2026{Enter}');
    await waitFor(() => expect(router.state.location.pathname).toBe('/dashboard'));
  });

  it('redirects a signed-in user to the dashboard', async () => {
    const { router } = renderApp('/login', { signedInAs: 'trader@acme.test' });
    await waitFor(() => expect(router.state.location.pathname).toBe('/dashboard'));
  });
});
