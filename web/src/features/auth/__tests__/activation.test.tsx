import { waitFor } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { db } from '@/testing/mocks/db';
import { server } from '@/testing/mocks/server';
import { renderApp, screen } from '@/testing/test-utils';

describe('account activation', () => {
  it('welcomes a valid link with the product name and leads to the password form', async () => {
    db.links.set('good', { email: 'trader@acme.test', purpose: 'ACTIVATION' });
    const { user, router } = renderApp('/account-activate?hash=good');
    expect(await screen.findByRole('heading', { name: 'Welcome to Upstairs!' })).toBeInTheDocument();
    expect(screen.getByText('Create a password to activate your account')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/password'));
    expect(router.state.location.search).toBe('?hash=good');
    expect(await screen.findByRole('heading', { name: 'Create Your New Password' })).toBeInTheDocument();
  });

  it("shows the expired screen and requests a new activation link", async () => {
    const { user } = renderApp('/account-activate?hash=old');
    expect(await screen.findByRole('heading', { name: 'Oops! Your link has expired' })).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Request new link' }));
    expect(await screen.findByRole('heading', { name: "Let's get you started" })).toBeInTheDocument();
    const send = screen.getByRole('button', { name: 'Send link' });
    expect(send).toBeDisabled();
    await user.type(screen.getByLabelText('Email'), 'new@acme.test');
    await user.click(send);
    expect(await screen.findByRole('heading', { name: 'All done!' })).toBeInTheDocument();
    expect(db.resetRequests).toEqual([{ email: 'new@acme.test', newAccount: true }]);
    await user.click(screen.getByRole('button', { name: 'try again' }));
    expect(await screen.findByRole('heading', { name: "Let's get you started" })).toBeInTheDocument();
  });

  it('shows the expired screen without a hash', async () => {
    renderApp('/account-activate');
    expect(await screen.findByRole('heading', { name: 'Oops! Your link has expired' })).toBeInTheDocument();
  });

  it('shows the expired screen on any check error', async () => {
    server.use(http.get('*/api/users/password-reset/:hash', () => new HttpResponse(null, { status: 500 })));
    renderApp('/account-activate?hash=x');
    expect(await screen.findByRole('heading', { name: 'Oops! Your link has expired' })).toBeInTheDocument();
  });

  it('shows the link-request failure text', async () => {
    server.use(http.post('*/api/users/password-reset', () => new HttpResponse(null, { status: 500 })));
    const { user } = renderApp('/account-activate?hash=old');
    await user.click(await screen.findByRole('button', { name: 'Request new link' }));
    await user.type(await screen.findByLabelText('Email'), 'new@acme.test{Enter}');
    expect(await screen.findByRole('alert')).toHaveTextContent('An error occurred while creating a password creation link.');
  });

  it('shows the server detail when the link request fails with one', async () => {
    server.use(
      http.post('*/api/users/password-reset', () => HttpResponse.json({ status: 400, title: 'Bad', detail: 'Email is not valid.' }, { status: 400 })),
    );
    const { user } = renderApp('/account-activate?hash=old');
    await user.click(await screen.findByRole('button', { name: 'Request new link' }));
    await user.type(await screen.findByLabelText('Email'), 'new@acme.test{Enter}');
    expect(await screen.findByRole('alert')).toHaveTextContent('Email is not valid.');
  });
});
