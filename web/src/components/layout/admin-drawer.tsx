import Box from '@mui/material/Box';
import Drawer from '@mui/material/Drawer';
import List from '@mui/material/List';
import ListItemButton from '@mui/material/ListItemButton';
import ListItemIcon from '@mui/material/ListItemIcon';
import ListItemText from '@mui/material/ListItemText';
import ListSubheader from '@mui/material/ListSubheader';
import BusinessOutlined from '@mui/icons-material/BusinessOutlined';
import CampaignOutlined from '@mui/icons-material/CampaignOutlined';
import CalculateOutlined from '@mui/icons-material/CalculateOutlined';
import DashboardOutlined from '@mui/icons-material/DashboardOutlined';
import GroupOutlined from '@mui/icons-material/GroupOutlined';
import EmailOutlined from '@mui/icons-material/EmailOutlined';
import HistoryOutlined from '@mui/icons-material/HistoryOutlined';
import LanOutlined from '@mui/icons-material/LanOutlined';
import PersonOutline from '@mui/icons-material/PersonOutlineOutlined';
import PublicOutlined from '@mui/icons-material/PublicOutlined';
import ReceiptLongOutlined from '@mui/icons-material/ReceiptLongOutlined';
import ShowChartOutlined from '@mui/icons-material/ShowChartOutlined';
import ViewListOutlined from '@mui/icons-material/ViewListOutlined';
import type { ReactNode } from 'react';
import { Link as RouterLink, useLocation } from 'react-router';
import { DRAWER_WIDTH } from '@/config/constants';
import { paths } from '@/config/paths';
import type { User } from '@/lib/api/get-me';
import { canManageUsers, canReadBilling, canUseNewsletters, hasAdminDrawer, isAdmin, isOrderAdmin } from '@/lib/permissions';

export type Entry = { to: string; label: string; icon: ReactNode; show: boolean };

/**
 * Admin spec section 2: Dashboard, the Admin group and the User group, in the spec's order
 * (Exchanges, ours, follows the instruments; the E-mail outbox and FIX sessions, ours, close
 * the Admin group). Each entry shows for the roles whose route guard lets them in
 * (lib/permissions).
 */
export function AdminDrawer({ user, open, onClose }: { user: User; open: boolean; onClose: () => void }) {
  const { pathname } = useLocation();
  const groups: { title?: string; entries: Entry[] }[] = [
    { entries: [{ to: paths.dashboard, label: 'Dashboard', icon: <DashboardOutlined />, show: true }] },
    { title: 'Admin', entries: adminEntries(user) },
    { title: 'User', entries: [{ to: paths.account, label: 'Account Info', icon: <PersonOutline />, show: true }] },
  ];
  return (
    <Drawer anchor="left" open={open} onClose={onClose}>
      <Box component="nav" aria-label="Main menu" sx={{ width: DRAWER_WIDTH, maxWidth: '100vw' }}>
        {groups.map((g) => (
          <List key={g.title ?? 'main'} subheader={g.title ? <ListSubheader>{g.title}</ListSubheader> : undefined}>
            {g.entries
              .filter((e) => e.show)
              .map((e) => (
                <ListItemButton key={e.to} component={RouterLink} to={e.to} selected={pathname === e.to} onClick={onClose}>
                  <ListItemIcon>{e.icon}</ListItemIcon>
                  <ListItemText primary={e.label} />
                </ListItemButton>
              ))}
          </List>
        ))}
      </Box>
    </Drawer>
  );
}

/** The Admin group's entries, each shown to the roles whose route guard lets them in. */
export function adminEntries(user: User): Entry[] {
  const admin = isAdmin(user);
  return [
    { to: paths.adminActionLogs, label: 'Action logs', icon: <HistoryOutlined />, show: admin },
    { to: paths.adminBilling, label: 'Billing', icon: <ReceiptLongOutlined />, show: canReadBilling(user) },
    { to: paths.adminCompanies, label: 'Companies panel', icon: <BusinessOutlined />, show: admin },
    { to: paths.adminUsers, label: 'Users panel', icon: <GroupOutlined />, show: canManageUsers(user) },
    { to: paths.adminInstruments, label: 'Instruments panel', icon: <ShowChartOutlined />, show: admin },
    { to: paths.adminExchanges, label: 'Exchanges', icon: <PublicOutlined />, show: admin },
    { to: paths.adminOrders, label: 'Orders panel', icon: <ViewListOutlined />, show: isOrderAdmin(user) },
    { to: paths.adminOrdersNewsletter, label: 'Orders newsletter', icon: <CampaignOutlined />, show: canUseNewsletters(user) },
    { to: paths.blockCalculator, label: 'Block Calculator', icon: <CalculateOutlined />, show: hasAdminDrawer(user) },
    { to: paths.adminOutbox, label: 'E-mail outbox', icon: <EmailOutlined />, show: admin },
    { to: paths.adminFixSessions, label: 'FIX sessions', icon: <LanOutlined />, show: admin },
  ];
}
