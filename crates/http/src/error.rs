//! The one HTTP error type: it alone knows status codes and `application/problem+json`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use upstairs_domain::FieldError;
use upstairs_engine::EngineError;
use utoipa::ToSchema;

/// The media type of every error answer.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// An RFC 9457 problem document.
#[derive(Debug, Serialize, ToSchema)]
pub struct Problem {
    #[serde(rename = "type")]
    pub type_: String,
    pub title: String,
    pub status: u16,
    /// The sentence the UI shows.
    pub detail: String,
    /// Per-field validation messages.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<ProblemFieldError>)]
    pub errors: Vec<FieldError>,
}

/// One field's validation message.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProblemFieldError {
    pub field: String,
    pub message: String,
}

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub detail: String,
    pub errors: Vec<FieldError>,
    /// Seconds for `Retry-After` (429, 503).
    pub retry_after: Option<u64>,
}

/// What a 503 asks the client to wait: the database or the hashing pool is back within seconds.
pub const UNAVAILABLE_RETRY_AFTER: u64 = 2;

impl ApiError {
    pub fn new(status: StatusCode, detail: impl Into<String>) -> Self {
        Self { status, detail: detail.into(), errors: vec![], retry_after: None }
    }

    pub fn bad_request(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, detail)
    }

    pub fn unauthorized(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, detail)
    }

    /// 503 with `Retry-After`.
    pub fn unavailable(detail: impl Into<String>) -> Self {
        Self { retry_after: Some(UNAVAILABLE_RETRY_AFTER), ..Self::new(StatusCode::SERVICE_UNAVAILABLE, detail) }
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> Self {
        use EngineError::*;
        let mut retry_after = None;
        let (status, detail, errors) = match e {
            NotFound(d) => (StatusCode::NOT_FOUND, d, vec![]),
            Unauthorized(d) => (StatusCode::UNAUTHORIZED, d, vec![]),
            Forbidden(d) => (StatusCode::FORBIDDEN, d, vec![]),
            Conflict { detail, errors } => (StatusCode::CONFLICT, detail, errors),
            Invalid { detail, errors } => (StatusCode::BAD_REQUEST, detail, errors),
            Gone(d) => (StatusCode::GONE, d, vec![]),
            TooManyRequests { detail, retry_after: wait } => {
                retry_after = Some(wait);
                (StatusCode::TOO_MANY_REQUESTS, detail, vec![])
            }
            Unavailable(d) => {
                retry_after = Some(UNAVAILABLE_RETRY_AFTER);
                (StatusCode::SERVICE_UNAVAILABLE, d, vec![])
            }
            KeyReused(d) => (StatusCode::UNPROCESSABLE_ENTITY, d, vec![]),
            // The edge replays these (`idempotency`); one that escapes is a race still running.
            Repeated => (StatusCode::CONFLICT, "This request is already being processed.".into(), vec![]),
            Internal(cause) => {
                tracing::error!(%cause, "internal error");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Something went wrong on our side. Please try again.".into(),
                    vec![],
                )
            }
        };
        Self { status, detail, errors, retry_after }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let problem = Problem {
            type_: "about:blank".into(),
            title: self.status.canonical_reason().unwrap_or("Error").into(),
            status: self.status.as_u16(),
            detail: self.detail,
            errors: self.errors,
        };
        let mut res = (self.status, axum::Json(problem)).into_response();
        res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        if let Some(seconds) = self.retry_after {
            res.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        res
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// Error answers an operation documents by name (`responses(..., NotFound, Conflict)`);
/// the route registry gives each the problem+json body, and adds the edge's own statuses.
pub mod responses {
    use utoipa::IntoResponses;

    #[derive(IntoResponses)]
    #[response(status = 400, description = "The request or a field of it is not valid")]
    pub struct BadRequest;

    #[derive(IntoResponses)]
    #[response(status = 403, description = "The caller may not do this")]
    pub struct Forbidden;

    #[derive(IntoResponses)]
    #[response(status = 404, description = "No such resource (or not visible to the caller)")]
    pub struct NotFound;

    #[derive(IntoResponses)]
    #[response(status = 409, description = "Conflicts with the current state")]
    pub struct Conflict;

    #[derive(IntoResponses)]
    #[response(status = 410, description = "The link is no longer valid")]
    pub struct Gone;

    #[derive(IntoResponses)]
    #[response(status = 429, description = "Too many attempts: try again later")]
    pub struct TooManyRequests;

    #[derive(IntoResponses)]
    #[response(
        status = 422,
        description = "The body does not have the documented shape, or the Idempotency-Key was already used with a different request"
    )]
    pub struct KeyReused;
}
