import type { ReactNode } from 'react';
import Drawer from '@mui/material/Drawer';
import IconButton from '@mui/material/IconButton';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import Close from '@mui/icons-material/Close';
import { DRAWER_WIDTH } from '@/config/constants';

/** A right-hand drawer of the specs' width (486 px; full width on phones). */
export function SideDrawer({ open, onClose, children }: { open: boolean; onClose: () => void; children: ReactNode }) {
  return (
    <Drawer anchor="right" open={open} onClose={onClose} slotProps={{ paper: { sx: { width: { xs: '100%', sm: DRAWER_WIDTH } } } }}>
      {children}
    </Drawer>
  );
}

/** The drawer's title bar with its close button. */
export function DrawerHeader({ title, onClose }: { title: string; onClose: () => void }) {
  return (
    <Stack direction="row" sx={{ alignItems: 'center', px: 3, py: 2, borderBottom: 1, borderColor: 'divider' }}>
      <Typography variant="h2" component="h2" sx={{ flexGrow: 1, fontSize: '1.25rem' }}>
        {title}
      </Typography>
      <IconButton aria-label="Close" onClick={onClose}>
        <Close />
      </IconButton>
    </Stack>
  );
}
