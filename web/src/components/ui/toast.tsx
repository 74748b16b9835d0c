import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import Alert, { type AlertColor } from '@mui/material/Alert';
import Snackbar from '@mui/material/Snackbar';
import { TOAST_MS } from '@/config/constants';

type Toast = { message: string; type?: AlertColor; keepOpen?: boolean };
type ToastContextValue = { showToast: (toast: Toast) => void };

const ToastContext = createContext<ToastContextValue>({ showToast: () => {} });

/**
 * Success and info toasts (4 s by default, or kept open) at the bottom left, away from
 * the page's primary action at the top right and from the error snackbar at the bottom centre.
 */
export function ToastProvider({ children }: { children: ReactNode }) {
  const [toast, setToast] = useState<(Toast & { id: number }) | null>(null);
  const showToast = useCallback((t: Toast) => setToast({ ...t, id: Date.now() }), []);
  const value = useMemo(() => ({ showToast }), [showToast]);
  const close = () => setToast(null);
  return (
    <ToastContext.Provider value={value}>
      {children}
      <Snackbar
        key={toast?.id}
        open={toast !== null}
        autoHideDuration={toast?.keepOpen ? null : TOAST_MS}
        onClose={(_, reason) => reason !== 'clickaway' && close()}
        anchorOrigin={{ vertical: 'bottom', horizontal: 'left' }}
        transitionDuration={300}
      >
        <Alert severity={toast?.type ?? 'success'} variant="filled" onClose={close} sx={{ width: '100%' }} data-testid="toast">
          {toast?.message}
        </Alert>
      </Snackbar>
    </ToastContext.Provider>
  );
}

export function useToast() {
  return useContext(ToastContext);
}
