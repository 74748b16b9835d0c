//! The HTTP edge: axum routers per feature, problem errors, the OpenAPI document,
//! the STOMP hub, and the built web app.

pub mod dto;
pub mod error;
pub mod extract;
pub mod routes;
pub mod stomp;
mod web;

use axum::Router;
use axum::extract::{DefaultBodyLimit, OriginalUri};
use axum::http::{HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, patch, post};
use std::path::PathBuf;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::set_header::SetResponseHeaderLayer;
use upstairs_engine::{Engine, Store};
use utoipa::OpenApi;

use crate::error::ApiError;
use crate::routes::{auth, meta, orders, reference, users};

/// What every handler can reach.
pub struct AppState<S: Store> {
    pub engine: Engine<S>,
    /// The realtime hub the STOMP sessions listen to.
    pub realtime: stomp::hub::Hub,
}

impl<S: Store> Clone for AppState<S> {
    fn clone(&self) -> Self {
        Self { engine: self.engine.clone(), realtime: self.realtime.clone() }
    }
}

#[derive(OpenApi)]
#[openapi(
    info(title = "Upstairs API", description = "Block trading venue: accounts, orders, match requests, RFQs."),
    paths(
        auth::login, auth::logout,
        users::me, users::update, users::create, users::request_link, users::check_link, users::set_password,
        meta::config,
        users::admin_list,
        reference::admin_companies, reference::create_company, reference::update_company, reference::company,
        reference::liquidity_providers, reference::admin_instruments, reference::create_instrument,
        reference::update_instrument, reference::move_band, reference::instruments, reference::instrument,
        orders::platform_status, orders::parent_orders, orders::parent_order, orders::create_parent_order,
        orders::cancel_parent_order, orders::orders, orders::order, orders::create_order, orders::edit_order,
        orders::cancel_order, orders::book, orders::market_data,
    ),
    components(schemas(
        stomp::messages::BookMessage, stomp::messages::OrderMessage, stomp::messages::InstrumentMessage,
    )),
    modifiers(&BearerAuth),
    tags((name = "auth"), (name = "users"), (name = "companies"), (name = "instruments"), (name = "orders"), (name = "admin"), (name = "meta"))
)]
pub struct ApiDoc;

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

/// The OpenAPI document, pretty-printed as served at `/api/openapi.json`.
pub fn openapi_json() -> String {
    ApiDoc::openapi().to_pretty_json().unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

async fn openapi_handler() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], openapi_json()).into_response()
}

async fn api_not_found(method: Method, OriginalUri(uri): OriginalUri) -> ApiError {
    ApiError::new(axum::http::StatusCode::NOT_FOUND, format!("No such API endpoint: {method} {}", uri.path()))
}

async fn api_method_not_allowed(method: Method, OriginalUri(uri): OriginalUri) -> ApiError {
    ApiError::new(axum::http::StatusCode::METHOD_NOT_ALLOWED, format!("{method} is not allowed on {}", uri.path()))
}

/// Largest request body accepted under `/api`.
pub const MAX_BODY: usize = 64 * 1024;

/// The whole application: `/api`, `/ws`, health, and the web app with SPA fallback.
pub fn router<S: Store>(state: AppState<S>, web_dir: Option<PathBuf>) -> Router {
    let api = Router::new()
        .route("/auth/login", post(auth::login::<S>))
        .route("/auth/session", delete(auth::logout::<S>))
        .route("/users", post(users::create::<S>))
        .route("/users/me", get(users::me::<S>))
        .route("/users/{id}", patch(users::update::<S>))
        .route("/users/password-reset", post(users::request_link::<S>))
        .route("/users/password-reset/{hash}", get(users::check_link::<S>).post(users::set_password::<S>))
        .route("/admin/users", get(users::admin_list::<S>))
        .route("/admin/companies", get(reference::admin_companies::<S>).post(reference::create_company::<S>))
        .route("/admin/companies/{id}", patch(reference::update_company::<S>))
        .route("/companies/{id}", get(reference::company::<S>))
        .route("/liquidity-providers", get(reference::liquidity_providers::<S>))
        .route("/admin/instruments", get(reference::admin_instruments::<S>).post(reference::create_instrument::<S>))
        .route("/admin/instruments/{id}", patch(reference::update_instrument::<S>))
        .route("/admin/instruments/{id}/band", post(reference::move_band::<S>))
        .route("/instruments", get(reference::instruments::<S>))
        .route("/instruments/{id}", get(reference::instrument::<S>))
        .route("/platform/status", get(orders::platform_status::<S>))
        .route("/parent-orders", get(orders::parent_orders::<S>).post(orders::create_parent_order::<S>))
        .route("/parent-orders/{id}", get(orders::parent_order::<S>).delete(orders::cancel_parent_order::<S>))
        .route("/orders", get(orders::orders::<S>).post(orders::create_order::<S>))
        .route("/orders/{id}", get(orders::order::<S>).patch(orders::edit_order::<S>).delete(orders::cancel_order::<S>))
        .route("/instruments/{id}/book", get(orders::book::<S>))
        .route("/instruments/{id}/market-data", get(orders::market_data::<S>))
        .route("/config", get(meta::config::<S>))
        .route("/openapi.json", get(openapi_handler))
        .fallback(api_not_found)
        .method_not_allowed_fallback(api_method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(SetResponseHeaderLayer::overriding(header::CACHE_CONTROL, HeaderValue::from_static("no-store")));

    Router::new()
        .nest("/api", api)
        .route("/ws", get(stomp::session::ws_handler::<S>))
        .route("/healthz", get(meta::healthz))
        .route("/readyz", get(meta::readyz::<S>))
        .fallback_service(web::spa(web_dir))
        .layer(axum::middleware::map_response(web::security_headers))
        .layer(CatchPanicLayer::custom(|_| {
            ApiError::new(
                axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                "Something went wrong on our side. Please try again.",
            )
            .into_response()
        }))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(state)
}
