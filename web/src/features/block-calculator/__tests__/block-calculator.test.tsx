import { describe, expect, it } from 'vitest';
import { db } from '@/testing/mocks/db';
import { renderApp, screen } from '@/testing/test-utils';

const ADMIN = 'ada@upstairs.test';

function asAdmin(path: string, options: { fakeTimers?: boolean } = {}) {
  db.addUser({ user_id: 'u-admin', email: ADMIN, first_name: 'Ada', last_name: 'Admin', roles: ['upstairs-admin'], company_id: 'c-upstairs', company_name: 'Upstairs' });
  return renderApp(path, { signedInAs: ADMIN, ...options });
}

describe('block calculator', () => {
  it('shows the defaults and follows the inputs, exactly', async () => {
    const { user } = asAdmin('/admin/block-calculator');
    expect(await screen.findByTestId('band')).toHaveTextContent('94.26 – 95.20');
    expect(screen.getByTestId('ticks')).toHaveTextContent('94 (95 prices)');
    expect(screen.getByTestId('notional')).toHaveTextContent('198,933.00');
    const tick = screen.getByRole('textbox', { name: 'Tick size' });
    await user.clear(tick);
    await user.type(tick, '0.25');
    expect(screen.getByTestId('band')).toHaveTextContent('94.50 – 95.00');
    expect(screen.getByTestId('ticks')).toHaveTextContent('2 (3 prices)');
    await user.clear(tick);
    expect(screen.getByText('Enter a tick size greater than 0')).toBeInTheDocument();
  });
});
