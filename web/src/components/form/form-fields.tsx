import { Controller, type Control, type FieldValues, type Path } from 'react-hook-form';
import FormControlLabel from '@mui/material/FormControlLabel';
import Switch from '@mui/material/Switch';
import TextField, { type TextFieldProps } from '@mui/material/TextField';

type FieldProps<T extends FieldValues> = {
  control: Control<T>;
  name: Path<T>;
  /** Fields whose rules read this one: checked again when it changes. */
  deps?: Path<T>[];
};

/**
 * A MUI TextField (plain, select or multiple select) bound to a react-hook-form field:
 * the zod message shows once the field is changed or left, else the server's message for it.
 */
export function FormTextField<T extends FieldValues>({
  control,
  name,
  deps,
  serverError,
  helperText,
  onValueChange,
  ...props
}: FieldProps<T> & Omit<TextFieldProps, 'name' | 'value' | 'onChange' | 'onBlur' | 'error'> & {
  serverError?: string;
  /** Called after the field changes (e.g. to move a dependent field). */
  onValueChange?: (value: unknown) => void;
}) {
  return (
    <Controller
      control={control}
      name={name}
      rules={{ deps }}
      render={({ field, fieldState }) => {
        const message = fieldState.error?.message ?? serverError;
        return (
          <TextField
            {...props}
            name={field.name}
            value={field.value}
            inputRef={field.ref}
            onBlur={field.onBlur}
            onChange={(e) => {
              field.onChange(e);
              onValueChange?.(e.target.value);
            }}
            error={Boolean(message)}
            helperText={message ?? helperText}
            fullWidth
          />
        );
      }}
    />
  );
}

/** A labelled switch bound to a boolean react-hook-form field. */
export function FormSwitch<T extends FieldValues>({ control, name, deps, label }: FieldProps<T> & { label: string }) {
  return (
    <Controller
      control={control}
      name={name}
      rules={{ deps }}
      render={({ field }) => (
        <FormControlLabel
          control={<Switch name={field.name} checked={Boolean(field.value)} onBlur={field.onBlur} onChange={(e) => field.onChange(e.target.checked)} />}
          label={label}
        />
      )}
    />
  );
}
