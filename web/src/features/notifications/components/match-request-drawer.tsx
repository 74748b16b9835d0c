import { useEffect, useState } from 'react';
import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { serverErrorText } from '@/components/form/form-drawer';
import { useToast } from '@/components/ui/toast';
import { DrawerHeader, SideDrawer } from '@/components/ui/side-drawer';
import { useSecondsLeft } from '@/lib/use-seconds-left';
import { mutateThen } from '@/lib/api/mutate-then';
import { useAnswerMatchRequest, useMatchRequest } from '@/lib/api/match-requests';
import { MatchSummary, RejectDialog, TimeToAction, useAnswerDeadline } from './match-request-parts';

type Props = {
  /** The match request to review; null when closed. */
  id: string | null;
  onClose: () => void;
  /** The responder accepted it. */
  onAccepted: () => void;
};

/**
 * The match request drawer (spec sections 2 and 4): what it trades and the 'Time to action'
 * countdown; the responder accepts or rejects (after a confirmation), the requester may
 * withdraw. Accept and reject are disabled at zero, and the drawer closes when time runs out
 * or the request is no longer pending. Past the responder's preference's moment they wait
 * for its answer; a preference that could not answer leaves them to the responder.
 */
export function MatchRequestDrawer({ id, onClose, onAccepted }: Props) {
  return (
    <SideDrawer open={id !== null} onClose={onClose}>
      {id && <Review key={id} id={id} onClose={onClose} onAccepted={onAccepted} />}
    </SideDrawer>
  );
}

function Review({ id, onClose, onAccepted }: { id: string; onClose: () => void; onAccepted: () => void }) {
  const request = useMatchRequest(id);
  const answer = useAnswerMatchRequest();
  const { showToast } = useToast();
  const [rejecting, setRejecting] = useState(false);
  const m = request.data;
  // The preference's moment; once past it by the grace with no answer, the request's time-out.
  const deadline = useAnswerDeadline(m);
  const seconds = useSecondsLeft(deadline.at);
  const pending = m?.state === 'PENDING';
  // The preference's moment passing ends nothing by itself: the server's answer does (its
  // frame), so that the outcome is shown to whoever has the drawer open; the request's
  // own time-out ends the review in any case.
  const awaitsPreference = deadline.byPreference;
  const expiry = useSecondsLeft(m?.expired_at);
  const over = (awaitsPreference ? expiry === 0 : seconds === 0) || (m !== undefined && !pending);
  // Past the preference's moment and still pending: read again every few seconds, in case
  // the answer's frame was lost with a dropped socket.
  const { refetch } = request;
  useEffect(() => {
    if (!awaitsPreference || seconds !== 0 || !pending) return;
    const timer = setInterval(() => void refetch(), 3000);
    return () => clearInterval(timer);
  }, [awaitsPreference, seconds, pending, refetch]);

  // Answered by the responder's preference while under review: closed, and the outcome
  // shown as when accepted by hand (issue 28.5).
  const byPreference = m?.answered_automatically === true && m.state === 'ACCEPTED' && m.role === 'RESPONDER';
  useEffect(() => {
    if (!over || answer.isPending) return;
    if (byPreference) onAccepted();
    onClose();
  }, [over, answer.isPending, byPreference, onAccepted, onClose]);

  const send = (state: 'ACCEPTED' | 'REJECTED' | 'CANCELLED') =>
    mutateThen(
      answer,
      { id, state },
      {
        onSuccess: () => {
          setRejecting(false);
          if (state === 'ACCEPTED') onAccepted();
          if (state === 'CANCELLED') showToast({ message: 'Match request withdrawn.' });
          onClose();
        },
      },
    );
  const responder = m?.role === 'RESPONDER';
  const disabled = !pending || seconds === 0 || answer.isPending;
  return (
    <Stack sx={{ height: '100%' }}>
      <DrawerHeader title="Match request" onClose={onClose} />
      <Stack spacing={3} sx={{ p: 3, flexGrow: 1 }}>
        {request.isError ? (
          <Alert severity="error">{serverErrorText(request.error)}</Alert>
        ) : (
          <>
            <MatchSummary request={m} />
            <TimeToAction seconds={seconds} label={deadline.label} />
            <Typography variant="body2" color="text.secondary">
              {responder
                ? 'A counterparty wants to match your working order. Accept to trade; your broker then confirms the trade.'
                : 'Your match request waits for the counterparty’s answer. You may withdraw it.'}
            </Typography>
          </>
        )}
        {answer.error && <Alert severity="error">{serverErrorText(answer.error)}</Alert>}
      </Stack>
      <Stack direction="row" spacing={2} sx={{ p: 3, borderTop: 1, borderColor: 'divider' }}>
        {responder ? (
          <>
            <Button fullWidth variant="outlined" color="error" disabled={disabled} onClick={() => setRejecting(true)}>
              Reject
            </Button>
            <Button fullWidth variant="contained" disabled={disabled} onClick={() => send('ACCEPTED')}>
              Accept
            </Button>
          </>
        ) : (
          <Button fullWidth variant="outlined" color="error" disabled={disabled || m === undefined} onClick={() => send('CANCELLED')}>
            Withdraw
          </Button>
        )}
      </Stack>
      <RejectDialog open={rejecting} pending={answer.isPending} onConfirm={() => send('REJECTED')} onClose={() => setRejecting(false)} />
    </Stack>
  );
}
