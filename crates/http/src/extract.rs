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
/// any text in it longer than [`MAX_TEXT`] characters or holding a control character
/// (400 naming the field), and any key the body type does not know (400 naming it).
pub struct ApiJson<T>(pub T);

/// The longest text any field of a request takes (names, instructions, descriptions …).
pub const MAX_TEXT: usize = 2000;
/// The longest query string accepted.
pub const MAX_QUERY: usize = 4096;
/// The multi-line free-text fields: their text may hold line breaks and tabs (`\n`, `\r`,
/// `\t`), no other control character. Every other string of a body is one line.
pub const MULTI_LINE_FIELDS: [&str; 2] = ["broker_instructions", "description"];

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let (parts, body) = req.into_parts();
        let bytes =
            axum::body::Bytes::from_request(Request::from_parts(parts.clone(), body), state).await.map_err(|_| {
                ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "The request body is too large or could not be read.")
            })?;
        if let Some((field, problem)) = text_problem(&bytes, MAX_TEXT) {
            let name = if field.is_empty() { "text".to_owned() } else { field };
            return Err(problem.error(&name));
        }
        match axum::Json::<T>::from_request(Request::from_parts(parts, axum::body::Body::from(bytes)), state).await {
            Ok(axum::Json(v)) => Ok(ApiJson(v)),
            Err(r) => Err(json_rejection(r)),
        }
    }
}

/// What is wrong with a string of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextProblem {
    /// Longer than [`MAX_TEXT`] characters.
    TooLong,
    /// Holds a control character (Unicode category Cc: U+0000 to U+001F, U+007F to U+009F),
    /// other than a line break or tab in one of the [`MULTI_LINE_FIELDS`].
    Control,
}

impl TextProblem {
    /// The 400 naming `field`.
    pub fn error(self, field: &str) -> ApiError {
        let (message, detail) = match self {
            TextProblem::TooLong => (
                format!("Must be at most {MAX_TEXT} characters"),
                format!("The field {field} is longer than {MAX_TEXT} characters."),
            ),
            TextProblem::Control => (
                "Must not contain control characters".to_owned(),
                format!("The field {field} contains a control character."),
            ),
        };
        ApiError { errors: vec![FieldError::new(field, message)], ..ApiError::bad_request(detail) }
    }
}

/// Whether `c` is a control character (Unicode category Cc).
fn is_control(c: u32) -> bool {
    c < 0x20 || (0x7F..=0x9F).contains(&c)
}

