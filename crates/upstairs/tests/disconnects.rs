#![allow(clippy::unwrap_used)]
//! Cancel on disconnect over HTTP and real STOMP sessions, on both backends (issue 29,
//! ADR 0043): a trader who chose it has their working orders cancelled, told and audited,
//! and their pending match requests ended, once their last connection has been gone for
//! the grace period; a trader back within it, or who did not choose it, loses nothing.
mod support;

use chrono::Duration;
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::venue::*;
use support::*;
use upstairs_engine::Clock;
use upstairs_engine::model::Holder;

on_both_backends!(
    a_traders_orders_are_pulled_when_their_last_connection_drops,
    a_trader_back_within_the_grace_or_who_did_not_choose_it_loses_nothing,
);

const WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// A realtime session of `token`'s user: a real STOMP client on their notifications.
async fn connect(v: &Venue, token: &str) -> Peer {
    let args = ["127.0.0.1".into(), v.app.port().to_string(), token.to_owned(), "/user/topic/notifications".into()];
    let mut peer = Peer::spawn("stomp_client.py", &args);
    assert_eq!(peer.next_json(WAIT).await.unwrap()["event"], "connected");
    assert_eq!(peer.next_json(WAIT).await.unwrap()["event"], "subscribed");
    peer
}

async fn choose(v: &Venue, token: &str, on: bool) -> Value {
    let (_, me) = v.app.get("/api/users/me", Some(token)).await;
    let path = format!("/api/users/{}", me["user_id"].as_str().unwrap());
    let (s, me) = v.app.patch(&path, Some(token), json!({"cancel_on_disconnect": on})).await;
    assert_eq!((s, me["cancel_on_disconnect"].clone()), (StatusCode::OK, json!(on)), "{me}");
    me
}

/// The timers not yet run whose kind is a cancel on disconnect.
async fn cancels_pending(v: &Venue) -> usize {
    pending_timers(&v.app.database_url).await.iter().filter(|t| t.kind == "disconnect.cancel").count()
}

/// Runs the presence pass and the due timers until a cancel on disconnect is scheduled
/// (the server notices a closed socket when its read ends), within a deadline.
async fn until_a_cancel_is_scheduled(v: &Venue) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        v.app.running.as_ref().unwrap().run_due_timers().await;
        if cancels_pending(v).await > 0 {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "no cancel on disconnect was scheduled");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

async fn state(v: &Venue, token: &str, id: &str) -> String {
    let (s, o) = v.app.get(&format!("/api/orders/{id}"), Some(token)).await;
    assert_eq!(s, StatusCode::OK, "{o}");
    o["state"].as_str().unwrap().to_owned()
}

