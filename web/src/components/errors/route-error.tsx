import { NotFoundPage } from './not-found-page';

/**
 * The router's error element. Spec (trader section 2, admin sections 2 and 8): 'Any route
 * error or unknown page shows a 404 page', so a route that fails to load or render shows
 * the 404 page too (React Router has already logged the error).
 */
export function RouteError() {
  return <NotFoundPage />;
}
