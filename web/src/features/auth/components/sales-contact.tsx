import Link from '@mui/material/Link';
import Typography from '@mui/material/Typography';
import { useAppConfig } from '@/lib/api/get-config';

/**
 * Trader spec section 1: account creation is not self-service, sales support is the only
 * route, by e-mail and by phone (both from GET /api/config), each one click away.
 */
export function SalesContact() {
  const { support_email, support_phone } = useAppConfig();
  if (!support_email && !support_phone) return null;
  return (
    <Typography variant="body2" color="text.secondary" data-testid="sales-contact" sx={{ textAlign: 'center' }}>
      Accounts are opened by our sales team:{' '}
      {support_email && (
        <Link href={`mailto:${support_email}`} aria-label={`E-mail sales support at ${support_email}`}>
          {support_email}
        </Link>
      )}
      {support_email && support_phone && ' · '}
      {support_phone && (
        <Link href={`tel:${support_phone.replace(/\s+/g, '')}`} aria-label={`Call sales support on ${support_phone}`}>
          {support_phone}
        </Link>
      )}
    </Typography>
  );
}
