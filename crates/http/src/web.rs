//! The built web app with SPA fallback, and the security headers of every response.

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use std::path::PathBuf;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::services::{ServeDir, ServeFile};

use crate::error::ApiError;

/// HSTS for a venue served over https: a year, as browsers' preload lists expect.
pub const HSTS: &str = "max-age=31536000; includeSubDomains";

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
            Router::new()
                .fallback_service(ServeDir::new(dir).fallback(ServeFile::new(index)))
                .layer(axum::middleware::from_fn(no_hidden_files))
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

/// Files and folders whose name starts with a dot (the build's `.vite/manifest.json`)
/// are not the app's to serve.
async fn no_hidden_files(req: Request, next: Next) -> Response {
    if req.uri().path().split('/').any(|segment| segment.starts_with('.')) {
        return StatusCode::NOT_FOUND.into_response();
    }
    next.run(req).await
}

/// The app with a panic answered as a 500 problem, and the security headers on every
/// answer, that 500 included (the headers' layer wraps the panic's); HSTS when `https`.
pub fn hardened(app: Router, https: bool) -> Router {
    app.layer(CatchPanicLayer::custom(|_| {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "Something went wrong on our side. Please try again.")
            .into_response()
    }))
    .layer(axum::middleware::map_response(move |res: Response| security_headers(res, https)))
}

/// Adds the security headers to every response that does not set them itself.
pub async fn security_headers(mut res: Response, https: bool) -> Response {
    let h = res.headers_mut();
    if https {
        h.entry(header::STRICT_TRANSPORT_SECURITY).or_insert(HeaderValue::from_static(HSTS));
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use tower::ServiceExt;

    async fn answer(app: Router, path: &str) -> Response {
        app.oneshot(axum::http::Request::get(path).body(Body::empty()).unwrap()).await.unwrap()
    }

    #[allow(clippy::panic)]
    async fn boom() -> &'static str {
        panic!("boom")
    }

    #[tokio::test]
    async fn a_panic_is_a_500_problem_with_the_security_headers() {
        let app = Router::new().route("/boom", get(boom));
        let res = answer(hardened(app.clone(), false), "/boom").await;
        assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(res.headers()[header::CONTENT_TYPE], "application/problem+json");
        for h in [header::CONTENT_SECURITY_POLICY, header::X_CONTENT_TYPE_OPTIONS, header::X_FRAME_OPTIONS] {
            assert!(res.headers().contains_key(&h), "the 500 lacks {h}");
        }
        assert!(!res.headers().contains_key(header::STRICT_TRANSPORT_SECURITY), "no HSTS over http");
        let res = answer(hardened(app, true), "/boom").await;
        assert_eq!(res.headers()[header::STRICT_TRANSPORT_SECURITY], HSTS);
    }
}
