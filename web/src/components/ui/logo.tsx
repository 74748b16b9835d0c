import Box from '@mui/material/Box';
import Typography from '@mui/material/Typography';
import { useAppConfig } from '@/lib/api/get-config';

/** The product mark and name. */
export function Logo({ inverse = false }: { inverse?: boolean }) {
  const { product_name } = useAppConfig();
  return (
    <Box sx={{ display: 'inline-flex', alignItems: 'center', gap: 1 }}>
      <Box component="img" src="/favicon.svg" alt="" sx={{ width: 28, height: 28 }} />
      <Typography
        component="span"
        sx={{ fontWeight: 700, fontSize: '1.25rem', letterSpacing: 0.2, color: inverse ? 'common.white' : 'primary.main' }}
      >
        {product_name}
      </Typography>
    </Box>
  );
}
