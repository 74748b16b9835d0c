import { useState, type ReactNode } from 'react';
import AppBar from '@mui/material/AppBar';
import Avatar from '@mui/material/Avatar';
import Divider from '@mui/material/Divider';
import IconButton from '@mui/material/IconButton';
import ListItemIcon from '@mui/material/ListItemIcon';
import Menu from '@mui/material/Menu';
import MenuItem from '@mui/material/MenuItem';
import Toolbar from '@mui/material/Toolbar';
import Typography from '@mui/material/Typography';
import Logout from '@mui/icons-material/Logout';
import MenuIcon from '@mui/icons-material/Menu';
import PersonOutline from '@mui/icons-material/PersonOutlineOutlined';
import InsightsOutlined from '@mui/icons-material/InsightsOutlined';
import SettingsOutlined from '@mui/icons-material/SettingsOutlined';
import { Link as RouterLink, useNavigate } from 'react-router';
import { Logo } from '@/components/ui/logo';
import { paths } from '@/config/paths';
import type { User } from '@/lib/api/get-me';
import { useLogout } from '@/lib/api/logout';
import { canReadScorecard, hasAdminDrawer } from '@/lib/permissions';
import { AdminDrawer } from './admin-drawer';
import { TradingHours } from './trading-hours';

function initials(user: User) {
  const s = `${user.first_name?.[0] ?? ''}${user.last_name?.[0] ?? ''}`.toUpperCase();
  return s || (user.email[0] ?? '?').toUpperCase();
}

/**
 * Top bar: the menu button (admin and order-admin users only), logo to the dashboard, the
 * venue's trading hours, the features' actions (the notifications bell) and the profile menu
 * (e-mail, Settings, Logout).
 */
export function TopBar({ user, actions }: { user: User; actions?: ReactNode }) {
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  const [drawerOpen, setDrawerOpen] = useState(false);
  const withDrawer = hasAdminDrawer(user);
  const navigate = useNavigate();
  const logout = useLogout({ onDone: () => navigate(paths.login, { replace: true }) });
  const close = () => setAnchor(null);

  return (
    <AppBar position="sticky" color="inherit" elevation={0} sx={{ borderBottom: 1, borderColor: 'divider' }}>
      <Toolbar sx={{ gap: 2 }}>
        {withDrawer && (
          <IconButton edge="start" aria-label="Open menu" onClick={() => setDrawerOpen(true)}>
            <MenuIcon />
          </IconButton>
        )}
        <RouterLink to={paths.dashboard} aria-label="Dashboard" style={{ textDecoration: 'none', display: 'flex' }}>
          <Logo />
        </RouterLink>
        <div style={{ flexGrow: 1 }} />
        <TradingHours />
        {actions}
        <IconButton
          aria-label="Profile menu"
          aria-haspopup="menu"
          aria-expanded={anchor ? 'true' : undefined}
          onClick={(e) => setAnchor(e.currentTarget)}
        >
          <Avatar sx={{ width: 36, height: 36, bgcolor: 'primary.main', fontSize: '0.95rem' }}>{initials(user)}</Avatar>
        </IconButton>
        <Menu
          anchorEl={anchor}
          open={anchor !== null}
          onClose={close}
          anchorOrigin={{ vertical: 'bottom', horizontal: 'right' }}
          transformOrigin={{ vertical: 'top', horizontal: 'right' }}
          slotProps={{ paper: { sx: { minWidth: 240, mt: 1 } } }}
        >
          <Typography variant="body2" color="text.secondary" sx={{ px: 2, py: 1 }} data-testid="profile-email">
            {user.email}
          </Typography>
          <Divider />
          <MenuItem component={RouterLink} to={paths.account} onClick={close}>
            <ListItemIcon>
              <PersonOutline fontSize="small" />
            </ListItemIcon>
            Account
          </MenuItem>
          <MenuItem component={RouterLink} to={paths.settings} onClick={close}>
            <ListItemIcon>
              <SettingsOutlined fontSize="small" />
            </ListItemIcon>
            Settings
          </MenuItem>
          {canReadScorecard(user) && (
            <MenuItem component={RouterLink} to={paths.scorecard} onClick={close}>
              <ListItemIcon>
                <InsightsOutlined fontSize="small" />
              </ListItemIcon>
              Scorecard
            </MenuItem>
          )}
          <MenuItem
            onClick={() => {
              close();
              logout.mutate();
            }}
          >
            <ListItemIcon>
              <Logout fontSize="small" />
            </ListItemIcon>
            Logout
          </MenuItem>
        </Menu>
      </Toolbar>
      {withDrawer && <AdminDrawer user={user} open={drawerOpen} onClose={() => setDrawerOpen(false)} />}
    </AppBar>
  );
}