/// Kestrel (A) chooses it and rests 2000 and 1000; Halyard (B) sends a match request on
/// the 1000. Kestrel's socket drops: nothing happens within the grace period; after it,
/// the 2000 is cancelled with Kestrel's notification and an action-log row saying why,
/// and the request is declined, Halyard told as on any decline. The parents get their
/// quantity back.
async fn a_traders_orders_are_pulled_when_their_last_connection_drops(b: Backend) {
    let v = venue(b).await;
    let me = choose(&v, &v.a, true).await;
    let sell = v.parent(&v.a, "SELL", 5000).await;
    let (_, big) = v.child(&v.a, &sell, 2000, p("94.75"), false).await;
    let (_, small) = v.child(&v.a, &sell, 1000, p("94.74"), false).await;
    let (big, small) = (big["order_id"].as_str().unwrap(), small["order_id"].as_str().unwrap());
    let buy = v.parent(&v.b, "BUY", 1000).await;
    let (s, sent) = v
        .app
        .post(
            "/api/order-match-requests",
            Some(&v.b),
            json!({"requesting_parent_order_id": buy["parent_order_id"], "quantity": 1000, "price": p("94.74").0,
                   "requesting_broker_id": v.broker, "dry_run": false, "residual": false}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{sent}");
    let request = sent[0]["order_match_request_id"].as_str().unwrap().to_owned();

    let peer = connect(&v, &v.a).await;
    v.app.running.as_ref().unwrap().run_due_timers().await;
    assert_eq!(cancels_pending(&v).await, 0, "connected: nothing to pull");
    drop(peer);
    until_a_cancel_is_scheduled(&v).await;

    // Within the grace period (10 s): nothing yet.
    v.app.clock.advance(Duration::seconds(9));
    v.app.running.as_ref().unwrap().run_due_timers().await;
    assert_eq!(state(&v, &v.a, big).await, "WORKING");
    v.app.clock.advance(Duration::seconds(2));
    v.app.running.as_ref().unwrap().run_due_timers().await;
    assert_eq!(state(&v, &v.a, big).await, "CANCELLED");
    assert_ne!(state(&v, &v.a, small).await, "WORKING", "its request declined, the order with it");
    let (_, m) = v.app.get(&format!("/api/order-match-requests/{request}"), Some(&v.b)).await;
    assert_eq!(m["state"], "REJECTED", "{m}");
    assert_eq!(cancels_pending(&v).await, 0);

    // Kestrel is told, on the order, with its terms; Halyard as on a decline by hand.
    let (_, page) = v.app.get("/api/notifications", Some(&v.a)).await;
    let told: Vec<&Value> =
        page["items"].as_array().unwrap().iter().filter(|n| n["type"] == "ORDER_CANCELLED_ON_DISCONNECT").collect();
    assert_eq!(told.len(), 1, "{page}");
    assert_eq!(
        (told[0]["order_id"].as_str(), &told[0]["direction"], &told[0]["quantity"], &told[0]["status"]),
        (Some(big), &json!("SELL"), &json!(2000), &json!("CANCELLED")),
        "{}",
        told[0]
    );
    assert_eq!(told[0]["price"], json!(94.75));
    assert_eq!(told[0]["requestor"], json!({"party": "VENUE"}), "the venue pulled it (ADR 0046)");
    let (_, page) = v.app.get("/api/notifications", Some(&v.b)).await;
    assert!(page["items"].as_array().unwrap().iter().all(|n| n["type"] != "ORDER_CANCELLED_ON_DISCONNECT"), "{page}");

    // The action log says why, of which order.
    let admin = v.app.admin_token().await;
    let (_, logs) =
        v.app.get("/api/admin/action-logs?entity=order&operation=cancel_on_disconnect&size=100", Some(&admin)).await;
    let rows = logs["items"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{logs}");
    assert_eq!(rows[0]["entity_id"].as_str(), Some(big), "{logs}");
    assert_eq!(rows[0]["details"]["user_id"], me["user_id"], "{logs}");

    // The parent has its quantity back: nothing works.
    let (_, parent) =
        v.app.get(&format!("/api/parent-orders/{}", sell["parent_order_id"].as_str().unwrap()), Some(&v.a)).await;
    assert_eq!(parent["quantities"], json!({"matched": 0, "tradable": 5000, "working": 0}), "{parent}");
    v.app.stop().await;
}

/// Kestrel chooses it, drops and comes back within the grace period: the timer finds them
/// here and pulls nothing. Halyard never chose it: their socket drops and nothing is even
/// scheduled. Only a user changes their own choice.
async fn a_trader_back_within_the_grace_or_who_did_not_choose_it_loses_nothing(b: Backend) {
    let v = venue(b).await;
    choose(&v, &v.a, true).await;
    let sell = v.parent(&v.a, "SELL", 5000).await;
    let (_, kestrels) = v.child(&v.a, &sell, 2000, p("94.75"), false).await;
    let buy = v.parent(&v.b, "BUY", 5000).await;
    let (_, halyards) = v.child(&v.b, &buy, 2000, p("94.71"), false).await;

    let peer = connect(&v, &v.a).await;
    v.app.running.as_ref().unwrap().run_due_timers().await;
    drop(peer);
    until_a_cancel_is_scheduled(&v).await;
    v.app.clock.advance(Duration::seconds(5));
    let back = connect(&v, &v.a).await;
    v.app.clock.advance(Duration::seconds(6));
    v.app.running.as_ref().unwrap().run_due_timers().await;
    assert_eq!(cancels_pending(&v).await, 0, "the timer ran");
    assert_eq!(state(&v, &v.a, kestrels["order_id"].as_str().unwrap()).await, "WORKING");

    // Halyard did not choose it: gone, and nothing scheduled.
    let (_, halyard) = v.app.get("/api/users/me", Some(&v.b)).await;
    let halyard = Holder::User(upstairs_domain::UserId(halyard["user_id"].as_str().unwrap().parse().unwrap()));
    let theirs = connect(&v, &v.b).await;
    v.app.running.as_ref().unwrap().run_due_timers().await;
    assert!(present(&v.app.database_url, halyard, v.app.clock.now()).await);
    drop(theirs);
    let deadline = tokio::time::Instant::now() + WAIT;
    while present(&v.app.database_url, halyard, v.app.clock.now()).await {
        assert!(tokio::time::Instant::now() < deadline, "Halyard's lease never ended");
        v.app.running.as_ref().unwrap().run_due_timers().await;
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    v.app.clock.advance(Duration::seconds(30));
    v.app.running.as_ref().unwrap().run_due_timers().await;
    assert_eq!(state(&v, &v.b, halyards["order_id"].as_str().unwrap()).await, "WORKING");
    assert_eq!(cancels_pending(&v).await, 0);
    drop(back);

    // Nobody chooses it for someone else, an admin included.
    let (_, me) = v.app.get("/api/users/me", Some(&v.b)).await;
    let path = format!("/api/users/{}", me["user_id"].as_str().unwrap());
    let admin = v.app.admin_token().await;
    let (s, body) = v.app.patch(&path, Some(&admin), json!({"cancel_on_disconnect": true})).await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{body}");
    v.app.stop().await;
}
