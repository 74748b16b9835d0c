/** Product name used until GET /api/config answers (the spec's {product}). */
export const DEFAULT_PRODUCT_NAME = 'Upstairs';

/** Timings from spec section 9. */
export const LOGIN_BANNER_MS = 5_000;
export const PASSWORD_REDIRECT_MS = 2_000;
export const REAUTH_WAIT_MS = 10_000;
export const ERROR_SNACKBAR_MS = 6_000;
export const TOAST_MS = 4_000;
/** Drawers are 486 px wide: the right-hand forms and the admin menu (both specs, section 9). */
export const DRAWER_WIDTH = 486;

export const TOKEN_STORAGE_KEY = 'upstairs.token';
export const COOKIE_CONSENT_KEY = 'upstairs.cookie-consent';
/** Spec section 9: orders and market data are polled every 15 s; the realtime topics refresh them at once. */
export const POLL_MS = 15_000;
/** Spec section 9: the instrument filter is debounced 500 ms. */
export const INSTRUMENT_FILTER_DEBOUNCE_MS = 500;
/** Spec section 9: the 'Your RFQ has been sent' toast shows 2 s. */
export const RFQ_SENT_TOAST_MS = 2_000;
/** Spec section 2: the Active RFQ's panel is at most 850 wide and 564 high ('maximum width 850, height 564'). */
export const RFQ_PANEL_MAX_WIDTH = 850;
export const RFQ_PANEL_HEIGHT = 564;
