import type { User } from '@/lib/api/get-me';

// DESIGN section 4: upstairs-admin has the admin permission; upstairs-sales the
// order-admin permission. Either one gets the menu button and the drawer.

export function isAdmin(user: Pick<User, 'roles'>): boolean {
  return user.roles.includes('upstairs-admin');
}

export function isOrderAdmin(user: Pick<User, 'roles'>): boolean {
  return isAdmin(user) || user.roles.includes('upstairs-sales');
}

/** Admin spec section 6: only these users have the menu button and the side drawer. */
export function hasAdminDrawer(user: Pick<User, 'roles'>): boolean {
  return isOrderAdmin(user);
}
