//! One WebSocket connection speaking STOMP 1.2: CONNECT with a bearer token, then
//! SUBSCRIBE to the caller's own destinations; events for that user become MESSAGE
//! frames. Heart-beats both ways; the session is re-checked every minute.

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::{SinkExt, StreamExt};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use tokio::sync::broadcast::error::RecvError;
use upstairs_domain::InstrumentId;
use upstairs_engine::Store;
use upstairs_engine::context::Actor;

use super::frame::{Frame, Item, Parser};
use super::messages::{Audience, Outgoing};
use crate::AppState;
use crate::error::ApiError;

/// Heart-beat interval we offer and want, in milliseconds.
const HEART_BEAT_MS: u64 = 10_000;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const REVALIDATE_EVERY: Duration = Duration::from_secs(60);
/// WebSocket pings the server sends whatever heart-beats were negotiated; a peer silent
/// (no pong, no frame) for [`SILENT_LIMIT`] is dropped.
const PING_EVERY: Duration = Duration::from_secs(30);
const SILENT_LIMIT: Duration = Duration::from_secs(75);
/// Subscriptions one session may hold.
pub const MAX_SUBSCRIPTIONS: usize = 64;
/// Sessions one user may have open on this node.
pub const MAX_SESSIONS_PER_USER: usize = 16;

/// Per-user destinations a client may subscribe to.
pub const USER_DESTINATIONS: &[&str] =
    &["/user/topic/notifications", "/user/topic/orders", "/user/topic/rfqs", "/user/topic/book-shares"];

/// `GET /ws`: checks the Origin, then upgrades with the STOMP sub-protocols.
pub async fn ws_handler<S: Store>(
    State(st): State<AppState<S>>,
    headers: HeaderMap,
    slot: Option<axum::Extension<crate::server::ConnectionSlot>>,
    ws: WebSocketUpgrade,
) -> Response {
    if !origin_allowed(&headers, &st.engine.config().public_url) {
        return ApiError::new(StatusCode::FORBIDDEN, "This origin may not open the realtime socket.").into_response();
    }
    // The socket keeps its connection's place under the server's connection ceiling.
    let held = slot.and_then(|s| s.take());
    ws.protocols(["v12.stomp", "v11.stomp", "v10.stomp"])
        .max_message_size(super::frame::MAX_FRAME)
        .max_frame_size(super::frame::MAX_FRAME)
        // Idle sessions are most of them: a 4 KiB read buffer, not tungstenite's 128 KiB
        // (frames up to MAX_FRAME still arrive, read in more chunks), and frames written
        // out as they come rather than gathered.
        .read_buffer_size(READ_BUFFER)
        .write_buffer_size(0)
        .on_upgrade(move |socket| async move {
            if let Err(e) = run(socket, st).await {
                tracing::debug!(error = %e, "stomp session ended");
            }
            drop(held);
        })
}

/// Bytes a socket reads at a time.
const READ_BUFFER: usize = 4 * 1024;

/// Browsers send an Origin: it must be our public URL or the host the request went
/// to. Non-browser clients send none.
fn origin_allowed(headers: &HeaderMap, public_url: &str) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) else {
        return true;
    };
    let origin = origin.trim_end_matches('/');
    if origin.eq_ignore_ascii_case(public_url.trim_end_matches('/')) {
        return true;
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    !host.is_empty()
        && (origin.eq_ignore_ascii_case(&format!("http://{host}"))
            || origin.eq_ignore_ascii_case(&format!("https://{host}")))
}

fn error_frame(message: &str, detail: &str) -> Frame {
    Frame::new("ERROR").header("message", message).header("content-type", "text/plain").body(detail.as_bytes().to_vec())
}

async fn send(sink: &mut futures::stream::SplitSink<WebSocket, Message>, f: &Frame) -> Result<(), String> {
    let bytes = f.encode();
    let msg = match String::from_utf8(bytes) {
        Ok(text) => Message::Text(text.into()),
        Err(e) => Message::Binary(e.into_bytes().into()),
    };
    sink.send(msg).await.map_err(|e| e.to_string())
}

