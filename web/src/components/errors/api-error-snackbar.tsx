import { useEffect, useRef, useState } from 'react';
import Alert from '@mui/material/Alert';
import Snackbar from '@mui/material/Snackbar';
import { ERROR_SNACKBAR_MS } from '@/config/constants';
import { subscribeErrorDetails } from '@/lib/api-errors';
import { useToken } from '@/lib/auth-token';

/** The red snackbar at the bottom centre showing an API error's detail, only while signed in. */
export function ApiErrorSnackbar() {
  const token = useToken();
  const [message, setMessage] = useState<{ text: string; id: number } | null>(null);

  // Each error its own Snackbar and full time: a count, not the clock (see the toast).
  const shown = useRef(0);
  useEffect(() => subscribeErrorDetails((text) => setMessage({ text, id: ++shown.current })), []);

  const open = message !== null && token !== null;
  return (
    <Snackbar
      key={message?.id}
      open={open}
      autoHideDuration={ERROR_SNACKBAR_MS}
      onClose={(_, reason) => reason !== 'clickaway' && setMessage(null)}
      anchorOrigin={{ vertical: 'bottom', horizontal: 'center' }}
      // Above a drawer's action bar (about 85 px), so a refusal never covers its Cancel (issue 28.14).
      sx={{ bottom: { xs: 104, sm: 104 } }}
    >
      <Alert severity="error" variant="filled" onClose={() => setMessage(null)} data-testid="api-error-snackbar">
        {message?.text}
      </Alert>
    </Snackbar>
  );
}
