import type { ReactElement } from 'react';
import Box from '@mui/material/Box';
import Link from '@mui/material/Link';
import Tooltip from '@mui/material/Tooltip';
import Typography from '@mui/material/Typography';
import { useUpdateUser } from '@/lib/api/update-user';
import { useCurrentUser, type User } from '@/lib/api/get-me';

/** Spec section 9: the onboarding steps, stored read per user in ui_metadata under TOOLTIPS. */
export const TOOLTIP_STEPS = {
  FIRST_PARENT_ORDER: 'Start here: add a parent order with the instrument, side and total quantity you want to trade.',
  INTERACT_WITH_ORDERBOOK:
    'This is the anonymous block book. Click a price inside the electronic bid and offer to work your order there.',
  LEAVING_LIQUIDITY_IN_ORDERBOOK:
    'Your order rests anonymously in the book at this price until a counterparty takes it or the venue closes.',
  TAKING_LIQUIDITY_IN_ORDERBOOK: 'Click a price with quantity on the other side to take that liquidity.',
  FIRST_ICEBERG_ORDER: 'An iceberg order shows only the minimum block size to the market; the rest stays hidden.',
} as const;

export type TooltipStep = keyof typeof TOOLTIP_STEPS;
const KEY = 'TOOLTIPS';

type Entry = { key: string; read: boolean };

function entries(user: User): Entry[] {
  const value = user.ui_metadata.find((m) => m.key === KEY)?.value;
  return Array.isArray(value) ? value.filter((e): e is Entry => typeof e?.key === 'string') : [];
}

export function isTipRead(user: User, step: TooltipStep) {
  return entries(user).some((e) => e.key === step && e.read);
}

/** The first unread step of `steps`, or null when all are read. */
export function useNextTip(steps: TooltipStep[]): TooltipStep | null {
  const user = useCurrentUser();
  return steps.find((s) => !isTipRead(user, s)) ?? null;
}

type Props = {
  step: TooltipStep;
  show: boolean;
  placement?: 'top' | 'bottom' | 'bottom-start' | 'left' | 'right';
  fullWidth?: boolean;
  /** Tips inside a drawer sit above it; the dashboard's stay below drawers, menus and dialogs. */
  inDrawer?: boolean;
  children: ReactElement;
};

/** An onboarding tooltip with 'Got it'; shown while `show` and not yet read. */
export function OnboardingTip({ step, show, placement = 'bottom', fullWidth = false, inDrawer = false, children }: Props) {
  const user = useCurrentUser();
  const update = useUpdateUser();
  const open = show && !isTipRead(user, step);
  const gotIt = () => {
    const rest = entries(user).filter((e) => e.key !== step);
    update.mutate({
      userId: user.user_id,
      body: { ui_metadata: [{ key: KEY, value: [...rest, { key: step, read: true }] }] },
    });
  };
  return (
    <Tooltip
      open={open}
      arrow
      placement={placement}
      disableFocusListener
      disableHoverListener
      disableTouchListener
      slotProps={{ popper: { sx: { zIndex: (t) => (inDrawer ? t.zIndex.tooltip : t.zIndex.appBar) } }, tooltip: { sx: { maxWidth: 280, p: 1.5 } } }}
      title={
        <Box role="dialog" aria-label="Tip" data-testid={`tip-${step}`}>
          <Typography variant="body2">{TOOLTIP_STEPS[step]}</Typography>
          <Link component="button" type="button" color="inherit" onClick={gotIt} sx={{ mt: 1, fontWeight: 600 }} disabled={update.isPending}>
            Got it
          </Link>
        </Box>
      }
    >
      {/* A wrapper, so a disabled button inside still anchors the tooltip. */}
      <Box component="span" sx={{ display: fullWidth ? 'block' : 'inline-block', width: fullWidth ? '100%' : undefined }}>
        {children}
      </Box>
    </Tooltip>
  );
}
