//! `Idempotency-Key` on the writes a client may need to retry (ADR 0023): the key and a
//! digest of the request go to the engine with the write, which runs it once per key (a
//! retry answers with what the first run created, without acting twice).

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use serde::de::DeserializeOwned;
use upstairs_engine::model::IdempotencyKey;

use crate::error::ApiError;
use crate::extract::ApiJson;

pub const HEADER: &str = "idempotency-key";
/// Longest key accepted (a UUID is 36).
pub const MAX_KEY: usize = 255;

/// A JSON body and the request's `Idempotency-Key`, with a digest of method, path and body.
pub struct KeyedJson<T> {
    pub body: T,
    pub key: Option<IdempotencyKey>,
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for KeyedJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let key = match req.headers().get(HEADER) {
            None => None,
            Some(v) => {
                let k = v.to_str().ok().filter(|k| (1..=MAX_KEY).contains(&k.len()) && !k.contains([' ', '\t']));
                Some(
                    k.ok_or_else(|| {
                        ApiError::bad_request(format!(
                            "Idempotency-Key must be 1 to {MAX_KEY} visible ASCII characters, one per action."
                        ))
                    })?
                    .to_owned(),
                )
            }
        };
        let Some(key) = key else {
            return ApiJson::<T>::from_request(req, state).await.map(|ApiJson(body)| KeyedJson { body, key: None });
        };
        let (parts, body) = req.into_parts();
        let seen = format!("{} {}\n", parts.method, parts.uri.path());
        let bytes = Bytes::from_request(Request::from_parts(parts.clone(), body), state).await.map_err(|_| {
            ApiError::new(
                axum::http::StatusCode::PAYLOAD_TOO_LARGE,
                "The request body is too large or could not be read.",
            )
        })?;
        let request_hash = upstairs_engine::security::digest(&[seen.as_bytes(), &bytes].concat());
        // Parsed as `ApiJson` parses any body: the same content-type and field errors.
        let again = Request::from_parts(parts, axum::body::Body::from(bytes));
        let ApiJson(body) = ApiJson::<T>::from_request(again, state).await?;
        Ok(KeyedJson { body, key: Some(IdempotencyKey { key, request_hash }) })
    }
}

/// The header, as the OpenAPI document shows it on each keyed write.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
pub struct IdempotencyKeyHeader {
    /// One key per user action: a retry with the same key and body answers what the first
    /// try did without doing it again; the same key with another body answers 422.
    #[serde(rename = "Idempotency-Key")]
    #[param(min_length = 1, max_length = 255)]
    pub idempotency_key: Option<String>,
}
