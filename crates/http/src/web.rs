//! The built web app with SPA fallback, and the security headers of every response.

use axum::Router;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use std::path::PathBuf;
use tower_http::services::{ServeDir, ServeFile};

/// No inline script and no third-party origin. Styles allow inline: the UI library
/// injects its styles at run time.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
form-action 'self'; frame-ancestors 'none'";

/// Any path that is not `/api` or `/ws` serves a file of the app or its `index.html`.
pub fn spa(web_dir: Option<PathBuf>) -> Router {
    match web_dir.filter(|d| d.join("index.html").is_file()) {
        Some(dir) => {
            let index = dir.join("index.html");
            Router::new().fallback_service(ServeDir::new(dir).fallback(ServeFile::new(index)))
        }
        None => Router::new().fallback(get(|| async {
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Html(
                    "<!doctype html><title>Upstairs</title><p>The web app is not built. Run <code>make run</code>.</p>",
                ),
            )
                .into_response()
        })),
    }
}

/// Adds the security headers to every response that does not set them itself.
pub async fn security_headers(mut res: Response) -> Response {
    let h = res.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
        (HeaderName::from_static("permissions-policy"), "camera=(), microphone=(), geolocation=()"),
        (HeaderName::from_static("cross-origin-opener-policy"), "same-origin"),
    ] {
        h.entry(name).or_insert(HeaderValue::from_static(value));
    }
    res
}
