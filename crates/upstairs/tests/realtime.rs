#![allow(clippy::unwrap_used)]
//! STOMP over WebSocket with a real client (stomp.py): per-user delivery, bad tokens.

mod support;

use chrono::Utc;
use rust_decimal::Decimal;
use serde_json::json;
use std::time::Duration;
use support::*;
use upstairs_domain::match_request::MatchRequestState;
use upstairs_domain::notification::{NotificationType, Party};
use upstairs_domain::{InstrumentId, MatchRequestId, NotificationId, UserId};
use upstairs_engine::model::{Instrument, Notification, Subject};
use upstairs_engine::{Event, EventPublisher};

on_both_backends!(
    messages_reach_only_their_user,
    bad_token_gets_an_error_frame,
    ended_sessions_close_their_sockets_at_once,
    sessions_and_subscriptions_are_bounded
);

const WAIT: Duration = Duration::from_secs(10);

/// A notification of `user` as the engine publishes it: it carries its row, so nothing is
/// read back for its frame. Returns the event and the notification's id.
fn notice_of(user: UserId) -> (Event, NotificationId) {
    let now = Utc::now();
    let id = NotificationId::new();
    let notification = Notification {
        notification_id: id,
        user_id: user,
        notification_type: NotificationType::MatchRequestReceived,
        status: MatchRequestState::Pending,
        instrument_id: InstrumentId::new(),
        subject: Subject::MatchRequest(MatchRequestId::new()),
        role: Party::Responder,
        terms: None,
        read: false,
        archived: false,
        created_at: now,
        expired_at: now,
        updated_at: now,
    };
    (Event::NotificationChanged { user_id: user, notification }, id)
}

fn instrument() -> Instrument {
    Instrument {
        instrument_id: InstrumentId::new(),
        name: "Realtime test".into(),
        term: "Dec26".into(),
        description: String::new(),
        min_quantity: 1,
        tick_size: Decimal::ONE,
        exchange_tick_size: None,
        exchange_id: "X".into(),
        exchange: String::new(),
        exchange_iso_code: String::new(),
        exchange_instrument_id: None,
        bbg_code: None,
        country: String::new(),
        currency: "EUR".into(),
        min_tick_price: Decimal::ONE,
        max_tick_price: Decimal::TEN,
        active: true,
        is_sandbox: false,
        reversed_spread: false,
        band_seen_at: Utc::now(),
        prices_stale_after: None,
        prices_stale: false,
        created_at: Utc::now(),
        updated_at: Utc::now(),
    }
}

async fn messages_reach_only_their_user(b: Backend) {
    let app = TestApp::spawn(b).await;
    let admin = app.admin_token().await;
    let (_, me) = app.get("/api/users/me", Some(&admin)).await;
    let me_id: UserId = me["user_id"].as_str().unwrap().parse().unwrap();
    let other = app.create_user(&admin, "other@halyard.test").await;
    let other_id: UserId = other["user_id"].as_str().unwrap().parse().unwrap();

    let mut peer = Peer::spawn(
        "stomp_client.py",
        &["127.0.0.1".into(), app.port().to_string(), admin.clone(), "/user/topic/notifications".into()],
    );
    assert_eq!(peer.next_json(WAIT).await, Some(json!({"event": "connected", "version": "1.2"})));
    assert_eq!(peer.next_json(WAIT).await, Some(json!({"event": "subscribed"})));

    let events = app.running.as_ref().unwrap().events.clone();
    // Another user's event, an event on another destination, then ours: only ours arrives.
    events.publish(notice_of(other_id).0);
    events.publish(Event::instrument_changed(&instrument()));
    let (mine, id) = notice_of(me_id);
    events.publish(mine);
    let got = peer.next_json(WAIT).await.expect("a message");
    assert_eq!(got["event"], "message");
    assert_eq!(got["destination"], "/user/topic/notifications");
    assert_eq!(got["subscription"], "sub-0");
    assert_eq!((&got["body"]["seq"], &got["body"]["notification_id"]), (&json!(1), &json!(id)), "{got}");
    assert_eq!(got["body"]["type"], "MATCH_REQUEST_RECEIVED");

    // A second message still flows while the session lives.
    events.publish(notice_of(me_id).0);
    assert_eq!(peer.next_json(WAIT).await.unwrap()["body"]["seq"], 2);
    drop(peer);
    app.stop().await;
}

async fn bad_token_gets_an_error_frame(b: Backend) {
    let app = TestApp::spawn(b).await;
    let mut peer = Peer::spawn(
        "stomp_client.py",
        &["127.0.0.1".into(), app.port().to_string(), "not-a-token".into(), "/user/topic/notifications".into()],
    );
    let mut seen = Vec::new();
    while let Some(v) = peer.next_json(WAIT).await {
        seen.push(v.clone());
        if v["event"] == "connect_failed" {
            break;
        }
    }
    let error = seen.iter().find(|v| v["event"] == "error").unwrap_or_else(|| panic!("no ERROR frame in {seen:?}"));
    assert_eq!(error["message"], "unauthorized");
    assert!(!seen.iter().any(|v| v["event"] == "connected"), "{seen:?}");
    drop(peer);
    app.stop().await;
}

/// Connects a STOMP client for `token` and waits until it is subscribed.
async fn subscribed_peer(app: &TestApp, token: &str) -> Peer {
    let mut peer = Peer::spawn(
        "stomp_client.py",
        &["127.0.0.1".into(), app.port().to_string(), token.into(), "/user/topic/notifications".into()],
    );
    assert_eq!(peer.next_json(WAIT).await.unwrap()["event"], "connected");
    assert_eq!(peer.next_json(WAIT).await, Some(json!({"event": "subscribed"})));
    peer
}

