//! The built web app with SPA fallback, and the security headers of every response.

use axum::Router;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use std::path::PathBuf;
use tower::ServiceBuilder;
use tower_http::services::{ServeDir, ServeFile};
use tower_http::set_header::SetResponseHeaderLayer;

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
                Html("<!doctype html><title>Upstairs</title><p>The web app is not built. Run <code>make run</code>.</p>"),
            )
                .into_response()
        })),
    }
}

pub fn security_headers() -> ServiceBuilder<
    tower::layer::util::Stack<
        SetResponseHeaderLayer<HeaderValue>,
        tower::layer::util::Stack<
            SetResponseHeaderLayer<HeaderValue>,
            tower::layer::util::Stack<
                SetResponseHeaderLayer<HeaderValue>,
                tower::layer::util::Stack<
                    SetResponseHeaderLayer<HeaderValue>,
                    tower::layer::util::Stack<
                        SetResponseHeaderLayer<HeaderValue>,
                        tower::layer::util::Stack<SetResponseHeaderLayer<HeaderValue>, tower::layer::util::Identity>,
                    >,
                >,
            >,
        >,
    >,
> {
    let h = |name: HeaderName, v: &'static str| SetResponseHeaderLayer::if_not_present(name, HeaderValue::from_static(v));
    ServiceBuilder::new()
        .layer(h(header::CONTENT_SECURITY_POLICY, CSP))
        .layer(h(header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .layer(h(header::X_FRAME_OPTIONS, "DENY"))
        .layer(h(header::REFERRER_POLICY, "no-referrer"))
        .layer(h(HeaderName::from_static("permissions-policy"), "camera=(), microphone=(), geolocation=()"))
        .layer(h(HeaderName::from_static("cross-origin-opener-policy"), "same-origin"))
}
