import { useState } from 'react';
import Button from '@mui/material/Button';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import LinkOffOutlined from '@mui/icons-material/LinkOffOutlined';
import { EmailLinkForm } from './email-link-form';

/** 'Oops! Your link has expired' with 'Request new link' opening the e-mail form. */
export function LinkExpired({ newAccount }: { newAccount: boolean }) {
  const [requesting, setRequesting] = useState(false);
  if (requesting) {
    return newAccount ? (
      <EmailLinkForm
        newAccount
        title="Let's get you started"
        description="Enter the email address of your account and we will send you a new link to create your password."
      />
    ) : (
      <EmailLinkForm
        newAccount={false}
        title="Forgot password?"
        description="Enter the email address of your account and we will send you a link to reset your password."
      />
    );
  }
  return (
    <Stack spacing={2.5} sx={{ alignItems: 'center', textAlign: 'center' }}>
      <LinkOffOutlined color="warning" sx={{ fontSize: 48 }} />
      <Typography variant="h1">Oops! Your link has expired</Typography>
      <Typography color="text.secondary">
        For your security, links can only be used once and for a limited time. Request a new one and we will email it
        to you.
      </Typography>
      <Button variant="contained" size="large" fullWidth onClick={() => setRequesting(true)}>
        Request new link
      </Button>
    </Stack>
  );
}