async fn expect_session_ended(peer: &mut Peer) {
    let got = peer.next_json(WAIT).await.expect("an ERROR frame well before the 60 s re-validation");
    assert_eq!(got["event"], "error", "{got}");
    assert_eq!(got["message"], "session ended");
}

/// Logout and deactivation end the socket of that session at once, not at the next
/// 60 s re-validation; other users' sockets stay up.
async fn ended_sessions_close_their_sockets_at_once(b: Backend) {
    const PW: &str = "Realtime-Pass-1";
    let app = TestApp::spawn(b).await;
    let admin = app.admin_token().await;
    for email in ["leaver@halyard.test", "deactivated@halyard.test", "stays@halyard.test"] {
        upstairs::app::bootstrap_user(&app.database_url, email, PW, &["trader"], "Halyard").await.unwrap();
    }
    let leaver = app.login_remembered("leaver@halyard.test", PW).await;
    let deactivated = app.login_remembered("deactivated@halyard.test", PW).await;
    let stays = app.login_remembered("stays@halyard.test", PW).await;
    let mut leaver_peer = subscribed_peer(&app, &leaver).await;
    let mut deactivated_peer = subscribed_peer(&app, &deactivated).await;
    let mut stays_peer = subscribed_peer(&app, &stays).await;

    let (s, _) = app.call(reqwest::Method::DELETE, "/api/auth/session", Some(&leaver), None).await;
    assert_eq!(s, reqwest::StatusCode::NO_CONTENT);
    expect_session_ended(&mut leaver_peer).await;

    let (_, user) = app.get("/api/users/me", Some(&deactivated)).await;
    let (s, v) = app
        .patch(&format!("/api/users/{}", user["user_id"].as_str().unwrap()), Some(&admin), json!({"active": false}))
        .await;
    assert_eq!(s, reqwest::StatusCode::OK, "{v}");
    expect_session_ended(&mut deactivated_peer).await;

    // The third user's socket still delivers.
    let (_, me) = app.get("/api/users/me", Some(&stays)).await;
    let stays_id: UserId = me["user_id"].as_str().unwrap().parse().unwrap();
    let events = app.running.as_ref().unwrap().events.clone();
    events.publish(notice_of(stays_id).0);
    let got = stays_peer.next_json(WAIT).await.unwrap();
    assert_eq!(
        (got["event"].as_str(), got["body"]["type"].as_str()),
        (Some("message"), Some("MATCH_REQUEST_RECEIVED")),
        "{got}"
    );
    drop((leaver_peer, deactivated_peer, stays_peer));
    app.stop().await;
}

/// A user opens at most 16 sessions on a node and a session holds at most 64
/// subscriptions; one more of either is an ERROR frame. Closing a session frees its slot.
async fn sessions_and_subscriptions_are_bounded(b: Backend) {
    use upstairs_http::stomp::session::{MAX_SESSIONS_PER_USER, MAX_SUBSCRIPTIONS};
    const PW: &str = "Realtime-Pass-1";
    let app = TestApp::spawn(b).await;
    upstairs::app::bootstrap_user(&app.database_url, "many@halyard.test", PW, &["trader"], "Halyard").await.unwrap();
    let token = app.login_remembered("many@halyard.test", PW).await;

    let spawn = |subscriptions: usize| {
        Peer::spawn(
            "stomp_client.py",
            &[
                "127.0.0.1".into(),
                app.port().to_string(),
                token.clone(),
                "/user/topic/orders".into(),
                subscriptions.to_string(),
            ],
        )
    };
    let mut over = spawn(MAX_SUBSCRIPTIONS + 1);
    assert_eq!(over.next_json(WAIT).await.unwrap()["event"], "connected");
    let got = over.next_json(WAIT).await.unwrap();
    assert_eq!(
        (got["event"].as_str(), got["message"].as_str()),
        (Some("error"), Some("too many subscriptions")),
        "{got}"
    );
    drop(over);

    let mut open = Vec::new();
    for _ in 0..MAX_SESSIONS_PER_USER {
        let mut p = spawn(MAX_SUBSCRIPTIONS);
        assert_eq!(p.next_json(WAIT).await.unwrap()["event"], "connected");
        assert_eq!(p.next_json(WAIT).await, Some(json!({"event": "subscribed"})));
        open.push(p);
    }
    let mut one_more = spawn(1);
    let mut seen = Vec::new();
    while let Some(v) = one_more.next_json(WAIT).await {
        seen.push(v.clone());
        if v["event"] == "connect_failed" || v["event"] == "connected" {
            break;
        }
    }
    let error = seen.iter().find(|v| v["event"] == "error").unwrap_or_else(|| panic!("no ERROR frame in {seen:?}"));
    assert_eq!(error["message"], "too many sessions");
    drop(one_more);
    // One closes; a new one gets in (the slot is freed when the socket ends).
    drop(open.pop());
    let mut again = None;
    for _ in 0..50 {
        let mut p = spawn(1);
        if p.next_json(WAIT).await.unwrap()["event"] == "connected" {
            again = Some(p);
            break;
        }
        drop(p);
    }
    assert!(again.is_some(), "a freed slot is usable again");
    drop(open);
    app.stop().await;
}
