import { isRouteErrorResponse, useRouteError } from 'react-router';
import { NotFoundPage } from './not-found-page';
import { SomethingWentWrongPage } from './something-went-wrong-page';

/** Router error element: routing errors show the 404 page, anything else the general error page. */
export function RouteError() {
  const error = useRouteError();
  if (isRouteErrorResponse(error)) return <NotFoundPage />;
  return <SomethingWentWrongPage />;
}
