import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import Alert, { type AlertColor } from '@mui/material/Alert';
import Snackbar from '@mui/material/Snackbar';
import { TOAST_MS } from '@/config/constants';

type Toast = { message: string; type?: AlertColor; keepOpen?: boolean };
type ToastContextValue = { showToast: (toast: Toast) => void };

const ToastContext = createContext<ToastContextValue>({ showToast: () => {} });

/** Success and info toasts (4 s by default, or kept open) at the top right. */
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
        anchorOrigin={{ vertical: 'top', horizontal: 'right' }}
        transitionDuration={300}
        // Below the 64 px top bar so the profile menu stays reachable.
        sx={{ top: { xs: 72, sm: 80 } }}
      >
        <Alert severity={toast?.type ?? 'success'} variant="filled" onClose={close} sx={{ width: '100%' }}>
          {toast?.message}
        </Alert>
      </Snackbar>
    </ToastContext.Provider>
  );
}

export function useToast() {
  return useContext(ToastContext);
}
