import MenuItem from '@mui/material/MenuItem';
import TextField from '@mui/material/TextField';
import { useCompanyOptions } from '@/lib/api/get-company-options';

/** An admin list's company filter: every company on the venue, or all of them (''). */
export function CompanyFilter({ value, onChange, width = 200 }: { value: string; onChange: (companyId: string) => void; width?: number }) {
  const companies = useCompanyOptions();
  return (
    <TextField
      select
      label="Company"
      value={value}
      onChange={(e) => onChange(e.target.value)}
      size="small"
      sx={{ width }}
      slotProps={{ inputLabel: { shrink: true }, select: { displayEmpty: true } }}
    >
      <MenuItem value="">All companies</MenuItem>
      {(companies.data ?? []).map((c) => (
        <MenuItem key={c.company_id} value={c.company_id}>
          {c.name}
        </MenuItem>
      ))}
    </TextField>
  );
}
