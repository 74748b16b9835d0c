import { waitFor } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { db } from '@/testing/mocks/db';
import { server } from '@/testing/mocks/server';
import { renderApp, screen } from '@/testing/test-utils';

describe('forgot-password screen', () => {
  it("disables 'Send link' while the e-mail is empty", async () => {
    const { user } = renderApp('/reset-password');
    const send = await screen.findByRole('button', { name: 'Send link' });
    expect(send).toBeDisabled();
    await user.type(screen.getByLabelText('Email'), 'trader@acme.test');
    expect(send).toBeEnabled();
    await user.clear(screen.getByLabelText('Email'));
    expect(send).toBeDisabled();
  });

  it("sends a reset link, then shows 'All done!' with 'try again'", async () => {
    const { user } = renderApp('/reset-password');
    await user.type(await screen.findByLabelText('Email'), 'trader@acme.test{Enter}');
    expect(await screen.findByRole('heading', { name: 'All done!' })).toBeInTheDocument();
    expect(db.resetRequests).toEqual([{ email: 'trader@acme.test', newAccount: false }]);
    await user.click(screen.getByRole('button', { name: 'try again' }));
    expect(await screen.findByRole('button', { name: 'Send link' })).toBeEnabled();
    expect(screen.getByLabelText('Email')).toHaveValue('trader@acme.test');
  });

  it('validates the e-mail', async () => {
    const { user } = renderApp('/reset-password');
    await user.type(await screen.findByLabelText('Email'), 'nope-nope');
    await user.click(screen.getByRole('button', { name: 'Send link' }));
    expect(await screen.findByText('Please enter a valid email address')).toBeInTheDocument();
    expect(db.resetRequests).toHaveLength(0);
  });

  it('shows the server detail on failure', async () => {
    server.use(
      http.post('*/api/users/password-reset', () =>
        HttpResponse.json({ status: 429, title: 'Too Many Requests', detail: 'Too many attempts. Please wait a minute and try again.' }, { status: 429 }),
      ),
    );
    const { user } = renderApp('/reset-password');
    await user.type(await screen.findByLabelText('Email'), 'trader@acme.test{Enter}');
    expect(await screen.findByRole('alert')).toHaveTextContent('Too many attempts. Please wait a minute and try again.');
  });

  it('falls back to the generic failure text', async () => {
    server.use(http.post('*/api/users/password-reset', () => new HttpResponse(null, { status: 500 })));
    const { user } = renderApp('/reset-password');
    await user.type(await screen.findByLabelText('Email'), 'trader@acme.test{Enter}');
    expect(await screen.findByRole('alert')).toHaveTextContent('An error occurred while resetting your password.');
  });

  it('links back to sign in', async () => {
    const { user, router } = renderApp('/reset-password');
    await user.click(await screen.findByRole('link', { name: 'Back to sign in' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
  });
});
