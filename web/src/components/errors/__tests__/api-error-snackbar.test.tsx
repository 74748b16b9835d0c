import { act, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ERROR_SNACKBAR_MS } from '@/config/constants';
import { publishErrorDetail } from '@/lib/api-errors';
import { endSession, setToken } from '@/lib/auth-token';
import { ApiErrorSnackbar } from '../api-error-snackbar';

describe('API error snackbar', () => {
  afterEach(() => {
    endSession();
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('an error shown while another is open stays its own full time, however the clock reads', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    vi.spyOn(Date, 'now').mockReturnValue(Date.parse('2026-12-01T10:00:00Z'));
    setToken('token', false);
    render(<ApiErrorSnackbar />);
    act(() => publishErrorDetail('First refusal.'));
    expect(screen.getByText('First refusal.')).toBeInTheDocument();
    act(() => vi.advanceTimersByTime(ERROR_SNACKBAR_MS - 1000));
    act(() => publishErrorDetail('Second refusal.'));
    act(() => vi.advanceTimersByTime(2000));
    expect(screen.getByText('Second refusal.')).toBeVisible();
    act(() => vi.advanceTimersByTime(ERROR_SNACKBAR_MS));
    expect(screen.queryByText('Second refusal.')).toBeNull();
  });
});
