import { render } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { AppProvider, createQueryClient } from '@/app/provider';
import { db } from '@/testing/mocks/db';
import { renderApp, screen } from '@/testing/test-utils';
import { EmptyDashboard } from '../components/empty-dashboard';

describe('dashboard without orders', () => {
  it("shows Getting started and 'No active orders yet'", async () => {
    renderApp('/dashboard', { signedInAs: 'trader@acme.test' });
    expect(await screen.findByRole('heading', { name: 'Getting started' })).toBeInTheDocument();
    expect(screen.getByText(/Add Parent Order/)).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'No active orders yet' })).toBeInTheDocument();
  });

  it('says the platform is closed outside operating hours', async () => {
    db.config.always_open = false;
    const client = createQueryClient();
    render(
      <AppProvider queryClient={client}>
        <EmptyDashboard now={new Date('2026-11-22T12:00:00Z')} />
      </AppProvider>,
    );
    expect(await screen.findByRole('heading', { name: 'Upstairs is closed' })).toBeInTheDocument();
    expect(screen.getByText('Operating hours are 9:00 AM to 5:00 PM (UK time, Monday to Friday only).')).toBeInTheDocument();
  });

  it('shows no closed panel during operating hours', async () => {
    db.config.always_open = false;
    render(
      <AppProvider queryClient={createQueryClient()}>
        <EmptyDashboard now={new Date('2026-11-23T10:00:00Z')} />
      </AppProvider>,
    );
    expect(await screen.findByRole('heading', { name: 'Getting started' })).toBeInTheDocument();
    expect(screen.queryByText(/is closed/)).not.toBeInTheDocument();
  });
});