fn bytes_of(msg: Message) -> Option<Vec<u8>> {
    match msg {
        Message::Text(t) => Some(t.as_bytes().to_vec()),
        Message::Binary(b) => Some(b.to_vec()),
        _ => None,
    }
}

fn token_of(f: &Frame) -> Option<String> {
    let v = f.get("Authorization").or_else(|| f.get("authorization"))?;
    let (scheme, token) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim().to_owned()).filter(|t| !t.is_empty())
}

/// Negotiated heart-beats: (we send every, we expect within), zero meaning never.
fn negotiate(client: Option<&str>) -> (Option<Duration>, Option<Duration>) {
    let (cx, cy) = client
        .and_then(|h| h.split_once(','))
        .and_then(|(a, b)| Some((a.trim().parse::<u64>().ok()?, b.trim().parse::<u64>().ok()?)))
        .unwrap_or((0, 0));
    let send = (cy > 0).then(|| Duration::from_millis(cy.max(HEART_BEAT_MS)));
    let recv = (cx > 0).then(|| Duration::from_millis(cx.max(HEART_BEAT_MS)));
    (send, recv)
}

async fn run<S: Store>(socket: WebSocket, st: AppState<S>) -> Result<(), String> {
    let (mut sink, mut stream) = socket.split();
    let mut parser = Parser::default();

    // 1. CONNECT (or STOMP) with a valid bearer token, within the deadline.
    let deadline = tokio::time::Instant::now() + CONNECT_TIMEOUT;
    let connect = loop {
        let msg = match tokio::time::timeout_at(deadline, stream.next()).await {
            Ok(Some(Ok(m))) => m,
            Ok(_) => return Ok(()),
            Err(_) => {
                send(&mut sink, &error_frame("connect timeout", "Send CONNECT first.")).await?;
                return Ok(());
            }
        };
        let Some(bytes) = bytes_of(msg) else { continue };
        let items = match parser.push(&bytes) {
            Ok(i) => i,
            Err(e) => {
                send(&mut sink, &error_frame("malformed frame", &e.to_string())).await?;
                return Ok(());
            }
        };
        if let Some(f) = items.into_iter().find_map(|i| match i {
            Item::Frame(f) => Some(f),
            Item::HeartBeat => None,
        }) {
            break f;
        }
    };
    if connect.command != "CONNECT" && connect.command != "STOMP" {
        send(&mut sink, &error_frame("not connected", "The first frame must be CONNECT.")).await?;
        return Ok(());
    }
    let Some(token) = token_of(&connect) else {
        send(&mut sink, &error_frame("unauthorized", "Send Authorization: Bearer <token> in CONNECT.")).await?;
        return Ok(());
    };
    let mut actor: Actor = match st.engine.accounts.authenticate(&token).await {
        Ok(a) => a,
        Err(_) => {
            send(&mut sink, &error_frame("unauthorized", "The session is not valid. Sign in again.")).await?;
            return Ok(());
        }
    };
    let Some(_slot) = st.realtime.open_session(actor.user.user_id, MAX_SESSIONS_PER_USER) else {
        let detail = format!("At most {MAX_SESSIONS_PER_USER} realtime sessions per user. Close another tab.");
        send(&mut sink, &error_frame("too many sessions", &detail)).await?;
        return Ok(());
    };
    let (send_every, expect_within) = negotiate(connect.get("heart-beat"));
    let mut events = st.realtime.subscribe();
    send(
        &mut sink,
        &Frame::new("CONNECTED")
            .header("version", "1.2")
            .header("heart-beat", &format!("{HEART_BEAT_MS},{HEART_BEAT_MS}"))
            .header("server", "upstairs")
            .header("user-name", &actor.user.email),
    )
    .await?;

    // 2. The session.
    let mut subs: HashMap<String, String> = HashMap::new();
    let mut message_seq: u64 = 0;
    let mut last_seen = Instant::now();
    let mut hb = tokio::time::interval(send_every.unwrap_or(Duration::from_secs(3600)));
    hb.tick().await;
    let mut check = tokio::time::interval(expect_within.map(|d| d / 2).unwrap_or(Duration::from_secs(3600)));
    check.tick().await;
    let mut revalidate = tokio::time::interval(REVALIDATE_EVERY);
    revalidate.tick().await;
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.tick().await;

    loop {
        tokio::select! {
            msg = stream.next() => {
                let Some(Ok(msg)) = msg else { return Ok(()) };
                if matches!(msg, Message::Close(_)) { return Ok(()) }
                last_seen = Instant::now();
                let Some(bytes) = bytes_of(msg) else { continue };
                let items = match parser.push(&bytes) {
                    Ok(i) => i,
                    Err(e) => {
                        send(&mut sink, &error_frame("malformed frame", &e.to_string())).await?;
                        return Ok(());
                    }
                };
                for item in items {
                    let Item::Frame(f) = item else { continue };
                    let reply = match topic_instrument(&f) {
                        // A book topic: only for instruments the caller may see.
                        Some(Ok(id)) if st.engine.reference.instrument(&actor, id).await.is_err() => {
                            Reply::Error("unknown destination", "No such instrument.".into())
                        }
                        Some(Err(dest)) => Reply::Error("unknown destination", format!("No such destination: {dest}")),
                        _ => handle(&f, &mut subs),
                    };
                    match reply {
                        Reply::Ok => {}
                        Reply::Error(m, d) => {
                            let mut e = error_frame(m, &d);
                            if let Some(r) = f.get("receipt") { e = e.header("receipt-id", r) }
                            send(&mut sink, &e).await?;
                            return Ok(());
                        }
                        Reply::Disconnect => {
                            if let Some(r) = f.get("receipt") {
                                send(&mut sink, &Frame::new("RECEIPT").header("receipt-id", r)).await?;
                            }
                            let _ = sink.close().await;
                            return Ok(());
                        }
                    }
                    if let Some(r) = f.get("receipt") {
                        send(&mut sink, &Frame::new("RECEIPT").header("receipt-id", r)).await?;
                    }
                }
            }
            ev = events.recv() => {
                match ev {
                    // The user changed (roles, company, active) or sessions ended: read them again.
                    Ok(Outgoing::SessionsEnded(user_id)) if user_id == actor.user.user_id => {
                        match st.engine.accounts.authenticate(&token).await {
                            Ok(now) => actor = now,
                            Err(_) => {
                                send(&mut sink, &error_frame("session ended", "The session has ended. Sign in again.")).await?;
                                return Ok(());
                            }
                        }
                    }
                    Ok(event) => {
                        for frame in messages_for(&actor, &subs, &event, &mut message_seq) {
                            send(&mut sink, &frame).await?;
                        }
                    }
                    Err(RecvError::Lagged(n)) => tracing::warn!(missed = n, "stomp session lagged; client will poll"),
                    Err(RecvError::Closed) => return Ok(()),
                }
            }
            _ = hb.tick(), if send_every.is_some() => {
                sink.send(Message::Text("\n".into())).await.map_err(|e| e.to_string())?;
            }
            _ = check.tick(), if expect_within.is_some() => {
                if let Some(limit) = expect_within.filter(|l| last_seen.elapsed() > *l * 2) {
                    tracing::debug!(?limit, "stomp client missed heart-beats; closing");
                    return Ok(());
                }
            }
            _ = revalidate.tick() => {
                match st.engine.accounts.authenticate(&token).await {
                    Ok(now) => actor = now,
                    Err(_) => {
                        send(&mut sink, &error_frame("session ended", "The session has ended. Sign in again.")).await?;
                        return Ok(());
                    }
                }
            }
            _ = ping.tick() => {
                if last_seen.elapsed() > SILENT_LIMIT {
                    tracing::debug!("stomp peer silent; closing");
                    return Ok(());
                }
                sink.send(Message::Ping(Vec::new().into())).await.map_err(|e| e.to_string())?;
            }
        }
    }
}

