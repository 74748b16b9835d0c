#![allow(clippy::unwrap_used)]
//! STOMP over WebSocket with a real client (stomp.py): per-user delivery, bad tokens.

mod support;

use serde_json::json;
use std::time::Duration;
use support::*;
use upstairs_domain::UserId;
use upstairs_engine::{Event, EventPublisher};

on_both_backends!(messages_reach_only_their_user, bad_token_gets_an_error_frame);

const WAIT: Duration = Duration::from_secs(10);

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
    events.publish(Event::to_user(other_id, "/user/topic/notifications", json!({"notification_id": "for-other"})));
    events.publish(Event::to_user(me_id, "/user/topic/orders", json!({"order_id": "not-subscribed"})));
    events.publish(Event::to_user(
        me_id,
        "/user/topic/notifications",
        json!({"notification_id": "n-1", "type": "MATCH_REQUEST_RECEIVED"}),
    ));
    let got = peer.next_json(WAIT).await.expect("a message");
    assert_eq!(got["event"], "message");
    assert_eq!(got["destination"], "/user/topic/notifications");
    assert_eq!(got["subscription"], "sub-0");
    assert_eq!(got["body"], json!({"notification_id": "n-1", "type": "MATCH_REQUEST_RECEIVED"}));

    // Logging out ends what the socket may receive too (checked when it re-validates);
    // here: a second message still flows while the session lives.
    events.publish(Event::to_user(me_id, "/user/topic/notifications", json!({"notification_id": "n-2"})));
    assert_eq!(peer.next_json(WAIT).await.unwrap()["body"]["notification_id"], "n-2");
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
