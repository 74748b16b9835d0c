import { createContext, useCallback, useContext, useMemo, useRef, useState, type ReactNode } from 'react';
import Alert, { type AlertColor } from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import Button from '@mui/material/Button';
import IconButton from '@mui/material/IconButton';
import Snackbar from '@mui/material/Snackbar';
import Close from '@mui/icons-material/Close';
import { TOAST_MS } from '@/config/constants';

/** Spec section 3: a toast has a message, an optional description and action, and may stay open. */
type Toast = {
  message: string;
  description?: string;
  type?: AlertColor;
  keepOpen?: boolean;
  /** How long it shows, when not the default 4 s (spec section 9: the RFQ sent toast, 2 s). */
  durationMs?: number;
  /** A button in the toast; clicking it runs `onClick` and closes the toast. */
  action?: { label: string; onClick: () => void };
};
type ToastContextValue = { showToast: (toast: Toast) => void };

const ToastContext = createContext<ToastContextValue>({ showToast: () => {} });

/**
 * Success and info toasts (4 s by default, or kept open) at the bottom left, away from
 * the page's primary action at the top right and from the error snackbar at the bottom centre.
 */
export function ToastProvider({ children }: { children: ReactNode }) {
  const [toast, setToast] = useState<(Toast & { id: number }) | null>(null);
  // Each toast its own Snackbar, and so its own full time: a count, not the clock, which may
  // read the same for two toasts (one millisecond, or a pinned clock).
  const shown = useRef(0);
  const showToast = useCallback((t: Toast) => setToast({ ...t, id: ++shown.current }), []);
  const value = useMemo(() => ({ showToast }), [showToast]);
  const close = () => setToast(null);
  const action = toast?.action;
  return (
    <ToastContext.Provider value={value}>
      {children}
      <Snackbar
        key={toast?.id}
        open={toast !== null}
        autoHideDuration={toast?.keepOpen ? null : (toast?.durationMs ?? TOAST_MS)}
        onClose={(_, reason) => reason !== 'clickaway' && close()}
        anchorOrigin={{ vertical: 'bottom', horizontal: 'left' }}
        transitionDuration={300}
      >
        <Alert
          severity={toast?.type ?? 'success'}
          variant="filled"
          onClose={close}
          sx={{ width: '100%', alignItems: 'center' }}
          data-testid="toast"
          action={
            action && (
              <>
                <Button
                  color="inherit"
                  size="small"
                  variant="outlined"
                  onClick={() => {
                    close();
                    action.onClick();
                  }}
                >
                  {action.label}
                </Button>
                <IconButton aria-label="Close" color="inherit" size="small" onClick={close} sx={{ ml: 0.5 }}>
                  <Close fontSize="small" />
                </IconButton>
              </>
            )
          }
        >
          {toast?.description ? <AlertTitle sx={{ mb: 0 }}>{toast.message}</AlertTitle> : toast?.message}
          {toast?.description}
        </Alert>
      </Snackbar>
    </ToastContext.Provider>
  );
}

export function useToast() {
  return useContext(ToastContext);
}
