//! The HTTP edge: axum routers per feature, problem errors, the OpenAPI document,
//! the STOMP hub, and the built web app.

use std::sync::Arc;

pub mod book_bodies;
pub mod dto;
pub mod error;
pub mod extract;
pub mod idempotency;
pub mod metrics;
pub mod openapi;
pub mod routes;
pub mod server;
pub mod stomp;
mod web;

use axum::Router;
use axum::extract::{DefaultBodyLimit, OriginalUri};
use axum::http::{HeaderValue, Method, header};
use axum::response::IntoResponse;
use axum::routing::get;
use std::path::PathBuf;
use tower_http::set_header::SetResponseHeaderLayer;
use upstairs_engine::{Engine, Store};
use utoipa::OpenApi;

use crate::error::ApiError;
use crate::openapi::ApiRouter;
use crate::routes::{
    action_logs, admin_orders, allocations, auth, counterparties, exchanges, fix, matches, meta, newsletters,
    notifications, orders, outbox, reference, rfqs, scorecards, users,
};

/// What every handler can reach.
pub struct AppState<S: Store> {
    /// Shared: axum clones the state for every request and middleware, and the engine
    /// holds every feature's service (cloning it was a tenth of a request's CPU).
    pub engine: Arc<Engine<S>>,
    /// The realtime hub the STOMP sessions listen to.
    pub realtime: stomp::hub::Hub,
    /// Rendered book bodies (ADR 0014).
    pub books: Arc<book_bodies::BookBodies>,
    /// Proxies whose `X-Forwarded-For` names the client (ADR 0024).
    pub trusted_proxies: Arc<[ipnet::IpNet]>,
    /// Requests by route and status, for `/metrics`.
    pub requests: Arc<metrics::RequestMetrics>,
    /// `/api` requests this node handles at once (the node's throttle).
    pub max_in_flight: usize,
    /// How long an `/api` request's body may take to arrive.
    pub body_wait: std::time::Duration,
    /// Where this node accepts FIX sessions; `None`: FIX is off here.
    pub fix_acceptor: Option<Arc<routes::fix::FixAcceptorDto>>,
}

impl<S: Store> AppState<S> {
    pub fn new(engine: Engine<S>, realtime: stomp::hub::Hub) -> Self {
        Self {
            engine: Arc::new(engine),
            realtime,
            books: Arc::default(),
            trusted_proxies: Arc::new([]),
            requests: Arc::default(),
            max_in_flight: MAX_IN_FLIGHT,
            body_wait: BODY_WAIT,
            fix_acceptor: None,
        }
    }

    /// The node's FIX acceptor, for the admin's FIX sessions page.
    pub fn with_fix_acceptor(mut self, acceptor: Option<routes::fix::FixAcceptorDto>) -> Self {
        self.fix_acceptor = acceptor.map(Arc::new);
        self
    }

    /// The node's throttle and how long a body may take (`ServerLimits`).
    pub fn with_limits(mut self, max_in_flight: usize, body_wait: std::time::Duration) -> Self {
        self.max_in_flight = max_in_flight.max(1);
        self.body_wait = body_wait;
        self
    }

    pub fn with_trusted_proxies(mut self, proxies: Vec<ipnet::IpNet>) -> Self {
        self.trusted_proxies = proxies.into();
        self
    }
}

impl<S: Store> Clone for AppState<S> {
    fn clone(&self) -> Self {
        Self {
            engine: self.engine.clone(),
            realtime: self.realtime.clone(),
            books: self.books.clone(),
            trusted_proxies: self.trusted_proxies.clone(),
            requests: self.requests.clone(),
            max_in_flight: self.max_in_flight,
            body_wait: self.body_wait,
            fix_acceptor: self.fix_acceptor.clone(),
        }
    }
}

