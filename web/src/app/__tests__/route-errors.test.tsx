import { describe, expect, it, vi } from 'vitest';
import { SUPPORT_EMAIL, SUPPORT_PHONE } from '@/testing/mocks/db';
import { renderApp, screen } from '@/testing/test-utils';

// A signed-in route whose module fails while rendering: the error bubbles from the
// protected layout to the root route's error element in routes.tsx.
vi.mock('@/app/routes/account', () => ({
  default: function BrokenAccountRoute(): never {
    throw new Error('render failure');
  },
}));

describe('route errors in the app', () => {
  it('show the 404 page with the support phone, e-mail and a link home', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    renderApp('/user/account', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('heading', { name: 'Oops! Page Not Found (404)' })).toBeInTheDocument();
    expect(await screen.findByRole('link', { name: SUPPORT_PHONE })).toHaveAttribute('href', 'tel:+442079460000');
    expect(screen.getByRole('link', { name: SUPPORT_EMAIL })).toHaveAttribute('href', `mailto:${SUPPORT_EMAIL}`);
    expect(screen.getByRole('link', { name: 'Go to the homepage' })).toHaveAttribute('href', '/');
    expect(screen.queryByRole('heading', { name: 'Oops! Something went wrong' })).not.toBeInTheDocument();
  });
});
