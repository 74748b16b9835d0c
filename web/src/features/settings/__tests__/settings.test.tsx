import { act, waitFor } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { db, SUPPORT_EMAIL, SUPPORT_PHONE } from '@/testing/mocks/db';
import { server } from '@/testing/mocks/server';
import { renderApp, screen } from '@/testing/test-utils';

const OPTIONS = ['INSTANT', 'ACCEPT_WITH_DELAY', 'REJECT_WITH_DELAY'];

describe('settings, first-time setup', () => {
  it("is titled 'Welcome to Upstairs' without a breadcrumb and with 'Submit'", async () => {
    db.user().auto_accept = null;
    renderApp('/settings', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('heading', { name: 'Welcome to Upstairs' })).toBeInTheDocument();
    expect(screen.queryByRole('navigation', { name: 'breadcrumb' })).not.toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Submit' })).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Match request' })).toBeInTheDocument();
    expect(screen.getByRole('radio', { name: /Instant/ })).not.toBeChecked();
    expect(screen.getByRole('radio', { name: /Accept with delay/ })).toBeInTheDocument();
    expect(screen.getByRole('radio', { name: /Reject with delay/ })).toBeInTheDocument();
    expect(screen.getAllByText(/15 seconds/)).toHaveLength(2);
  });

  it('requires a choice, marks every card and revalidates on change', async () => {
    db.user().auto_accept = null;
    const { user } = renderApp('/settings', { signedInAs: 'trader@acme.test' });
    await user.click(await screen.findByRole('button', { name: 'Submit' }));
    expect(await screen.findByText('Required field. Please select one')).toBeInTheDocument();
    for (const o of OPTIONS) expect(screen.getByTestId(`option-${o}`)).toHaveAttribute('data-error', 'true');
    await user.click(screen.getByRole('radio', { name: /Reject with delay/ }));
    await waitFor(() => expect(screen.queryByText('Required field. Please select one')).not.toBeInTheDocument());
    for (const o of OPTIONS) expect(screen.getByTestId(`option-${o}`)).toHaveAttribute('data-error', 'false');
    expect(db.user().auto_accept).toBeNull();
  });

  it('saves, confirms and goes to the dashboard', async () => {
    db.user().auto_accept = null;
    const { router, user } = renderApp('/settings', { signedInAs: 'trader@acme.test' });
    await user.click(await screen.findByRole('radio', { name: /Accept with delay/ }));
    await user.click(screen.getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/dashboard'));
    expect(await screen.findByText('Your preferences have been set successfully')).toBeInTheDocument();
    expect(db.user().auto_accept).toBe('ACCEPT_WITH_DELAY');
  });

  it('can be completed with the keyboard alone', async () => {
    db.user().auto_accept = null;
    const { router, user } = renderApp('/settings', { signedInAs: 'trader@acme.test' });
    await screen.findByRole('button', { name: 'Submit' });
    act(() => screen.getByRole('radio', { name: /Instant/ }).focus());
    await user.keyboard(' ');
    await user.keyboard('{ArrowRight}');
    expect(screen.getByRole('radio', { name: /Accept with delay/ })).toBeChecked();
    act(() => screen.getByRole('button', { name: 'Submit' }).focus());
    await user.keyboard('{Enter}');
    await waitFor(() => expect(router.state.location.pathname).toBe('/dashboard'));
    expect(db.user().auto_accept).toBe('ACCEPT_WITH_DELAY');
  });
});

describe('settings', () => {
  it("is titled 'Settings' with the breadcrumb, the current choice and 'Save changes'", async () => {
    db.user().auto_accept = 'REJECT_WITH_DELAY';
    renderApp('/settings', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('heading', { name: 'Settings' })).toBeInTheDocument();
    const crumbs = screen.getByRole('navigation', { name: 'breadcrumb' });
    expect(crumbs).toHaveTextContent('Dashboard');
    expect(crumbs).toHaveTextContent('Settings');
    expect(screen.getByRole('radio', { name: /Reject with delay/ })).toBeChecked();
    expect(screen.getByRole('button', { name: 'Save changes' })).toBeInTheDocument();
  });

  it('shows the help line with phone and e-mail', async () => {
    renderApp('/settings', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('link', { name: SUPPORT_PHONE })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: SUPPORT_EMAIL })).toHaveAttribute('href', `mailto:${SUPPORT_EMAIL}`);
  });

  it('saves a change, confirms it and stays', async () => {
    const { router, user } = renderApp('/settings', { signedInAs: 'trader@acme.test' });
    await user.click(await screen.findByRole('radio', { name: /Reject with delay/ }));
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByText('Your preferences have been updated successfully')).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/settings');
    expect(db.user().auto_accept).toBe('REJECT_WITH_DELAY');
  });

  it('shows nothing and stays when a save fails', async () => {
    server.use(http.patch('*/api/users/:id', () => new HttpResponse(null, { status: 500 })));
    const { router, user } = renderApp('/settings', { signedInAs: 'trader@acme.test' });
    await user.click(await screen.findByRole('radio', { name: /Reject with delay/ }));
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(screen.getByRole('button', { name: 'Save changes' })).toBeEnabled());
    expect(screen.queryByText('Your preferences have been updated successfully')).not.toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/settings');
  });
});

describe('settings, cancel on disconnect (issue 29)', () => {
  it('is off unless chosen, saved as it is switched, and said with the venue’s grace period', async () => {
    const { user } = renderApp('/settings', { signedInAs: 'trader@acme.test' });
    const section = await screen.findByRole('region', { name: 'Cancel on disconnect' });
    expect(section).toHaveTextContent('lost its connection for 10 seconds');
    const toggle = screen.getByRole('switch', { name: 'Cancel my working orders when I disconnect' });
    expect(toggle).not.toBeChecked();
    await user.click(toggle);
    expect(await screen.findByText('Your working orders will be cancelled if you disconnect.')).toBeInTheDocument();
    expect(toggle).toBeChecked();
    expect(db.user().cancel_on_disconnect).toBe(true);
    expect(db.userPatches.at(-1)?.body).toEqual({ cancel_on_disconnect: true });
    // Keyboard: space switches it back.
    act(() => toggle.focus());
    await user.keyboard(' ');
    await waitFor(() => expect(db.user().cancel_on_disconnect).toBe(false));
    expect(toggle).not.toBeChecked();
  });

  it('says why a save failed and shows the stored choice', async () => {
    server.use(http.patch('*/api/users/:id', () => HttpResponse.json({ status: 409, title: 'Conflict', detail: 'Your account changed meanwhile. Please reload.' }, { status: 409 })));
    const { user } = renderApp('/settings', { signedInAs: 'trader@acme.test' });
    const toggle = await screen.findByRole('switch', { name: 'Cancel my working orders when I disconnect' });
    await user.click(toggle);
    expect(await screen.findAllByText(/Your account changed meanwhile/)).toHaveLength(1);
    expect(toggle).not.toBeChecked();
  });
});