#[derive(OpenApi)]
#[openapi(
    info(title = "Upstairs API", description = "Block trading venue: accounts, orders, match requests, RFQs."),
    // The realtime payloads: no route returns them, the STOMP topics carry them.
    components(schemas(
        stomp::messages::BookMessage, stomp::messages::BookShareMessage, stomp::messages::OrderMessage,
        stomp::messages::RfqMessage, stomp::messages::NotificationMessage,
    )),
    modifiers(&BearerAuth),
    tags((name = "auth"), (name = "users"), (name = "companies"), (name = "instruments"), (name = "orders"), (name = "matches"), (name = "rfqs"), (name = "notifications"), (name = "admin"), (name = "meta"))
)]
struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// Every `/api` route of every feature, each with its documentation.
fn api<S: Store>() -> (Router<AppState<S>>, utoipa::openapi::OpenApi) {
    ApiRouter::new()
        .merge(auth::router())
        .merge(users::router())
        .merge(meta::router())
        .merge(reference::router())
        .merge(exchanges::router())
        .merge(counterparties::router())
        .merge(allocations::router())
        .merge(orders::router())
        .merge(matches::router())
        .merge(rfqs::router())
        .merge(notifications::router())
        .merge(outbox::router())
        .merge(fix::router())
        .merge(action_logs::router())
        .merge(admin_orders::router())
        .merge(newsletters::router())
        .merge(scorecards::router())
        .split(ApiDoc::openapi())
}

/// The OpenAPI document, pretty-printed as served at `/api/openapi.json`. The document does
/// not depend on the store; `S` only names one to build the routes with.
pub fn openapi_json<S: Store>() -> String {
    to_json(&api::<S>().1)
}

