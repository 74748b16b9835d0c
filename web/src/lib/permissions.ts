import type { User } from '@/lib/api/get-me';

// DESIGN section 4, roles → permissions: upstairs-admin has the admin permission (everything
// admin); upstairs-sales the order-admin permission (Orders panel read-only, Billing read) and
// the admin drawer; company-admin manages the users of its own company. Traders and sandbox
// users trade only and have no menu. Every route guard and drawer entry reads these.

type Roles = Pick<User, 'roles'>;

/** The admin permission: Action logs, Companies, Users and Instruments panels, the E-mail outbox, order edits. */
export function isAdmin(user: Roles): boolean {
  return user.roles.includes('upstairs-admin');
}

/** The order-admin permission (admin spec section 6): the Orders panel, read-only unless `isAdmin`. */
export function isOrderAdmin(user: Roles): boolean {
  return isAdmin(user) || user.roles.includes('upstairs-sales');
}

/** Billing: the admin, and sales (DESIGN section 4: 'Billing read'). */
export function canReadBilling(user: Roles): boolean {
  return isOrderAdmin(user);
}

/**
 * Orders newsletter (admin spec section 6: everyone with the drawer): every newsletter for the
 * admin and sales, its own company's, to its own users, for a company admin (ADR 0021).
 */
export function canUseNewsletters(user: Roles): boolean {
  return hasAdminDrawer(user);
}

/** The Users panel: every user for the admin, its own company's users for a company admin. */
export function canManageUsers(user: Roles): boolean {
  return isAdmin(user) || user.roles.includes('company-admin');
}

/**
 * Admin spec section 6: only these users have the menu button and the side drawer (the admin,
 * sales and company admins); the Block Calculator is for everyone who has it.
 */
export function hasAdminDrawer(user: Roles): boolean {
  return isOrderAdmin(user) || canManageUsers(user);
}

/**
 * Trading (DESIGN section 4): a trader or sandbox user; a venue role (admin, sales) withholds
 * it even beside a trading role, as the server's `has_permission` does. Who cannot trade
 * gets the operator's dashboard, never the trader's Getting started.
 */
export function canTrade(user: Roles): boolean {
  const venue = user.roles.some((r) => r === 'upstairs-admin' || r === 'upstairs-sales');
  return !venue && user.roles.some((r) => r === 'trader' || r === 'sandbox');
}

/** Scorecards (issue 29): a firm's own for its traders and company admin; the venue's for its staff. Not for sandbox users. */
export function canReadScorecard(user: Roles): boolean {
  return !user.roles.includes('sandbox') && (isOrderAdmin(user) || user.roles.includes('trader') || user.roles.includes('company-admin'));
}
