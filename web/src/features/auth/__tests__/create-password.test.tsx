import { act, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { db } from '@/testing/mocks/db';
import { server } from '@/testing/mocks/server';
import { renderApp, screen } from '@/testing/test-utils';

const RULES = [
  'Minimum length: 10 characters',
  'Maximum length: 30 characters',
  'At least one uppercase letter',
  'At least one lowercase letter',
  'At least one number',
  'At least one special character: !@#$%^&+=-',
  'No spaces',
];

function ruleState(text: string) {
  return screen.getByText(text).closest('li')?.getAttribute('data-met');
}

describe("'Create Your New Password'", () => {
  it('shows both fields with show/hide and one checklist line per rule', async () => {
    db.links.set('h1', { email: 'trader@acme.test', purpose: 'RESET' });
    const { user } = renderApp('/reset-password?hash=h1');
    expect(await screen.findByRole('heading', { name: 'Create Your New Password' })).toBeInTheDocument();
    const list = screen.getByRole('list', { name: 'Password rules' });
    expect(within(list).getAllByRole('listitem').map((li) => li.textContent)).toEqual(RULES);
    await user.click(screen.getByRole('button', { name: 'Show Create Password' }));
    expect(screen.getByLabelText('Create Password')).toHaveAttribute('type', 'text');
    await user.click(screen.getByRole('button', { name: 'Show Repeat Password' }));
    expect(screen.getByLabelText('Repeat Password')).toHaveAttribute('type', 'text');
  });

  it('updates the checklist live as the password is typed', async () => {
    db.links.set('h1', { email: 'trader@acme.test', purpose: 'RESET' });
    const { user } = renderApp('/reset-password?hash=h1');
    const input = await screen.findByLabelText('Create Password');
    await user.type(input, 'abc');
    expect(ruleState('At least one lowercase letter')).toBe('true');
    expect(ruleState('At least one uppercase letter')).toBe('false');
    expect(ruleState('Minimum length: 10 characters')).toBe('false');
    await user.type(input, 'DEF123');
    expect(ruleState('Minimum length: 10 characters')).toBe('false');
    await user.type(input, '!');
    expect(ruleState('Minimum length: 10 characters')).toBe('true');
    expect(ruleState('At least one special character: !@#$%^&+=-')).toBe('true');
    expect(ruleState('At least one number')).toBe('true');
    await user.type(input, ' ');
    expect(ruleState('No spaces')).toBe('false');
    await user.type(input, 'x'.repeat(25));
    expect(ruleState('Maximum length: 30 characters')).toBe('false');
  });

  it('says when the passwords do not match and does not submit', async () => {
    db.links.set('h1', { email: 'trader@acme.test', purpose: 'RESET' });
    const { user } = renderApp('/reset-password?hash=h1');
    await user.type(await screen.findByLabelText('Create Password'), 'Good-Pass-2026');
    await user.type(screen.getByLabelText('Repeat Password'), 'Good-Pass-2027');
    expect(screen.getByText('Passwords do not match. Please try again')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Save password' }));
    expect(db.links.has('h1')).toBe(true);
  });

  it('does not submit a password that breaks a rule', async () => {
    db.links.set('h1', { email: 'trader@acme.test', purpose: 'RESET' });
    const { user } = renderApp('/reset-password?hash=h1');
    await user.type(await screen.findByLabelText('Create Password'), 'short');
    await user.type(screen.getByLabelText('Repeat Password'), 'short');
    await user.click(screen.getByRole('button', { name: 'Save password' }));
    await waitFor(() => expect(screen.getByLabelText('Create Password')).toHaveAttribute('aria-invalid', 'true'));
    expect(db.links.has('h1')).toBe(true);
  });

  it('sets the password, shows the success toast and goes to /login after 2 seconds', async () => {
    db.links.set('h1', { email: 'trader@acme.test', purpose: 'RESET' });
    const { user, router } = renderApp('/reset-password?hash=h1', { fakeTimers: true });
    await user.type(await screen.findByLabelText('Create Password'), 'Brand-New-2026');
    await user.type(screen.getByLabelText('Repeat Password'), 'Brand-New-2026');
    await user.click(screen.getByRole('button', { name: 'Save password' }));
    expect(await screen.findByText('Your password has been updated successfully. You can now log in.')).toBeInTheDocument();
    expect(db.user().password).toBe('Brand-New-2026');
    act(() => vi.advanceTimersByTime(1_900));
    expect(router.state.location.pathname).toBe('/reset-password');
    act(() => vi.advanceTimersByTime(200));
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
  });

  it("shows the server's rule message on the password field", async () => {
    db.links.set('h1', { email: 'trader@acme.test', purpose: 'ACTIVATION' });
    const { user } = renderApp('/password?hash=h1');
    await user.type(await screen.findByLabelText('Create Password'), 'Password-2026');
    await user.type(screen.getByLabelText('Repeat Password'), 'Password-2026');
    await user.click(screen.getByRole('button', { name: 'Save password' }));
    expect(await screen.findByText('Password is too common')).toBeInTheDocument();
  });

  it('shows the generic failure text without a detail', async () => {
    db.links.set('h1', { email: 'trader@acme.test', purpose: 'RESET' });
    server.use(http.post('*/api/users/password-reset/:hash', () => new HttpResponse(null, { status: 500 })));
    const { user } = renderApp('/reset-password?hash=h1');
    await user.type(await screen.findByLabelText('Create Password'), 'Brand-New-2026');
    await user.type(screen.getByLabelText('Repeat Password'), 'Brand-New-2026');
    await user.click(screen.getByRole('button', { name: 'Save password' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('An error occurred while changing your password.');
  });

  it('shows the server detail on failure', async () => {
    db.links.set('h1', { email: 'trader@acme.test', purpose: 'RESET' });
    server.use(
      http.post('*/api/users/password-reset/:hash', () =>
        HttpResponse.json({ status: 503, title: 'Unavailable', detail: 'Service unavailable.' }, { status: 503 }),
      ),
    );
    const { user } = renderApp('/reset-password?hash=h1');
    await user.type(await screen.findByLabelText('Create Password'), 'Brand-New-2026');
    await user.type(screen.getByLabelText('Repeat Password'), 'Brand-New-2026');
    await user.click(screen.getByRole('button', { name: 'Save password' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Service unavailable.');
  });

  it('shows the expired screen when the link expires before saving', async () => {
    db.links.set('h1', { email: 'trader@acme.test', purpose: 'RESET' });
    const { user } = renderApp('/reset-password?hash=h1');
    await user.type(await screen.findByLabelText('Create Password'), 'Brand-New-2026');
    await user.type(screen.getByLabelText('Repeat Password'), 'Brand-New-2026');
    db.links.delete('h1');
    await user.click(screen.getByRole('button', { name: 'Save password' }));
    expect(await screen.findByRole('heading', { name: 'Oops! Your link has expired' })).toBeInTheDocument();
  });

  it('takes a link only on the page of its purpose, and sends that purpose', async () => {
    db.links.set('h1', { email: 'trader@acme.test', purpose: 'ACTIVATION' });
    renderApp('/reset-password?hash=h1');
    expect(await screen.findByRole('heading', { name: 'Oops! Your link has expired' })).toBeInTheDocument();

    let sent: unknown;
    server.use(
      http.post('*/api/users/password-reset/:hash', async ({ request }) => {
        sent = await request.json();
        return new HttpResponse(null, { status: 204 });
      }),
    );
    db.links.set('h2', { email: 'trader@acme.test', purpose: 'RESET' });
    const { user } = renderApp('/reset-password?hash=h2');
    await user.type(await screen.findByLabelText('Create Password'), 'Brand-New-2026');
    await user.type(screen.getByLabelText('Repeat Password'), 'Brand-New-2026');
    await user.click(screen.getByRole('button', { name: 'Save password' }));
    await waitFor(() => expect(sent).toEqual({ password: 'Brand-New-2026', purpose: 'RESET' }));
  });

  it('offers a new reset link from an expired reset link', async () => {
    const { user } = renderApp('/reset-password?hash=gone');
    await user.click(await screen.findByRole('button', { name: 'Request new link' }));
    await user.type(await screen.findByLabelText('Email'), 'trader@acme.test{Enter}');
    expect(await screen.findByRole('heading', { name: 'All done!' })).toBeInTheDocument();
    expect(db.resetRequests).toEqual([{ email: 'trader@acme.test', newAccount: false }]);
  });

  it('can be completed with the keyboard alone', async () => {
    db.links.set('h1', { email: 'trader@acme.test', purpose: 'RESET' });
    const { user } = renderApp('/reset-password?hash=h1');
    await screen.findByLabelText('Create Password');
    await user.keyboard('Brand-New-2026');
    await user.tab(); // show/hide toggle
    await user.tab();
    await user.keyboard('Brand-New-2026{Enter}');
    expect(await screen.findByText('Your password has been updated successfully. You can now log in.')).toBeInTheDocument();
  });
});