/// The first string of a JSON text that is too long (more than `max` characters; `\\"`
/// counts as one, `\\u00e9` as five) or holds a control character, with the key it belongs
/// to (the innermost; a key with a control character names itself), or `None`. Control
/// characters are found raw, escaped (`\\u0000`, `\\b`) or as UTF-8 (U+0080 to U+009F);
/// the values of [`MULTI_LINE_FIELDS`] may hold `\\n`, `\\r` and `\\t`. One pass over the
/// bytes; malformed JSON is left to the parser.
pub fn text_problem(json: &[u8], max: usize) -> Option<(String, TextProblem)> {
    let name = |text: &[u8]| {
        let s = String::from_utf8_lossy(&text[..text.len().min(64)]).into_owned();
        s.chars().map(|c| if c.is_control() { char::REPLACEMENT_CHARACTER } else { c }).collect::<String>()
    };
    let mut key: &[u8] = b"";
    let mut i = 0;
    while i < json.len() {
        if json[i] != b'"' {
            i += 1;
            continue;
        }
        let start = i + 1;
        let (mut j, mut chars) = (start, 0usize);
        // Control characters other than a line break or tab, and those three.
        let (mut control, mut line_break) = (false, false);
        while j < json.len() && json[j] != b'"' {
            let b = json[j];
            if b == b'\\' {
                j += 1;
                match json.get(j) {
                    Some(b'n' | b'r' | b't') => line_break = true,
                    Some(b'b' | b'f') => control = true,
                    Some(b'u') => {
                        let hex = json.get(j + 1..j + 5).and_then(|h| std::str::from_utf8(h).ok());
                        match hex.and_then(|h| u32::from_str_radix(h, 16).ok()) {
                            Some(0x0A | 0x0D | 0x09) => line_break = true,
                            Some(c) if is_control(c) => control = true,
                            _ => {}
                        }
                    }
                    _ => {}
                }
            } else if b == b'\n' || b == b'\r' || b == b'\t' {
                line_break = true;
            } else if (b < 0x80 && is_control(u32::from(b)))
                || (b == 0xC2 && json.get(j + 1).is_some_and(|n| (0x80..=0x9F).contains(n)))
            {
                // Raw: ASCII, or U+0080 to U+009F in UTF-8.
                control = true;
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
            if control || line_break {
                return Some((name(text), TextProblem::Control));
            }
            key = text;
        } else {
            let multi_line = MULTI_LINE_FIELDS.iter().any(|f| f.as_bytes() == key);
            if control || (line_break && !multi_line) {
                return Some((name(key), TextProblem::Control));
            }
            if chars > max {
                return Some((name(key), TextProblem::TooLong));
            }
        }
        i = j + 1;
    }
    None
}

/// A field with a control character among `pairs` (a query's or a path's), or `None`.
fn control_in<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Option<String> {
    pairs
        .into_iter()
        .find(|(k, v)| k.chars().chain(v.chars()).any(char::is_control))
        .map(|(k, _)| k.chars().filter(|c| !c.is_control()).take(64).collect())
}

/// Serde's "unknown field `x`, expected …" (after a path and `: `, if any): the field `x`.
fn unknown_field(message: &str) -> Option<&str> {
    const START: &str = "unknown field `";
    let at = message.match_indices(START).map(|(i, _)| i).find(|&i| i == 0 || message[..i].ends_with(": "))?;
    let rest = &message[at + START.len()..];
    Some(&rest[..rest.find('`')?])
}

/// A body naming a key its type does not know: 400 naming it.
pub fn unknown_field_error(message: &str) -> Option<ApiError> {
    let field = unknown_field(message)?;
    let name: String = field.chars().filter(|c| !c.is_control()).take(64).collect();
    Some(ApiError {
        errors: vec![FieldError::new(&name, "Unknown field")],
        ..ApiError::bad_request(format!("The request body has an unknown field: {name}."))
    })
}

fn json_rejection(r: JsonRejection) -> ApiError {
    let status = r.status();
    let detail = match &r {
        JsonRejection::JsonDataError(e) => {
            if let Some(e) = unknown_field_error(&e.body_text()) {
                return e;
            }
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

/// Path parameters; a malformed id, or text with a control character, answers 400.
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        if let Ok(raw) = axum::extract::RawPathParams::from_request_parts(parts, state).await
            && let Some(field) = control_in(&raw)
        {
            return Err(TextProblem::Control.error(&field));
        }
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| ApiPath(p.0))
            .map_err(|e: PathRejection| ApiError::bad_request(format!("Invalid path: {}", e.body_text())))
    }
}

/// Query parameters; bad values, and text with a control character, answer 400.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        if parts.uri.query().is_some_and(|q| q.len() > MAX_QUERY) {
            return Err(ApiError::bad_request(format!("The query is longer than {MAX_QUERY} characters.")));
        }
        let pairs = axum::extract::Query::<Vec<(String, String)>>::try_from_uri(&parts.uri).map(|q| q.0);
        if let Some(field) = pairs.ok().and_then(|p| control_in(p.iter().map(|(k, v)| (k.as_str(), v.as_str())))) {
            return Err(TextProblem::Control.error(&field));
        }
        axum::extract::Query::<T>::from_request_parts(parts, state).await.map(|q| ApiQuery(q.0)).map_err(
            |e: QueryRejection| {
                let text = e.body_text();
                match unknown_field(&text) {
                    // A parameter the call does not take: 400 naming it (issue 26).
                    Some(field) => {
                        let name: String = field.chars().filter(|c| !c.is_control()).take(64).collect();
                        ApiError {
                            errors: vec![FieldError::new(&name, "Unknown parameter")],
                            ..ApiError::bad_request(format!("The query has an unknown parameter: {name}."))
                        }
                    }
                    None => ApiError::bad_request(format!("Invalid query: {text}")),
                }
            },
        )
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
        Ok(Auth(state.engine.accounts.authenticate(token).await?))
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

    fn overlong_text(json: &[u8], max: usize) -> Option<String> {
        text_problem(json, max).map(|(field, problem)| {
            assert_eq!(problem, TextProblem::TooLong, "{field}");
            field
        })
    }

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
    fn control_characters_name_their_field() {
        let control = |json: &str| text_problem(json.as_bytes(), MAX_TEXT);
        let found = |field: &str| Some((field.to_owned(), TextProblem::Control));
        // Escaped, raw (U+007F, U+0080 to U+009F) or as a short escape.
        assert_eq!(control(r#"{"name": "a\u0000b"}"#), found("name"));
        assert_eq!(control(r#"{"name": "\u001B[31m"}"#), found("name"));
        assert_eq!(control(r#"{"n": 1, "email": "a\bb"}"#), found("email"));
        assert_eq!(control("{\"name\": \"a\u{7f}\"}"), found("name"));
        assert_eq!(control("{\"name\": \"a\u{85}\"}"), found("name"));
        assert_eq!(control(r#"{"name": "a\u009f"}"#), found("name"));
        // Line breaks and tabs: only in the multi-line fields.
        assert_eq!(control(r#"{"name": "a\nb"}"#), found("name"));
        assert_eq!(control(r#"{"name": "a\u0009b"}"#), found("name"));
        assert_eq!(control(r#"{"description": "a\nb\r\n\tc\u000a"}"#), None);
        assert_eq!(control(r#"{"broker_instructions": "line 1\nline 2"}"#), None);
        assert_eq!(control(r#"{"description": "a\u0000"}"#), found("description"));
        // Nested values, arrays, keys.
        assert_eq!(control(r#"{"filter": {"ids": ["ok", "\u0007"]}}"#), found("ids"));
        assert_eq!(control(r#"{"ui_metadata": [{"key": "k", "value": {"a\u0000": 1}}]}"#), found("a\\u0000"));
        // Neither escaped backslashes nor other characters nor multi-byte text are control characters.
        assert_eq!(control(r#"{"name": "C:\\user\\new", "t": "\u00e9\u20ac\"x"}"#), None);
        assert_eq!(control("{\"name\": \"\u{20ac}\u{a0}\u{e9}\u{2028}\"}"), None);
    }

    #[test]
    fn unknown_fields_are_named() {
        let e =
            unknown_field_error("unknown field `colour`, expected one of `name`, `term` at line 1 column 9").unwrap();
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
        assert_eq!(e.errors, vec![FieldError::new("colour", "Unknown field")]);
        assert!(unknown_field_error("filter_criteria.x: unknown field `x`, there are no fields").is_some());
        assert!(unknown_field_error("missing field `name` at line 1 column 2").is_none());
        assert!(unknown_field_error("side: unknown variant `unknown field `x``, expected `BUY`").is_none());
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
