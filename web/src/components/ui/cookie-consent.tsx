import { useState } from 'react';
import Button from '@mui/material/Button';
import FormControlLabel from '@mui/material/FormControlLabel';
import Link from '@mui/material/Link';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Switch from '@mui/material/Switch';
import Typography from '@mui/material/Typography';
import { COOKIE_CONSENT_KEY } from '@/config/constants';
import { paths } from '@/config/paths';

export type CookieConsent = { essential: true; functional: boolean; performance: boolean };

export function readCookieConsent(): CookieConsent | null {
  try {
    const raw = localStorage.getItem(COOKIE_CONSENT_KEY);
    return raw ? (JSON.parse(raw) as CookieConsent) : null;
  } catch {
    return null;
  }
}

/** Cookie consent banner with Manage / Accept; the choice is kept in local storage. */
export function CookieConsentBanner() {
  const [consent, setConsent] = useState<CookieConsent | null>(readCookieConsent);
  const [managing, setManaging] = useState(false);
  const [functional, setFunctional] = useState(false);
  const [performance, setPerformance] = useState(false);

  if (consent) return null;

  const save = (c: CookieConsent) => {
    localStorage.setItem(COOKIE_CONSENT_KEY, JSON.stringify(c));
    setConsent(c);
  };
  const acceptAll = () => save({ essential: true, functional: true, performance: true });

  return (
    <Paper
      role="region"
      aria-label="Cookie consent"
      elevation={8}
      sx={{ position: 'fixed', left: 24, bottom: 24, width: 'min(440px, calc(100vw - 48px))', p: 3, zIndex: 1400, borderRadius: 3 }}
    >
      <Stack spacing={2}>
        <Typography variant="h3" component="h2">
          We value your privacy
        </Typography>
        <Typography variant="body2" color="text.secondary">
          We use cookies to keep you signed in and to improve the platform. Read our{' '}
          <Link href={paths.cookiePolicy} target="_blank" rel="noopener noreferrer">
            cookie policy
          </Link>
          .
        </Typography>
        {managing ? (
          <>
            <Stack>
              <FormControlLabel control={<Switch checked disabled />} label="Essential (always on)" />
              <FormControlLabel
                control={<Switch checked={functional} onChange={(e) => setFunctional(e.target.checked)} />}
                label="Functional"
              />
              <FormControlLabel
                control={<Switch checked={performance} onChange={(e) => setPerformance(e.target.checked)} />}
                label="Performance"
              />
            </Stack>
            <Stack direction="row" spacing={1.5} sx={{ justifyContent: 'flex-end' }}>
              <Button variant="outlined" onClick={() => save({ essential: true, functional, performance })}>
                Save Preferences
              </Button>
              <Button variant="contained" onClick={acceptAll}>
                Accept All Cookies
              </Button>
            </Stack>
          </>
        ) : (
          <Stack direction="row" spacing={1.5} sx={{ justifyContent: 'flex-end' }}>
            <Button variant="outlined" onClick={() => setManaging(true)}>
              Manage
            </Button>
            <Button variant="contained" onClick={acceptAll}>
              Accept
            </Button>
          </Stack>
        )}
      </Stack>
    </Paper>
  );
}
