//! Extractors that turn every malformed request into a problem with a clear `detail`.

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use ipnet::IpNet;
use serde::de::DeserializeOwned;
use std::net::{IpAddr, SocketAddr};
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

/// The client's address: the TCP peer, or, when the peer is one of the trusted proxies
/// (`UPSTAIRS_TRUSTED_PROXIES`), the nearest address in `X-Forwarded-For` that is not.
pub struct Client(pub ClientInfo);

impl<S: Store> FromRequestParts<AppState<S>> for Client {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState<S>) -> Result<Self, ApiError> {
        let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip());
        let address = match peer {
            Some(ip) => client_address(ip, &parts.headers, &state.trusted_proxies).to_string(),
            None => "unknown".into(),
        };
        Ok(Client(ClientInfo { address }))
    }
}

/// The address a request came from, through the trusted proxies only: `X-Forwarded-For`
/// is read right to left while its hops are trusted, so a client cannot name itself.
pub fn client_address(peer: IpAddr, headers: &HeaderMap, trusted: &[IpNet]) -> IpAddr {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|n| n.contains(&ip.to_canonical()));
    if !is_trusted(&peer) {
        return peer.to_canonical();
    }
    let mut client = peer.to_canonical();
    let hops = headers.get_all("x-forwarded-for").iter().filter_map(|v| v.to_str().ok());
    let hops: Vec<&str> = hops.flat_map(|v| v.split(',')).map(str::trim).collect();
    for hop in hops.iter().rev() {
        match hop.parse::<IpAddr>() {
            Ok(ip) => {
                client = ip.to_canonical();
                if !is_trusted(&client) {
                    break;
                }
            }
            // A hop that is not an address ends what can be believed.
            Err(_) => break,
        }
    }
    client
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwarded_for_counts_only_through_trusted_proxies() {
        let trusted: Vec<IpNet> = vec!["10.0.0.0/8".parse().unwrap(), "::1/128".parse().unwrap()];
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let with = |xff: &str| {
            let mut h = HeaderMap::new();
            h.insert("x-forwarded-for", xff.parse().unwrap());
            h
        };
        // No proxy trusted, or an untrusted peer: the peer, whatever the header says.
        assert_eq!(client_address(ip("203.0.113.9"), &with("1.2.3.4"), &[]), ip("203.0.113.9"));
        assert_eq!(client_address(ip("203.0.113.9"), &with("1.2.3.4"), &trusted), ip("203.0.113.9"));
        // Through a trusted proxy: the hop it saw.
        assert_eq!(client_address(ip("10.1.2.3"), &with("198.51.100.7"), &trusted), ip("198.51.100.7"));
        // A client's own claim to the left of the real hop is ignored.
        assert_eq!(
            client_address(ip("10.1.2.3"), &with("1.1.1.1, 198.51.100.7, 10.9.9.9"), &trusted),
            ip("198.51.100.7")
        );
        // IPv4 behind an IPv6 listener, and garbage in the header.
        assert_eq!(client_address(ip("::ffff:10.0.0.1"), &with("198.51.100.7"), &trusted), ip("198.51.100.7"));
        assert_eq!(client_address(ip("::1"), &with("nonsense"), &trusted), ip("::1"));
        assert_eq!(client_address(ip("::1"), &HeaderMap::new(), &trusted), ip("::1"));
    }
}