enum Reply {
    Ok,
    Error(&'static str, String),
    Disconnect,
}

/// For a SUBSCRIBE to `/topic/instruments/{id}/book`: the instrument, or the bad destination.
fn topic_instrument(f: &Frame) -> Option<Result<InstrumentId, String>> {
    let dest = f.get("destination").filter(|_| f.command == "SUBSCRIBE")?;
    let rest = dest.strip_prefix("/topic/")?;
    Some(
        rest.strip_prefix("instruments/")
            .and_then(|r| r.strip_suffix("/book"))
            .and_then(|id| id.parse::<InstrumentId>().ok())
            .ok_or_else(|| dest.to_owned()),
    )
}

fn handle(f: &Frame, subs: &mut HashMap<String, String>) -> Reply {
    match f.command.as_str() {
        "SUBSCRIBE" => {
            let (Some(id), Some(dest)) = (f.get("id"), f.get("destination")) else {
                return Reply::Error("bad subscribe", "SUBSCRIBE needs id and destination headers.".into());
            };
            // Book topics were checked by the caller.
            if !USER_DESTINATIONS.contains(&dest) && !dest.starts_with("/topic/instruments/") {
                return Reply::Error("unknown destination", format!("No such destination: {dest}"));
            }
            if subs.len() >= MAX_SUBSCRIPTIONS && !subs.contains_key(id) {
                return Reply::Error(
                    "too many subscriptions",
                    format!("At most {MAX_SUBSCRIPTIONS} subscriptions per session."),
                );
            }
            subs.insert(id.to_owned(), dest.to_owned());
            Reply::Ok
        }
        "UNSUBSCRIBE" => {
            let Some(id) = f.get("id") else {
                return Reply::Error("bad unsubscribe", "UNSUBSCRIBE needs an id header.".into());
            };
            subs.remove(id);
            Reply::Ok
        }
        "DISCONNECT" => Reply::Disconnect,
        "ACK" | "NACK" | "BEGIN" | "COMMIT" | "ABORT" => Reply::Ok,
        "SEND" => Reply::Error("read only", "Clients cannot SEND on this server.".into()),
        "CONNECT" | "STOMP" => Reply::Error("already connected", "Already connected.".into()),
        _ => Reply::Error("unknown command", format!("Unknown command {}", f.command)),
    }
}

/// MESSAGE frames for the subscriptions that `event` reaches on this connection.
fn messages_for(actor: &Actor, subs: &HashMap<String, String>, out: &Outgoing, seq: &mut u64) -> Vec<Frame> {
    let (dest, body) = match out {
        Outgoing::Message { audience: Audience::User(user_id), destination, body }
            if *user_id == actor.user.user_id =>
        {
            (&**destination, body)
        }
        Outgoing::Message { audience: Audience::Company(company_id), destination, body }
            if *company_id == actor.user.company_id =>
        {
            (&**destination, body)
        }
        Outgoing::Message { audience: Audience::Subscribers, destination, body } => (&**destination, body),
        _ => return vec![],
    };
    subs.iter()
        .filter(|(_, d)| d.as_str() == dest)
        .map(|(id, d)| {
            *seq += 1;
            Frame::new("MESSAGE")
                .header("subscription", id)
                .header("message-id", &seq.to_string())
                .header("destination", d)
                .header("content-type", "application/json")
                .body(body.to_vec())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn origin_rules() {
        let mut h = HeaderMap::new();
        assert!(origin_allowed(&h, "http://localhost:8080"), "no Origin: not a browser");
        h.insert(header::ORIGIN, HeaderValue::from_static("http://localhost:8080"));
        assert!(origin_allowed(&h, "http://localhost:8080"));
        h.insert(header::ORIGIN, HeaderValue::from_static("https://evil.example"));
        assert!(!origin_allowed(&h, "http://localhost:8080"));
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:4000"));
        h.insert(header::ORIGIN, HeaderValue::from_static("http://127.0.0.1:4000"));
        assert!(origin_allowed(&h, "http://localhost:8080"), "same origin as the request");
    }

    #[test]
    fn heart_beat_negotiation() {
        assert_eq!(negotiate(None), (None, None));
        assert_eq!(negotiate(Some("0,0")), (None, None));
        assert_eq!(
            negotiate(Some("4000,20000")),
            (Some(Duration::from_millis(20_000)), Some(Duration::from_millis(10_000)))
        );
    }
}
