//! Extractors that turn every malformed request into a problem with a clear `detail`.

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use ipnet::IpNet;
use serde::de::DeserializeOwned;
use std::net::{IpAddr, SocketAddr};
use upstairs_domain::FieldError;
use upstairs_engine::Store;
use upstairs_engine::context::{Actor, ClientInfo};

use crate::AppState;
use crate::error::ApiError;

/// A JSON body; syntax, type, enum and size errors answer 4xx with the reason, and so does
/// any text in it longer than [`MAX_TEXT`] characters.
pub struct ApiJson<T>(pub T);

/// The longest text any field of a request takes (names, instructions, descriptions …).
pub const MAX_TEXT: usize = 2000;
/// The longest query string accepted.
pub const MAX_QUERY: usize = 4096;

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let (parts, body) = req.into_parts();
        let bytes =
            axum::body::Bytes::from_request(Request::from_parts(parts.clone(), body), state).await.map_err(|_| {
                ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "The request body is too large or could not be read.")
            })?;
        if let Some(field) = overlong_text(&bytes, MAX_TEXT) {
            let name = if field.is_empty() { "text".to_owned() } else { field };
            return Err(ApiError {
                errors: vec![FieldError::new(&name, format!("Must be at most {MAX_TEXT} characters"))],
                ..ApiError::bad_request(format!("The field {name} is longer than {MAX_TEXT} characters."))
            });
        }
        match axum::Json::<T>::from_request(Request::from_parts(parts, axum::body::Body::from(bytes)), state).await {
            Ok(axum::Json(v)) => Ok(ApiJson(v)),
            Err(r) => Err(json_rejection(r)),
        }
    }
}

/// The key of the first string in a JSON text longer than `max` characters (`\\"` counts
/// as one, `\\u00e9` as five), or `None`. One pass over the bytes; malformed JSON is left to the parser.
pub fn overlong_text(json: &[u8], max: usize) -> Option<String> {
    let mut key: &[u8] = b"";
    let mut i = 0;
    while i < json.len() {
        if json[i] != b'"' {
            i += 1;
            continue;
        }
        let start = i + 1;
        let (mut j, mut chars) = (start, 0usize);
        while j < json.len() && json[j] != b'"' {
            if json[j] == b'\\' {
                j += 1;
            }
            // UTF-8 continuation bytes do not start a character.
            if json.get(j).is_some_and(|b| b & 0xC0 != 0x80) {
                chars += 1;
            }
            j += 1;
        }
        let text = &json[start..j.min(json.len())];
        let rest = json.get(j + 1..).unwrap_or_default();
        let is_key = rest.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b':');
        if is_key {
            key = text;
        } else if chars > max {
            return Some(String::from_utf8_lossy(&key[..key.len().min(64)]).into_owned());
        }
        i = j + 1;
    }
    None
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
        if parts.uri.query().is_some_and(|q| q.len() > MAX_QUERY) {
            return Err(ApiError::bad_request(format!("The query is longer than {MAX_QUERY} characters.")));
        }
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
    fn overlong_text_names_its_field() {
        assert_eq!(overlong_text(br#"{"name": "abcd", "n": 12345}"#, 4), None);
        assert_eq!(overlong_text(br#"{"name": "abcde"}"#, 4).as_deref(), Some("name"));
        // Escapes count as one character, multi-byte characters as one.
        assert_eq!(overlong_text(br#"{"a": "\"\"\"\""}"#, 4), None);
        assert_eq!(overlong_text("{\"a\": \"\u{e9}\u{e9}\u{e9}\u{e9}\"}".as_bytes(), 4), None);
        assert_eq!(overlong_text("{\"a\": \"\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\"}".as_bytes(), 4).as_deref(), Some("a"));
        // Keys themselves, nested values and arrays.
        assert_eq!(overlong_text(br#"{"xxxxxxxx": 1}"#, 4), None);
        assert_eq!(
            overlong_text(br#"{"ui": [{"key": "k", "value": {"deep": ["ok", "too long"]}}]}"#, 4).as_deref(),
            Some("deep")
        );
        // Unterminated: left to the parser.
        assert_eq!(overlong_text(br#"{"a": "abc"#, 4), None);
    }

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
