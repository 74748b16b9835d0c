import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { describe, expect, it, vi } from 'vitest';
import { AppProvider, createQueryClient } from '@/app/provider';
import { ErrorCard } from '@/components/errors/error-card';
import { RouteError } from '@/components/errors/route-error';
import { SomethingWentWrongPage } from '@/components/errors/something-went-wrong-page';
import { ApiError } from '@/lib/api-errors';
import { SUPPORT_EMAIL, SUPPORT_PHONE } from '@/testing/mocks/db';

describe('generic error card', () => {
  it('shows the status and data with Retry', async () => {
    const onRetry = vi.fn();
    render(<ErrorCard error={new ApiError(503, { detail: 'down' })} onRetry={onRetry} />);
    expect(screen.getByRole('heading', { name: 'Oops! There was an error.' })).toBeInTheDocument();
    expect(screen.getByText('503: {"detail":"down"}')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Retry' }));
    expect(onRetry).toHaveBeenCalledOnce();
  });

  it('shows the unknown-error text as the spec spells it', () => {
    render(<ErrorCard error={new Error('x')} onRetry={() => {}} />);
    expect(screen.getByText('An unknown error has occured.')).toBeInTheDocument();
  });
});

describe('route errors', () => {
  function Boom(): never {
    throw new Error('render failure');
  }

  it("shows the 404 page 'Oops! Page Not Found (404)' with the support phone, e-mail and a link home", async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const router = createMemoryRouter([{ path: '/', element: <Boom />, errorElement: <RouteError /> }]);
    render(
      <AppProvider queryClient={createQueryClient()}>
        <RouterProvider router={router} />
      </AppProvider>,
    );
    expect(await screen.findByRole('heading', { name: 'Oops! Page Not Found (404)' })).toBeInTheDocument();
    expect(await screen.findByRole('link', { name: SUPPORT_PHONE })).toHaveAttribute('href', 'tel:+442079460000');
    expect(screen.getByRole('link', { name: SUPPORT_EMAIL })).toHaveAttribute('href', `mailto:${SUPPORT_EMAIL}`);
    expect(screen.getByRole('link', { name: 'Go to the homepage' })).toHaveAttribute('href', '/');
  });

  it('shows the same 404 page for a failed loader', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const router = createMemoryRouter([
      {
        path: '/',
        loader: () => {
          throw new Error('loader failure');
        },
        element: <p>never shown</p>,
        hydrateFallbackElement: <p>loading</p>,
        errorElement: <RouteError />,
      },
    ]);
    render(
      <AppProvider queryClient={createQueryClient()}>
        <RouterProvider router={router} />
      </AppProvider>,
    );
    expect(await screen.findByRole('heading', { name: 'Oops! Page Not Found (404)' })).toBeInTheDocument();
    expect(screen.queryByText('never shown')).not.toBeInTheDocument();
  });
});

describe('general error page', () => {
  it("shows 'Oops! Something went wrong' with the contact phone and e-mail", async () => {
    render(
      <AppProvider queryClient={createQueryClient()}>
        <RouterProvider router={createMemoryRouter([{ path: '/', element: <SomethingWentWrongPage /> }])} />
      </AppProvider>,
    );
    expect(await screen.findByRole('heading', { name: 'Oops! Something went wrong' })).toBeInTheDocument();
    expect(await screen.findByRole('link', { name: SUPPORT_PHONE })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: SUPPORT_EMAIL })).toBeInTheDocument();
  });
});