fn to_json(doc: &utoipa::openapi::OpenApi) -> String {
    doc.to_pretty_json().unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

async fn api_not_found(method: Method, OriginalUri(uri): OriginalUri) -> ApiError {
    ApiError::new(axum::http::StatusCode::NOT_FOUND, format!("No such API endpoint: {method} {}", uri.path()))
}

/// `/metrics` is served on its own address (`metrics::router`), never on the app's port
/// (where the web app would otherwise answer it with its page).
async fn metrics_elsewhere() -> ApiError {
    ApiError::new(axum::http::StatusCode::NOT_FOUND, "Not found.")
}

async fn api_method_not_allowed(method: Method, OriginalUri(uri): OriginalUri) -> ApiError {
    ApiError::new(axum::http::StatusCode::METHOD_NOT_ALLOWED, format!("{method} is not allowed on {}", uri.path()))
}

/// Largest request body accepted under `/api`.
pub const MAX_BODY: usize = 64 * 1024;
/// `/api` requests one node handles at once (sign-in aside, which has its own queue);
/// one more waits up to [`SLOT_WAIT`] for a place, then answers 429 (ADR 0026).
pub const MAX_IN_FLIGHT: usize = 64;
/// How long a request over [`MAX_IN_FLIGHT`] waits for a place before it is refused.
pub const SLOT_WAIT: std::time::Duration = std::time::Duration::from_millis(250);
/// How long an `/api` request's body may take to arrive (it is read before the request
/// takes a place, so a slow sender holds no place); later, 408.
pub const BODY_WAIT: std::time::Duration = std::time::Duration::from_secs(10);
/// The longest an `/api` request may take, its body included (the database's own
/// statement timeout is shorter).
pub const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The node's throttle: beyond [`MAX_IN_FLIGHT`] requests at once (and [`SLOT_WAIT`] of
/// waiting), 429 with `Retry-After`, before the database's queue builds up and answers
/// 503 (ADR 0026); a request over [`REQUEST_TIMEOUT`] ends with a 503. Sign-in and the
/// other `/api/auth` calls skip the throttle: password hashing has its own slots and
/// queue (ADR 0024), and a sign-in flood must not hold every place.
async fn bounded(
    axum::extract::State((slots, body_wait)): axum::extract::State<(Arc<tokio::sync::Semaphore>, std::time::Duration)>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let (parts, body) = req.into_parts();
    let body = match tokio::time::timeout(body_wait, axum::body::to_bytes(body, MAX_BODY)).await {
        Ok(Ok(bytes)) => axum::body::Body::from(bytes),
        Ok(Err(_)) => {
            let status = axum::http::StatusCode::PAYLOAD_TOO_LARGE;
            return ApiError::new(status, "The request body is too large or could not be read.").into_response();
        }
        Err(_) => {
            let status = axum::http::StatusCode::REQUEST_TIMEOUT;
            return ApiError::new(status, "The request body did not arrive in time.").into_response();
        }
    };
    let req = axum::extract::Request::from_parts(parts, body);
    let _slot = if req.uri().path().starts_with("/auth/") {
        None
    } else {
        match tokio::time::timeout(SLOT_WAIT, slots.acquire_owned()).await {
            Ok(Ok(slot)) => Some(slot),
            _ => {
                let busy = ApiError::new(
                    axum::http::StatusCode::TOO_MANY_REQUESTS,
                    "The venue is busy. Please try again in a moment.",
                );
                return ApiError { retry_after: Some(1), ..busy }.into_response();
            }
        }
    };
    match tokio::time::timeout(REQUEST_TIMEOUT, next.run(req)).await {
        Ok(res) => res,
        Err(_) => {
            tracing::warn!("request over the time limit");
            ApiError::unavailable("The request took too long. Please try again.").into_response()
        }
    }
}

/// The whole application: `/api`, `/ws`, health, and the web app with SPA fallback.
pub fn router<S: Store>(state: AppState<S>, web_dir: Option<PathBuf>) -> Router {
    let (api, doc) = api::<S>();
    let doc: std::sync::Arc<str> = to_json(&doc).into();
    let openapi_handler = move || {
        let doc = doc.clone();
        async move { ([(header::CONTENT_TYPE, "application/json")], doc.to_string()).into_response() }
    };
    let api = api
        .route("/openapi.json", get(openapi_handler))
        .fallback(api_not_found)
        .method_not_allowed_fallback(api_method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::from_fn_with_state(
            (Arc::new(tokio::sync::Semaphore::new(state.max_in_flight)), state.body_wait),
            bounded,
        ))
        .layer(SetResponseHeaderLayer::overriding(header::CACHE_CONTROL, HeaderValue::from_static("no-store")));

    let https = state.engine.config().public_url.starts_with("https://");
    let requests = state.requests.clone();
    let app = Router::new()
        .nest("/api", api)
        .route("/ws", get(stomp::session::ws_handler::<S>))
        .route("/healthz", get(meta::healthz))
        .route("/readyz", get(meta::readyz::<S>))
        .route("/metrics", axum::routing::any(metrics_elsewhere))
        .route_layer(axum::middleware::from_fn(metrics::mark_route))
        .fallback_service(web::spa(web_dir))
        .with_state(state);
    let x_request_id = header::HeaderName::from_static("x-request-id");
    web::hardened(app, https)
        .layer(axum::middleware::from_fn_with_state(requests, metrics::track))
        // Every log line of a request, the engine's included, carries its id (ADR 0026);
        // a proxy's `X-Request-Id` is kept, and the response echoes it.
        .layer(tower_http::request_id::PropagateRequestIdLayer::new(x_request_id.clone()))
        .layer(tower_http::trace::TraceLayer::new_for_http().make_span_with(request_span))
        .layer(tower_http::request_id::SetRequestIdLayer::new(x_request_id, tower_http::request_id::MakeRequestUuid))
}

/// The span of one request: its method and id (no path: some carry link tokens).
fn request_span(req: &axum::http::Request<axum::body::Body>) -> tracing::Span {
    let id = req.headers().get("x-request-id").and_then(|v| v.to_str().ok()).unwrap_or("");
    tracing::info_span!("request", method = %req.method(), request_id = %id)
}
