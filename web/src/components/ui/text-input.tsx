import { useId, type ReactNode, type Ref } from 'react';
import FormControl from '@mui/material/FormControl';
import FormHelperText from '@mui/material/FormHelperText';
import InputLabel from '@mui/material/InputLabel';
import OutlinedInput, { type OutlinedInputProps } from '@mui/material/OutlinedInput';

export type TextInputProps = Omit<OutlinedInputProps, 'label'> & {
  label: string;
  helperText?: ReactNode;
  ref?: Ref<HTMLInputElement>;
};

/**
 * A labelled outlined input. Unlike MUI's TextField it does not pull in Select
 * (and with it Menu, Popover and Modal), which keeps the sign-in chunk small.
 */
export function TextInput({ label, helperText, error, id, ref, fullWidth = true, ...props }: TextInputProps) {
  const generated = useId();
  const inputId = id ?? generated;
  const helperId = helperText ? `${inputId}-helper` : undefined;
  return (
    <FormControl variant="outlined" error={error} fullWidth={fullWidth}>
      <InputLabel htmlFor={inputId}>{label}</InputLabel>
      <OutlinedInput
        {...props}
        id={inputId}
        label={label}
        inputRef={ref}
        error={error}
        inputProps={{ ...props.inputProps, 'aria-describedby': helperId }}
      />
      {helperText && <FormHelperText id={helperId}>{helperText}</FormHelperText>}
    </FormControl>
  );
}
