import { useEffect, useState } from 'react';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import IconButton from '@mui/material/IconButton';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import CelebrationOutlined from '@mui/icons-material/CelebrationOutlined';
import Close from '@mui/icons-material/Close';
import { useSecondsLeft } from '@/lib/use-seconds-left';
import type { Notification } from '../api/get-notifications';
import { useAnswerMatchRequest, useMatchRequest } from '@/lib/api/match-requests';
import { automaticAnswer, MatchSummary, RejectDialog, TimeToAction, useAnswerDeadline } from './match-request-parts';

type Props = {
  notification: Notification;
  /** Its title and line of text (spec section 4). */
  title: string;
  text: string;
  onReview: () => void;
  onClose: () => void;
};

/**
 * One notification, opened by itself when it arrives unread (spec section 4), under the top
 * bar. A pending request received shows its terms, the 'Time to action' countdown and
 * Reject / Review, and closes when the countdown ends; an accepted one is celebrated.
 */
export function NotificationView({ notification: n, title, text, onReview, onClose }: Props) {
  // An RFQ's notice only tells; its quotes are answered on the dashboard.
  const pending = n.status === 'PENDING' && n.role === 'RESPONDER' && !n.rfq_id;
  // A correction is done (ACCEPTED), but nothing to celebrate.
  const accepted = n.status === 'ACCEPTED' && n.type !== 'ORDER_PRICE_CORRECTED';
  return (
    <Paper
      elevation={8}
      role="dialog"
      aria-label={title}
      data-testid="notification-view"
      sx={{ position: 'fixed', top: 72, right: 16, width: { xs: 'calc(100% - 32px)', sm: 420 }, zIndex: (t) => t.zIndex.snackbar, p: 2.5 }}
    >
      <Stack direction="row" sx={{ alignItems: 'flex-start', mb: 1.5 }}>
        <Box sx={{ flexGrow: 1 }}>
          {accepted && <CelebrationOutlined color="success" aria-hidden sx={{ fontSize: 36, mb: 0.5 }} />}
          <Typography variant="h3" component="h2">
            {title}
          </Typography>
        </Box>
        <IconButton aria-label="Close" size="small" onClick={onClose}>
          <Close fontSize="small" />
        </IconButton>
      </Stack>
      {pending ? (
        <Pending n={n} onReview={onReview} onClose={onClose} />
      ) : n.order_match_request_id ? (
        <Told id={n.order_match_request_id} text={text} />
      ) : (
        <Typography variant="body2" color="text.secondary">
          {text}
        </Typography>
      )}
    </Paper>
  );
}

/** What a match request's notice tells: its terms, then what happened, naming a preference that answered (issue 28.5). */
function Told({ id, text }: { id: string; text: string }) {
  const request = useMatchRequest(id);
  const automatic = ['ACCEPTED', 'REJECTED'].includes(request.data?.state ?? '') ? automaticAnswer(request.data) : null;
  return (
    <>
      <MatchSummary request={request.data} />
      <Typography variant="body2" color="text.secondary" sx={{ mt: 1.5 }}>
        {automatic ?? text}
      </Typography>
    </>
  );
}

function Pending({ n, onReview, onClose }: { n: Notification; onReview: () => void; onClose: () => void }) {
  const id = n.order_match_request_id ?? '';
  const request = useMatchRequest(n.order_match_request_id ?? null);
  const [rejecting, setRejecting] = useState(false);
  // Closed once answered, even if the rejection's own frame (the notice, now REJECTED)
  // replaced this pending view before the answer came.
  const answer = useAnswerMatchRequest({
    onSettled: () => {
      setRejecting(false);
      onClose();
    },
  });
  // The preference's moment, when the responder chose one; else, or once the preference
  // could not answer, the request's time-out.
  const deadline = useAnswerDeadline(request.data, n.expired_at);
  const seconds = useSecondsLeft(deadline.at);
  // Spec section 4: when the countdown ends the open notification closes; when it counted
  // down to the preference's answer, it stays to say what the preference did.
  const byPreference = deadline.byPreference;
  useEffect(() => {
    if (seconds === 0 && !byPreference) onClose();
  }, [seconds, byPreference, onClose]);
  return (
    <Stack spacing={2}>
      <MatchSummary request={request.data} />
      <TimeToAction seconds={seconds} label={deadline.label} />
      <Stack direction="row" spacing={1.5}>
        <Button fullWidth variant="outlined" color="error" disabled={seconds === 0} onClick={() => setRejecting(true)}>
          Reject
        </Button>
        <Button fullWidth variant="contained" disabled={seconds === 0} onClick={onReview}>
          Review
        </Button>
      </Stack>
      <RejectDialog
        open={rejecting}
        pending={answer.isPending}
        onConfirm={() => answer.mutate({ id, state: 'REJECTED' })}
        onClose={() => setRejecting(false)}
      />
    </Stack>
  );
}
