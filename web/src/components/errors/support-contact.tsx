import Link from '@mui/material/Link';
import Typography from '@mui/material/Typography';
import { useAppConfig } from '@/lib/api/get-config';

/** The support phone and e-mail from GET /api/config. */
export function SupportContact({ prefix = 'Contact us' }: { prefix?: string }) {
  const { support_email, support_phone } = useAppConfig();
  return (
    <Typography variant="body2" color="text.secondary">
      {prefix}: <Link href={`tel:${support_phone.replace(/\s+/g, '')}`}>{support_phone}</Link> ·{' '}
      <Link href={`mailto:${support_email}`}>{support_email}</Link>
    </Typography>
  );
}
