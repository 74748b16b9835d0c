import type { ReactElement, ReactNode } from 'react';
import type { FieldValues, UseFormReturn } from 'react-hook-form';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Stack from '@mui/material/Stack';
import { DrawerHeader, SideDrawer } from '@/components/ui/side-drawer';
import { ApiError } from '@/lib/api-errors';

/** The server's error data (admin spec section 7): its detail, else the status and body. */
export function serverErrorText(error: unknown): string | null {
  if (!error) return null;
  if (!(error instanceof ApiError)) return 'The request failed. Check your connection and try again.';
  if (error.detail) return error.detail;
  return `[${error.status}] ${typeof error.data === 'string' ? error.data : JSON.stringify(error.data ?? '')}`;
}

/** A field's message from the server's problem document, if it sent one. */
export function serverFieldError(error: unknown, field: string): string | undefined {
  return error instanceof ApiError ? error.fieldErrors.find((e) => e.field === field)?.message : undefined;
}

type Props<T extends FieldValues> = {
  /** The react-hook-form form (zod resolver) behind the fields. */
  form: UseFormReturn<T>;
  title: string;
  submitLabel: string;
  pending: boolean;
  error: unknown;
  onSubmit: (values: T) => void;
  onClose: () => void;
  children: ReactNode;
  /** How the server's error reads, when a screen's spec words it differently; serverErrorText by default. */
  errorText?: (error: unknown) => string | null;
  /** A Cancel button beside submit (default), or submit alone. */
  cancelButton?: boolean;
  /** Wraps the submit button, e.g. in the onboarding tip anchored on it. */
  wrapSubmit?: (button: ReactElement) => ReactNode;
};

/** A right-hand drawer holding a create or edit form; submit stays disabled while the form is invalid. */
export function FormDrawer<T extends FieldValues>({
  form,
  title,
  submitLabel,
  pending,
  error,
  onSubmit,
  onClose,
  children,
  errorText = serverErrorText,
  cancelButton = true,
  wrapSubmit = (button) => button,
}: Props<T>) {
  const message = errorText(error);
  // Esc and a click beside the drawer close it only while nothing was changed in the form:
  // a changed form closes through Cancel or its close button, never by a stray key (an
  // Esc meant for a list inside it, issue 28).
  const dirty = form.formState.isDirty;
  return (
    <SideDrawer open onClose={() => !dirty && onClose()}>
      <Box
        component="form"
        onSubmit={form.handleSubmit((values) => !pending && onSubmit(values))}
        noValidate
        aria-label={title}
        sx={{ display: 'flex', flexDirection: 'column', height: '100%' }}
      >
        <DrawerHeader title={title} onClose={onClose} />
        <Stack spacing={2.5} sx={{ p: 3, flexGrow: 1, overflowY: 'auto' }}>
          {children}
          {message && (
            <Alert severity="error" role="alert">
              {message}
            </Alert>
          )}
        </Stack>
        <Stack direction="row" spacing={2} sx={{ p: 3, borderTop: 1, borderColor: 'divider' }}>
          {cancelButton && (
            <Button onClick={onClose} fullWidth>
              Cancel
            </Button>
          )}
          {wrapSubmit(
            <Button type="submit" variant="contained" fullWidth disabled={!form.formState.isValid || pending}>
              {submitLabel}
            </Button>,
          )}
        </Stack>
      </Box>
    </SideDrawer>
  );
}
