import { act, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TOAST_MS } from '@/config/constants';
import { ToastProvider, useToast } from '../toast';

function Buttons() {
  const { showToast } = useToast();
  return (
    <>
      <button onClick={() => showToast({ message: 'First.' })}>first</button>
      <button onClick={() => showToast({ message: 'Second.' })}>second</button>
    </>
  );
}

describe('toast', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  // A pinned clock (the browser tests') or two toasts in one millisecond: the second toast
  // must not inherit the first one's time left.
  it('a toast shown while another is open stays its own full time, however the clock reads', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    vi.spyOn(Date, 'now').mockReturnValue(Date.parse('2026-12-01T10:00:00Z'));
    render(
      <ToastProvider>
        <Buttons />
      </ToastProvider>,
    );
    act(() => screen.getByRole('button', { name: 'first' }).click());
    expect(screen.getByText('First.')).toBeInTheDocument();
    act(() => vi.advanceTimersByTime(TOAST_MS - 1000));
    act(() => screen.getByRole('button', { name: 'second' }).click());
    expect(screen.getByText('Second.')).toBeInTheDocument();
    act(() => vi.advanceTimersByTime(2000));
    expect(screen.getByText('Second.')).toBeVisible();
    act(() => vi.advanceTimersByTime(TOAST_MS));
    expect(screen.queryByText('Second.')).toBeNull();
  });
});
