import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { server } from '@/testing/mocks/server';
import { renderApp, screen } from '@/testing/test-utils';

const trade = {
  order_id: 'o1',
  step: 'ACCEPT',
  state: 'MATCHED',
  answer: null,
  broker_name: 'Baltic',
  client_name: 'Halyard',
  trader_name: 'Hannah Hale',
  instrument_name: 'Euribor 3M Dec26-Mar27',
  direction: 'SELL',
  quantity: 1500,
  price: 94.755,
  counterparty_broker_name: 'Northgate',
  matched_at: '2026-11-24T10:00:00Z',
};

function problem(status: number, detail: string) {
  return HttpResponse.json({ type: 'about:blank', title: 'Error', status, detail }, { status, headers: { 'Content-Type': 'application/problem+json' } });
}

/** Serves the link's trade; records the PATCH bodies and answers with `answer`. */
function serve(step: 'ACCEPT' | 'FILL', opts: { get?: () => Response; patch?: () => Response } = {}) {
  const patches: unknown[] = [];
  const gets: string[] = [];
  server.use(
    http.get('*/api/orders/:id/confirmation', ({ request }) => {
      gets.push(new URL(request.url).search);
      return opts.get?.() ?? HttpResponse.json({ ...trade, step });
    }),
    http.patch('*/api/orders/:id', async ({ request }) => {
      const body = (await request.json()) as Record<string, boolean>;
      patches.push({ search: new URL(request.url).search, body });
      return opts.patch?.() ?? HttpResponse.json({ ...trade, step, answer: Object.values(body)[0], state: 'PARTIAL_BROKER_ACCEPTED' });
    }),
  );
  return { patches, gets };
}

describe('broker e-mail link pages', () => {
  it('shows the trade, changes nothing until the click, then thanks the broker', async () => {
    const { patches, gets } = serve('ACCEPT');
    const { user } = renderApp('/accept-order?order_id=o1&token=t0k&accepted=true');
    expect(await screen.findByRole('heading', { name: 'Accept this trade?' })).toBeInTheDocument();
    expect(screen.getByRole('row', { name: 'Price 94.755' })).toBeInTheDocument();
    expect(screen.getByRole('row', { name: 'Counterparty broker Northgate' })).toBeInTheDocument();
    expect(screen.getByRole('row', { name: 'Quantity 1,500' })).toBeInTheDocument();
    expect(gets).toEqual(['?token=t0k&step=ACCEPT']);
    expect(patches).toEqual([]);
    await user.click(screen.getByRole('button', { name: 'Accept trade' }));
    expect(await screen.findByRole('heading', { name: 'Thank you!' })).toBeInTheDocument();
    expect(patches).toEqual([{ search: '?token=t0k', body: { accepted: true } }]);
  });

  it('declines from the accepted=false link', async () => {
    const { patches } = serve('ACCEPT');
    const { user } = renderApp('/accept-order?order_id=o1&token=t0k&accepted=false');
    await user.click(await screen.findByRole('button', { name: 'Decline trade' }));
    expect(await screen.findByRole('heading', { name: 'Thank you!' })).toBeInTheDocument();
    expect(screen.getByText('You declined the trade. Both sides have been told.')).toBeInTheDocument();
    expect(patches).toEqual([{ search: '?token=t0k', body: { accepted: false } }]);
  });

  it("says 'Already accepted' for an answered link and for the server's detail", async () => {
    serve('ACCEPT', { get: () => HttpResponse.json({ ...trade, answer: true }) });
    renderApp('/accept-order?order_id=o1&token=t0k&accepted=true');
    expect(await screen.findByRole('heading', { name: 'Already accepted' })).toBeInTheDocument();
  });

  it("turns 'Order already accepted' into the already message", async () => {
    serve('ACCEPT', { patch: () => problem(409, 'Order already accepted') });
    const { user } = renderApp('/accept-order?order_id=o1&token=t0k&accepted=true');
    await user.click(await screen.findByRole('button', { name: 'Accept trade' }));
    expect(await screen.findByRole('heading', { name: 'Already accepted' })).toBeInTheDocument();
  });

  it("confirms the fill: 'All done!', or 'Trade already confirmed'", async () => {
    const { patches } = serve('FILL');
    const { user, unmount } = renderApp('/fill-order?order_id=o1&token=f1&filled=true');
    await user.click(await screen.findByRole('button', { name: 'Confirm fill' }));
    expect(await screen.findByRole('heading', { name: 'All done!' })).toBeInTheDocument();
    expect(patches).toEqual([{ search: '?token=f1', body: { filled: true } }]);
    unmount();
    serve('FILL', { patch: () => problem(409, 'Order already filled') });
    const second = renderApp('/fill-order?order_id=o1&token=f1&filled=false');
    await second.user.click(await screen.findByRole('button', { name: 'Report not filled' }));
    expect(await screen.findByRole('heading', { name: 'Trade already confirmed' })).toBeInTheDocument();
  });

  it('shows why when the trade was declined by the other broker', async () => {
    serve('ACCEPT', { patch: () => problem(409, 'The trade was declined by a broker.') });
    const { user } = renderApp('/accept-order?order_id=o1&token=t0k&accepted=true');
    await user.click(await screen.findByRole('button', { name: 'Accept trade' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('The trade was declined by a broker.');
    expect(screen.queryByRole('button', { name: 'Accept trade' })).not.toBeInTheDocument();
  });

  it('says a link the server refuses (400) is not valid, and whom to call', async () => {
    serve('ACCEPT', { get: () => problem(400, 'This link is not valid or has expired.') });
    renderApp('/accept-order?order_id=o1&token=bad&accepted=true');
    expect(await screen.findByRole('heading', { name: 'This link is not valid' })).toBeInTheDocument();
    expect(screen.getByText(/desk:/)).toBeInTheDocument();
    expect(screen.queryByText(/Page Not Found/)).not.toBeInTheDocument();
  });

  it('shows the server-error page for a missing parameter or a server error', async () => {
    const { gets } = serve('ACCEPT', { get: () => new HttpResponse(null, { status: 500 }) });
    const { unmount } = renderApp('/accept-order?order_id=o1&accepted=true');
    expect(await screen.findByRole('heading', { name: 'Oops! Something went wrong' })).toBeInTheDocument();
    expect(gets).toEqual([]);
    unmount();
    renderApp('/fill-order?order_id=o1&token=t&filled=true');
    expect(await screen.findByRole('heading', { name: 'Oops! Something went wrong' })).toBeInTheDocument();
  });
});
