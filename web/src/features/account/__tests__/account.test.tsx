import { waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { renderApp, screen } from '@/testing/test-utils';

describe('account information', () => {
  it('shows the user read-only and returns to the dashboard', async () => {
    const { router, user } = renderApp('/user/account', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('heading', { name: 'Account information' })).toBeInTheDocument();
    expect(screen.getByText('Tess Trader')).toBeInTheDocument();
    expect(screen.getByText('Acme Capital')).toBeInTheDocument();
    expect(screen.getByText('Instant')).toBeInTheDocument();
    expect(screen.getByText('92%')).toBeInTheDocument();
    expect(screen.getByText(/^04\/03\/2026 \d\d:05$/)).toBeInTheDocument();
    expect(screen.queryByRole('textbox')).not.toBeInTheDocument();
    await user.click(screen.getByRole('link', { name: 'Return to Dashboard' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/dashboard'));
  });
});
