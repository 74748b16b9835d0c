//! Extractors that turn every malformed request into a problem with a clear `detail`.

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use serde::de::DeserializeOwned;
use std::net::SocketAddr;
use upstairs_engine::Store;
use upstairs_engine::context::{Actor, ClientInfo};

use crate::AppState;
use crate::error::ApiError;

/// A JSON body; syntax, type, enum and size errors answer 4xx with the reason.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(v)) => Ok(ApiJson(v)),
            Err(r) => Err(json_rejection(r)),
        }
    }
}

fn json_rejection(r: JsonRejection) -> ApiError {
    let status = r.status();
    let detail = match &r {
        JsonRejection::JsonDataError(e) => {
            format!("The request body is not valid: {}", strip(&e.body_text()))
        }
        JsonRejection::JsonSyntaxError(e) => format!("The request body is not valid JSON: {}", strip(&e.body_text())),
        JsonRejection::MissingJsonContentType(_) => "Send the body as JSON (Content-Type: application/json).".into(),
        JsonRejection::BytesRejection(_) => "The request body is too large or could not be read.".into(),
        other => other.body_text(),
    };
    ApiError::new(status, detail)
}

fn strip(s: &str) -> String {
    s.trim_start_matches("Failed to deserialize the JSON body into the target type: ")
        .trim_start_matches("Failed to parse the request body as JSON: ")
        .to_owned()
}

/// Path parameters; a malformed id answers 400.
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| ApiPath(p.0))
            .map_err(|e: PathRejection| ApiError::bad_request(format!("Invalid path: {}", e.body_text())))
    }
}

/// Query parameters; bad values answer 400.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|q| ApiQuery(q.0))
            .map_err(|e: QueryRejection| ApiError::bad_request(format!("Invalid query: {}", e.body_text())))
    }
}

/// The signed-in caller, from `Authorization: Bearer …`.
pub struct Auth(pub Actor);

pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then_some(token.trim()).filter(|t| !t.is_empty())
}

impl<S: Store> FromRequestParts<AppState<S>> for Auth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState<S>) -> Result<Self, ApiError> {
        let token = bearer(&parts.headers).ok_or_else(|| ApiError::unauthorized("Sign in to continue."))?;
        Ok(Auth(state.engine.authenticate(token).await?))
    }
}

/// The client's address (the TCP peer; proxies are not trusted).
pub struct Client(pub ClientInfo);

impl<S: Send + Sync> FromRequestParts<S> for Client {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let address = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip().to_string())
            .unwrap_or_else(|| "unknown".into());
        Ok(Client(ClientInfo { address }))
    }
}
