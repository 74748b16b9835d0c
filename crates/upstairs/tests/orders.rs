#![allow(clippy::unwrap_used)]
//! Parent and child orders, the anonymous book and the trading day, over HTTP on both
//! backends, with the clock set to a trading Tuesday in London.

mod support;

use chrono::Duration;
use rand::{Rng, SeedableRng};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::Duration as StdDuration;
use support::*;

on_both_backends!(
    parent_order_rules,
    child_order_rules_and_edits,
    other_companies_see_nothing,
    close_expires_working_orders,
    book_topic_reaches_subscribers,
    book_frames_carry_the_state_and_shares_reach_only_their_company,
    order_frames_carry_the_rows_the_lists_show,
    quantities_stay_exact_under_random_calls,
    concurrent_writers_keep_counters_exact,
    edits_racing_the_close_never_revive_an_order,
    reference_changes_apply_to_the_next_call,
    icebergs_show_a_block_the_node_has_not_heard_of,
    a_late_close_spares_the_next_days_orders,
    one_firm_cannot_break_an_instrument,
    a_holiday_is_named_in_the_status,
    exchange_calendars_decide_per_instrument,
);

use support::venue::*;

fn messages(v: &Value) -> Vec<(String, String)> {
    v["errors"].as_array().map_or(vec![], |e| {
        e.iter().map(|e| (e["field"].as_str().unwrap().to_owned(), e["message"].as_str().unwrap().to_owned())).collect()
    })
}

async fn parent_order_rules(b: Backend) {
    let v = venue(b).await;
    let app = &v.app;
    let (s, r) =
        app.post("/api/parent-orders", Some(&v.a), json!({"instrument_id": v.instrument, "quantity": 400})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert_eq!(
        messages(&r),
        [
            ("direction".into(), "Direction is required".into()),
            ("quantity".into(), "The minimum block size is 500".into())
        ]
    );
    let (_, r) = v.try_parent(&v.a, "BUY", 100_001).await;
    assert_eq!(messages(&r), [("quantity".into(), "The maximum quantity is 100000".into())]);
    let (_, r) = v.try_parent(&v.a_admin_limited, "BUY", 2001).await;
    assert_eq!(messages(&r), [("quantity".into(), "The maximum quantity is 2000".into())], "multiplier × min block");
    let (s, _) = v.try_parent(&v.a, "HOLD", 500).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);

    let parent = v.parent(&v.a, "BUY", 5000).await;
    assert_eq!(parent["quantities"], json!({"tradable": 5000, "working": 0, "matched": 0}));
    assert_eq!(parent["eligible_brokers"][0]["name"], "Baltic");
    assert_eq!(parent["state"], "ACTIVE");
    let (_, list) = app.get("/api/parent-orders?state=ACTIVE,FILLED", Some(&v.a)).await;
    assert_eq!(list.as_array().unwrap().len(), 1);
    let (s, _) = app.get("/api/parent-orders?state=ACTIVE,NOPE", Some(&v.a)).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);

    // Parent orders from 05:30; child orders worked from then wait for the open (09:00).
    app.clock.set(tuesday_10am() - Duration::hours(4) - Duration::minutes(31));
    let (s, r) = v.try_parent(&v.a, "SELL", 500).await;
    assert_eq!(s, StatusCode::CONFLICT, "05:29: {r}");
    app.clock.set(tuesday_10am() - Duration::hours(4) - Duration::minutes(30));
    let early = v.parent(&v.a, "SELL", 500).await;
    let (s, waiting) = v.child(&v.a, &early, 500, p("94.75"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{waiting}");
    assert_eq!((waiting["waiting_for_open"].clone(), waiting["matchable"].clone()), (json!(true), json!(false)));
    let taker = v.parent(&v.b, "BUY", 500).await;
    let take = json!({"requesting_parent_order_id": taker["parent_order_id"], "quantity": 500, "price": p("94.75").0,
                      "requesting_broker_id": v.broker, "dry_run": false});
    let (s, r) = app.post("/api/order-match-requests", Some(&v.b), take.clone()).await;
    assert_eq!(
        (s, r["detail"].as_str()),
        (StatusCode::CONFLICT, Some("The platform is closed. It opens again today at 09:00 UK time."))
    );
    let (_, st) = app.get("/api/platform/status", Some(&v.a)).await;
    assert_eq!((st["open"].clone(), st["parent_orders_open"].clone()), (json!(false), json!(true)));
    assert_eq!(
        (st["open_time"].as_str(), st["close_time"].as_str(), st["time_zone"].as_str()),
        (Some("09:00"), Some("17:00"), Some("Europe/London"))
    );
    // At the open it is live without anyone acting: matchable, and a take reaches it.
    app.clock.set(tuesday_10am() - Duration::hours(1));
    let (_, live) = app.get(&format!("/api/orders/{}", waiting["order_id"].as_str().unwrap()), Some(&v.a)).await;
    assert_eq!((live["waiting_for_open"].clone(), live["matchable"].clone()), (json!(false), json!(true)));
    let (s, sent) = app.post("/api/order-match-requests", Some(&v.b), take).await;
    assert_eq!((s, sent[0]["quantity"].clone()), (StatusCode::CREATED, json!(500)), "{sent}");
    app.clock.set(tuesday_10am());

    // Cancelling cancels the working child orders.
    let (s, child) = v.child(&v.a, &parent, 1000, p("94.75"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{child}");
    let path = format!("/api/parent-orders/{}", parent["parent_order_id"].as_str().unwrap());
    assert_eq!(app.call(Method::DELETE, &path, Some(&v.a), None).await.0, StatusCode::NO_CONTENT);
    let (_, o) = app.get(&format!("/api/orders/{}", child["order_id"].as_str().unwrap()), Some(&v.a)).await;
    assert_eq!(o["state"], "CANCELLED");
    let (_, list) = app.get("/api/parent-orders", Some(&v.a)).await;
    assert!(
        list.as_array().unwrap().iter().all(|p| p["parent_order_id"] != parent["parent_order_id"]),
        "cancelled parents leave the list"
    );
    assert_eq!(app.call(Method::DELETE, &path, Some(&v.a), None).await.0, StatusCode::CONFLICT);
    v.app.stop().await;
}

async fn child_order_rules_and_edits(b: Backend) {
    let v = venue(b).await;
    let app = &v.app;
    let parent = v.parent(&v.a, "BUY", 2000).await;
    let (s, r) = v.child(&v.a, &parent, 400, p("94.755"), false).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert_eq!(
        messages(&r),
        [("quantity".into(), "Min block size: 500".into()), ("limit_price".into(), "Invalid tick value".into())]
    );
    let (_, r) = v.child(&v.a, &parent, 2500, p("94.81"), false).await;
    assert_eq!(
        messages(&r),
        [
            ("quantity".into(), "Exceeds available quantity".into()),
            ("limit_price".into(), "Must be between electronic price".into())
        ]
    );
    let (s, r) = app
        .post(
            "/api/orders",
            Some(&v.a),
            json!({"parent_order_id": parent["parent_order_id"], "quantity": 500, "limit_price": 94.75,
            "broker_id": parent["parent_order_id"], "residual": true, "iceberg": false}),
        )
        .await;
    assert_eq!(
        (s, messages(&r)),
        (StatusCode::BAD_REQUEST, vec![("broker_id".into(), "Choose one of the eligible brokers".into())])
    );
    let (s, r) = app
        .post(
            "/api/orders",
            Some(&v.a),
            json!({"parent_order_id": parent["parent_order_id"], "quantity": 500, "limit_price": 94.75,
            "broker_id": v.broker, "direction": "SELL"}),
        )
        .await;
    assert_eq!(
        (s, messages(&r)),
        (StatusCode::BAD_REQUEST, vec![("direction".into(), "Must match the parent order".into())])
    );
    let (s, r) = app
        .post(
            "/api/orders",
            Some(&v.a),
            json!({"parent_order_id": parent["parent_order_id"], "quantity": 500, "broker_id": v.broker}),
        )
        .await;
    assert_eq!((s, messages(&r)), (StatusCode::BAD_REQUEST, vec![("limit_price".into(), "Price is required".into())]));

    let (s, o1) = v.child(&v.a, &parent, 1500, p("94.75"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{o1}");
    assert_eq!(
        (o1["state"].as_str(), o1["price"].clone(), o1["matchable"].clone()),
        (Some("WORKING"), json!(94.75), json!(true))
    );
    let (_, pview) =
        app.get(&format!("/api/parent-orders/{}", parent["parent_order_id"].as_str().unwrap()), Some(&v.a)).await;
    assert_eq!(pview["quantities"], json!({"tradable": 500, "working": 1500, "matched": 0}));
    let (_, r) = v.child(&v.a, &parent, 1000, p("94.74"), false).await;
    assert_eq!(messages(&r), [("quantity".into(), "Exceeds available quantity".into())]);

    // Editing allows the remaining quantity plus the order's own.
    let path = format!("/api/orders/{}", o1["order_id"].as_str().unwrap());
    let (s, r) = app.patch(&path, Some(&v.a), json!({"quantity": 2001})).await;
    assert_eq!(
        (s, messages(&r)),
        (StatusCode::BAD_REQUEST, vec![("quantity".into(), "Exceeds available quantity".into())])
    );
    let (s, e) = app
        .patch(&path, Some(&v.a), json!({"quantity": 2000, "limit_price": 94.71, "iceberg": true, "residual": false}))
        .await;
    assert_eq!(s, StatusCode::OK, "{e}");
    assert_eq!(
        (e["quantity"].clone(), e["price"].clone(), e["iceberg"].clone(), e["residual"].clone()),
        (json!(2000), json!(94.71), json!(true), json!(false))
    );
    // The book shows the iceberg as one minimum block.
    let (_, book) = app.get(&format!("/api/instruments/{}/book", v.instrument), Some(&v.b)).await;
    assert_eq!(
        book["levels"],
        json!([{"price": 94.71, "buy_quantity": 500, "sell_quantity": 0, "own_buy_quantity": 0, "own_sell_quantity": 0}])
    );
    let (_, md) = app.get(&format!("/api/instruments/{}/market-data", v.instrument), Some(&v.b)).await;
    assert_eq!(
        md,
        json!({"best_buy_price": 94.71, "best_sell_price": null, "max_tick_price": 94.8, "min_tick_price": 94.7,
               "prices_stale": false})
    );

    // Band moves away: the order stays, flagged not matchable.
    let admin = app.admin_token().await;
    app.post(
        &format!("/api/admin/instruments/{}/band", v.instrument),
        Some(&admin),
        json!({"min_tick_price": 94.72, "max_tick_price": 94.82}),
    )
    .await;
    let (_, o) = app.get(&path, Some(&v.a)).await;
    assert_eq!((o["state"].as_str(), o["matchable"].clone()), (Some("WORKING"), json!(false)));
    // Its quantity and flags still change without moving its price (issue 28.2): a price
    // kept is not checked again. A new price outside the band is refused; the answer says
    // the order cannot match.
    let (s, e) = app.patch(&path, Some(&v.a), json!({"quantity": 1500, "limit_price": 94.71})).await;
    assert_eq!((s, e["quantity"].clone(), e["matchable"].clone()), (StatusCode::OK, json!(1500), json!(false)), "{e}");
    let (s, e) = app.patch(&path, Some(&v.a), json!({"quantity": 1000, "iceberg": false})).await;
    assert_eq!((s, e["quantity"].clone(), e["iceberg"].clone()), (StatusCode::OK, json!(1000), json!(false)), "{e}");
    let (s, e) = app.patch(&path, Some(&v.a), json!({"limit_price": 94.7})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    assert!(e.to_string().contains("Must be between electronic price"), "{e}");

    // Cancel returns the quantity; a cancelled order cannot be edited or cancelled again.
    let (s, c) = app.call(Method::DELETE, &path, Some(&v.a), None).await;
    assert_eq!((s, c["state"].as_str()), (StatusCode::OK, Some("CANCELLED")));
    assert_eq!(app.patch(&path, Some(&v.a), json!({"quantity": 500})).await.0, StatusCode::CONFLICT);
    assert_eq!(app.call(Method::DELETE, &path, Some(&v.a), None).await.0, StatusCode::CONFLICT);
    let (_, pview) =
        app.get(&format!("/api/parent-orders/{}", parent["parent_order_id"].as_str().unwrap()), Some(&v.a)).await;
    assert_eq!(pview["quantities"], json!({"tradable": 2000, "working": 0, "matched": 0}));
    let (_, book) = app.get(&format!("/api/instruments/{}/market-data", v.instrument), Some(&v.b)).await;
    assert_eq!(book["best_buy_price"], Value::Null);
    v.app.stop().await;
}

async fn other_companies_see_nothing(b: Backend) {
    let v = venue(b).await;
    let app = &v.app;
    let parent = v.parent(&v.a, "SELL", 3000).await;
    let (_, order) = v.child(&v.a, &parent, 1000, p("94.78"), false).await;
    let (_, theirs) = v.child(&v.b, &v.parent(&v.b, "SELL", 1000).await, 500, p("94.78"), false).await;
    let pid = parent["parent_order_id"].as_str().unwrap();
    let oid = order["order_id"].as_str().unwrap();
    for (m, path, body) in [
        (Method::GET, format!("/api/parent-orders/{pid}"), None),
        (Method::DELETE, format!("/api/parent-orders/{pid}"), None),
        (Method::GET, format!("/api/orders/{oid}"), None),
        (Method::PATCH, format!("/api/orders/{oid}"), Some(json!({"quantity": 500}))),
        (Method::DELETE, format!("/api/orders/{oid}"), None),
    ] {
        let (s, r) = app.call(m.clone(), &path, Some(&v.b), body.clone()).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{m} {path} as another firm: {r}");
    }
    let (s, r) = app
        .post(
            "/api/orders",
            Some(&v.b),
            json!({"parent_order_id": pid, "quantity": 500, "limit_price": 94.78, "broker_id": v.broker}),
        )
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{r}");
    let (_, list) = app.get(&format!("/api/orders?parent_order_id={pid}"), Some(&v.b)).await;
    assert_eq!(list, json!([]));
    let (_, list) = app.get(&format!("/api/orders?instrument_id={}", v.instrument), Some(&v.b)).await;
    assert_eq!(
        list.as_array().unwrap().iter().map(|o| o["order_id"].clone()).collect::<Vec<_>>(),
        [theirs["order_id"].clone()]
    );
    let (_, parents) = app.get("/api/parent-orders", Some(&v.b)).await;
    assert!(parents.as_array().unwrap().iter().all(|p| p["parent_order_id"] != pid));

    // The book is anonymous: quantities only; each firm sees its own share marked.
    let (_, book_b) = app.get(&format!("/api/instruments/{}/book", v.instrument), Some(&v.b)).await;
    assert_eq!(
        book_b["levels"],
        json!([{"price": 94.78, "buy_quantity": 0, "sell_quantity": 1500, "own_buy_quantity": 0, "own_sell_quantity": 500}])
    );
    let text = book_b.to_string();
    for secret in [oid, pid, "Halyard", "a@halyard.test", &v.broker] {
        assert!(!text.contains(secret), "book leaks {secret}");
    }
    v.app.stop().await;
}

async fn close_expires_working_orders(b: Backend) {
    let v = venue(b).await;
    let app = &v.app;
    let parent = v.parent(&v.a, "BUY", 2000).await;
    let (_, o) = v.child(&v.a, &parent, 1500, p("94.72"), false).await;
    let running = app.running.as_ref().unwrap();
    app.clock.set(tuesday_10am() + Duration::hours(6) + Duration::minutes(45));
    let (_, st) = app.get("/api/platform/status", Some(&v.a)).await;
    assert_eq!((st["open"].clone(), st["closing_soon"].clone()), (json!(true), json!(true)), "16:45");
    running.run_due_timers().await;
    let (_, still) = app.get(&format!("/api/orders/{}", o["order_id"].as_str().unwrap()), Some(&v.a)).await;
    assert_eq!(still["state"], "WORKING");
    app.clock.set(tuesday_10am() + Duration::hours(7));
    running.run_due_timers().await;
    let (_, gone) = app.get(&format!("/api/orders/{}", o["order_id"].as_str().unwrap()), Some(&v.a)).await;
    assert_eq!(gone["state"], "EXPIRED");
    let (_, pview) =
        app.get(&format!("/api/parent-orders/{}", parent["parent_order_id"].as_str().unwrap()), Some(&v.a)).await;
    assert_eq!(pview["quantities"], json!({"tradable": 2000, "working": 0, "matched": 0}));
    let (_, st) = app.get("/api/platform/status", Some(&v.a)).await;
    assert_eq!(st["open"], json!(false));
    assert_eq!(st["next_open"], json!("2026-03-04T09:00:00Z"));
    // The next close is scheduled: Wednesday's orders expire at Wednesday's close.
    app.clock.set(tuesday_10am() + Duration::days(1));
    let (_, o2) = v.child(&v.a, &parent, 500, p("94.72"), false).await;
    app.clock.set(tuesday_10am() + Duration::days(1) + Duration::hours(7));
    running.run_due_timers().await;
    let (_, gone) = app.get(&format!("/api/orders/{}", o2["order_id"].as_str().unwrap()), Some(&v.a)).await;
    assert_eq!(gone["state"], "EXPIRED");
    v.app.stop().await;
}

async fn book_topic_reaches_subscribers(b: Backend) {
    let v = venue(b).await;
    let app = &v.app;
    let topic = format!("/topic/instruments/{}/book", v.instrument);
    let mut peer =
        Peer::spawn("stomp_client.py", &["127.0.0.1".into(), app.port().to_string(), v.b.clone(), topic.clone()]);
    assert_eq!(peer.next_json(StdDuration::from_secs(10)).await.unwrap()["event"], "connected");
    assert_eq!(peer.next_json(StdDuration::from_secs(10)).await.unwrap()["event"], "subscribed");
    let parent = v.parent(&v.a, "SELL", 1000).await;
    let (s, _) = v.child(&v.a, &parent, 1000, p("94.79"), false).await;
    assert_eq!(s, StatusCode::CREATED);
    let msg = peer.next_json(StdDuration::from_secs(10)).await.expect("book pushed");
    assert_eq!(msg["destination"], json!(topic));
    assert_eq!(msg["body"]["levels"], json!([{"price": 94.79, "buy_quantity": 0, "sell_quantity": 1000}]));
    assert!(!msg["body"].to_string().contains(parent["parent_order_id"].as_str().unwrap()));
    // A band move reaches the same topic.
    let admin = app.admin_token().await;
    let (s, _) = app
        .post(
            &format!("/api/admin/instruments/{}/band", v.instrument),
            Some(&admin),
            json!({"min_tick_price": 94.71, "max_tick_price": 94.81}),
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    let msg = peer.next_json(StdDuration::from_secs(10)).await.expect("band move pushed");
    assert_eq!(
        (msg["body"]["min_tick_price"].clone(), msg["body"]["max_tick_price"].clone()),
        (json!(94.71), json!(94.81))
    );
    drop(peer);

    // A book topic of an instrument the caller may not see is refused.
    let (_, sbx) = app
        .post(
            "/api/admin/instruments",
            Some(&admin),
            json!({"name": "Sandbox only", "term": "Dec26", "min_quantity": 1, "tick_size": 1,
            "exchange_id": "X", "currency": "EUR", "min_tick_price": 1, "max_tick_price": 5, "is_sandbox": true}),
        )
        .await;
    let mut peer = Peer::spawn(
        "stomp_client.py",
        &[
            "127.0.0.1".into(),
            app.port().to_string(),
            v.b.clone(),
            format!("/topic/instruments/{}/book", sbx["instrument_id"].as_str().unwrap()),
        ],
    );
    assert_eq!(peer.next_json(StdDuration::from_secs(10)).await.unwrap()["event"], "connected");
    let err = peer.next_json(StdDuration::from_secs(10)).await.unwrap();
    assert_eq!((err["event"].as_str(), err["message"].as_str()), (Some("error"), Some("unknown destination")));
    v.app.stop().await;
}

/// Connects `token`'s STOMP client to `destination` and waits until it is subscribed.
async fn subscribed(app: &TestApp, token: &str, destination: &str) -> Peer {
    let mut peer =
        Peer::spawn("stomp_client.py", &["127.0.0.1".into(), app.port().to_string(), token.into(), destination.into()]);
    assert_eq!(peer.next_json(StdDuration::from_secs(10)).await.unwrap()["event"], "connected");
    assert_eq!(peer.next_json(StdDuration::from_secs(10)).await.unwrap()["event"], "subscribed");
    peer
}

/// The next frame's body on `peer`.
async fn frame(peer: &mut Peer) -> Value {
    let msg = peer.next_json(StdDuration::from_secs(10)).await.expect("a frame");
    assert_eq!(msg["event"], "message", "{msg}");
    msg["body"].clone()
}

/// The row of `id` (under `key`) in the list `path` answers `token`.
async fn listed(app: &TestApp, token: &str, path: &str, key: &str, id: &Value) -> Value {
    let (s, list) = app.get(path, Some(token)).await;
    assert_eq!(s, StatusCode::OK, "{list}");
    list.as_array().unwrap().iter().find(|r| r[key] == *id).cloned().unwrap_or_else(|| panic!("{id} not in {path}"))
}

/// The next frame on `peer`, of `kind`, numbered `seq`: what it carries besides.
async fn order_frame(peer: &mut Peer, kind: &str, seq: u64) -> Value {
    let mut f = frame(peer).await;
    assert_eq!((&f["type"], &f["seq"]), (&json!(kind), &json!(seq)), "{f}");
    let row = f.as_object_mut().unwrap();
    row.remove("type");
    row.remove("seq");
    f
}

/// Each change of a user's order reaches their `/user/topic/orders` as the row their
/// lists show, numbered 1, 2, 3 …: the child order as `GET /orders` lists it, the parent
/// with its quantities as `GET /parent-orders` does (ADR 0029); another firm hears none.
async fn order_frames_carry_the_rows_the_lists_show(b: Backend) {
    let v = venue(b).await;
    let app = &v.app;
    let mut a = subscribed(app, &v.a, "/user/topic/orders").await;
    let mut b_peer = subscribed(app, &v.b, "/user/topic/orders").await;
    let parents = "/api/parent-orders?state=ACTIVE,FILLED";
    let orders = "/api/orders?state=WORKING";

    let sell = v.parent(&v.a, "SELL", 2000).await;
    let id = &sell["parent_order_id"];
    let f = order_frame(&mut a, "PARENT_ORDER_UPDATED", 1).await;
    assert_eq!(f, listed(app, &v.a, parents, "parent_order_id", id).await);

    let (s, order) = v.child(&v.a, &sell, 1000, p("94.79"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{order}");
    let f = order_frame(&mut a, "ORDER_UPDATED", 2).await;
    assert_eq!(f, listed(app, &v.a, orders, "order_id", &order["order_id"]).await);
    assert_eq!((&f["matchable"], &f["price"]), (&json!(true), &json!(94.79)));
    let f = order_frame(&mut a, "PARENT_ORDER_UPDATED", 3).await;
    assert_eq!(f["quantities"], json!({"tradable": 1000, "working": 1000, "matched": 0}));
    assert_eq!(f, listed(app, &v.a, parents, "parent_order_id", id).await);

    let (s, body) = app.delete(&format!("/api/orders/{}", order["order_id"].as_str().unwrap()), Some(&v.a)).await;
    assert!(s.is_success(), "{s}: {body}");
    let f = order_frame(&mut a, "ORDER_UPDATED", 4).await;
    assert_eq!((&f["order_id"], &f["state"]), (&order["order_id"], &json!("CANCELLED")));
    let f = order_frame(&mut a, "PARENT_ORDER_UPDATED", 5).await;
    assert_eq!(f["quantities"], json!({"tradable": 2000, "working": 0, "matched": 0}));
    assert_eq!(f, listed(app, &v.a, parents, "parent_order_id", id).await);

    // B heard none of it: B's first frame is B's own parent.
    let buy = v.parent(&v.b, "BUY", 1000).await;
    let f = order_frame(&mut b_peer, "PARENT_ORDER_UPDATED", 1).await;
    assert_eq!(f["parent_order_id"], buy["parent_order_id"]);
    drop((a, b_peer));
    v.app.stop().await;
}

/// A book frame is what the REST book shows anyone without a share, plus the market data,
/// numbered 1, 2, 3 …; each company's own share comes on its own destination only when it
/// changes, and an iceberg's hidden size is in no frame (ADR 0029).
async fn book_frames_carry_the_state_and_shares_reach_only_their_company(b: Backend) {
    let v = venue(b).await;
    let app = &v.app;
    let topic = format!("/topic/instruments/{}/book", v.instrument);
    let mut book_b = subscribed(app, &v.b, &topic).await;
    let mut shares_a = subscribed(app, &v.a, "/user/topic/book-shares").await;
    let mut shares_b = subscribed(app, &v.b, "/user/topic/book-shares").await;
    let book_path = format!("/api/instruments/{}/book", v.instrument);
    let md_path = format!("/api/instruments/{}/market-data", v.instrument);

    // A rests an iceberg of 2,000 that shows 500.
    let sell = v.parent(&v.a, "SELL", 2000).await;
    let (s, order) = v.child(&v.a, &sell, 2000, p("94.79"), true).await;
    assert_eq!(s, StatusCode::CREATED, "{order}");
    let f = frame(&mut book_b).await;
    let (_, rest_b) = app.get(&book_path, Some(&v.b)).await;
    let (_, md) = app.get(&md_path, Some(&v.b)).await;
    assert_eq!(f["seq"], 1);
    assert_eq!(f["levels"], json!([{"price": 94.79, "buy_quantity": 0, "sell_quantity": 500}]));
    for l in rest_b["levels"].as_array().unwrap() {
        assert_eq!((l["own_buy_quantity"].clone(), l["own_sell_quantity"].clone()), (json!(0), json!(0)));
    }
    let anonymous: Vec<Value> = rest_b["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| json!({"price": l["price"], "buy_quantity": l["buy_quantity"], "sell_quantity": l["sell_quantity"]}))
        .collect();
    assert_eq!(f["levels"], json!(anonymous), "the frame is the REST book without any share");
    for k in ["best_buy_price", "best_sell_price", "min_tick_price", "max_tick_price"] {
        assert_eq!(f[k], md[k], "{k} as GET market-data answers it");
    }
    assert_eq!(f["tick_size"], json!(0.01));
    let text = f.to_string();
    assert!(
        !text.contains("2000") && !text.contains("own") && !text.contains(order["order_id"].as_str().unwrap()),
        "{text}"
    );

    // A's own share, as A's REST book marks it, reaches A's company alone.
    let (_, rest_a) = app.get(&book_path, Some(&v.a)).await;
    let share = frame(&mut shares_a).await;
    assert_eq!(share["seq"], 1);
    assert_eq!(share["instrument_id"], json!(v.instrument));
    assert_eq!(
        share["levels"],
        json!([{"price": rest_a["levels"][0]["price"], "own_buy_quantity": rest_a["levels"][0]["own_buy_quantity"],
                "own_sell_quantity": rest_a["levels"][0]["own_sell_quantity"]}])
    );
    assert_eq!(share["levels"][0]["own_sell_quantity"], json!(500), "the iceberg shows its block to its owner too");

    // B rests a buy: B hears its own share first (nothing of A's came before it); the book moves on to 2.
    let buy = v.parent(&v.b, "BUY", 1000).await;
    let (s, _) = v.child(&v.b, &buy, 1000, p("94.72"), false).await;
    assert_eq!(s, StatusCode::CREATED);
    let f = frame(&mut book_b).await;
    assert_eq!((f["seq"].clone(), f["best_buy_price"].clone()), (json!(2), json!(94.72)));
    assert_eq!(
        frame(&mut shares_b).await,
        json!({"seq": 1, "instrument_id": v.instrument,
               "levels": [{"price": 94.72, "own_buy_quantity": 1000, "own_sell_quantity": 0}]})
    );

    // A band move reaches the book with the band and market data, numbered on; no share moved.
    let admin = app.admin_token().await;
    let (s, _) = app
        .post(
            &format!("/api/admin/instruments/{}/band", v.instrument),
            Some(&admin),
            json!({"min_tick_price": 94.71, "max_tick_price": 94.81}),
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    let f = frame(&mut book_b).await;
    assert_eq!(
        (f["seq"].clone(), f["min_tick_price"].clone(), f["max_tick_price"].clone(), f["best_sell_price"].clone()),
        (json!(3), json!(94.71), json!(94.81), json!(94.79))
    );

    // A takes 200 off its iceberg's hidden size: it still shows 500, so no watcher hears of
    // it at all (a frame would tell every firm something unseen moved at 94.79).
    let order_path = format!("/api/orders/{}", order["order_id"].as_str().unwrap());
    let (s, edited) = app.patch(&order_path, Some(&v.a), json!({"quantity": 1800})).await;
    assert_eq!((s, edited["quantity"].clone()), (StatusCode::OK, json!(1800)), "{edited}");

    // A cancels: A hears its share is gone as its very next share frame (the band move and
    // the hidden edit sent none), and the book's next frame is the cancel's.
    let (s, _) = app
        .call(Method::DELETE, &format!("/api/orders/{}", order["order_id"].as_str().unwrap()), Some(&v.a), None)
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(frame(&mut shares_a).await, json!({"seq": 2, "instrument_id": v.instrument, "levels": []}));
    let f = frame(&mut book_b).await;
    assert_eq!((f["seq"].clone(), f["best_sell_price"].clone()), (json!(4), Value::Null));
    drop((book_b, shares_a, shares_b));
    v.app.stop().await;
}

/// Random sequences of create / edit / cancel keep `tradable = quantity − working −
/// matched ≥ 0`, and the parent's sums equal its child orders.
async fn quantities_stay_exact_under_random_calls(b: Backend) {
    let v = venue(b).await;
    let app = &v.app;
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed);
    let parents = [v.parent(&v.a, "BUY", 3000).await, v.parent(&v.a, "SELL", 2500).await];
    let prices = ["94.70", "94.71", "94.75", "94.80", "94.805", "94.81"];
    for step in 0..60 {
        let parent = &parents[rng.gen_range(0..2)];
        let pid = parent["parent_order_id"].as_str().unwrap();
        let (_, children) = app.get(&format!("/api/orders?parent_order_id={pid}&state=WORKING"), Some(&v.a)).await;
        let children = children.as_array().unwrap().clone();
        match rng.gen_range(0..3) {
            0 => {
                let q = [400, 500, 700, 1000, 2500][rng.gen_range(0..5)];
                let _ = v.child(&v.a, parent, q, p(prices[rng.gen_range(0..prices.len())]), rng.gen_bool(0.3)).await;
            }
            1 if !children.is_empty() => {
                let c = &children[rng.gen_range(0..children.len())];
                let q = [500, 900, 1500, 3000][rng.gen_range(0..4)];
                let (s, _) = app
                    .patch(
                        &format!("/api/orders/{}", c["order_id"].as_str().unwrap()),
                        Some(&v.a),
                        json!({"quantity": q}),
                    )
                    .await;
                assert!(s == StatusCode::OK || s == StatusCode::BAD_REQUEST, "step {step}: {s}");
            }
            _ if !children.is_empty() => {
                let c = &children[rng.gen_range(0..children.len())];
                let (s, _) = app
                    .call(Method::DELETE, &format!("/api/orders/{}", c["order_id"].as_str().unwrap()), Some(&v.a), None)
                    .await;
                assert_eq!(s, StatusCode::OK, "step {step}");
            }
            _ => {}
        }
        for parent in &parents {
            let pid = parent["parent_order_id"].as_str().unwrap();
            let (_, view) = app.get(&format!("/api/parent-orders/{pid}"), Some(&v.a)).await;
            let (_, working) = app.get(&format!("/api/orders?parent_order_id={pid}&state=WORKING"), Some(&v.a)).await;
            let sum: i64 = working.as_array().unwrap().iter().map(|o| o["quantity"].as_i64().unwrap()).sum();
            let q = &view["quantities"];
            let (t, w, m) =
                (q["tradable"].as_i64().unwrap(), q["working"].as_i64().unwrap(), q["matched"].as_i64().unwrap());
            assert_eq!(w, sum, "step {step}: working equals the child orders");
            assert_eq!(t, view["quantity"].as_i64().unwrap() - w - m, "step {step}");
            assert!(t >= 0, "step {step}: tradable {t}");
        }
    }
    v.app.stop().await;
}

/// Every parent's counters against the sum of its child orders, and the book against
/// the resting orders, read back through the API.
async fn assert_counters_match_children(v: &Venue, parents: &[Value], what: &str) {
    let app = &v.app;
    let mut resting = std::collections::BTreeMap::<String, i64>::new();
    for parent in parents {
        let pid = parent["parent_order_id"].as_str().unwrap();
        let (_, view) = app.get(&format!("/api/parent-orders/{pid}"), Some(&v.a)).await;
        let (_, orders) = app.get(&format!("/api/orders?parent_order_id={pid}"), Some(&v.a)).await;
        let sum_in = |states: &[&str]| -> i64 {
            orders
                .as_array()
                .unwrap()
                .iter()
                .filter(|o| states.contains(&o["state"].as_str().unwrap()))
                .map(|o| o["quantity"].as_i64().unwrap())
                .sum()
        };
        let q = &view["quantities"];
        assert_eq!(
            q["working"].as_i64().unwrap(),
            sum_in(&["WORKING", "AWAITING_MATCH", "AWAITING_RFQ_ACCEPTANCE"]),
            "{what}: working of {pid}"
        );
        assert_eq!(q["matched"].as_i64().unwrap(), sum_in(&["MATCHED"]), "{what}: matched of {pid}");
        assert!(q["tradable"].as_i64().unwrap() >= 0, "{what}: tradable of {pid}");
        for o in orders.as_array().unwrap().iter().filter(|o| o["state"] == "WORKING") {
            // An iceberg shows the instrument's minimum block (500) at most.
            let q = o["quantity"].as_i64().unwrap();
            let shown = if o["iceberg"] == true { q.min(500) } else { q };
            *resting.entry(format!("{}:{}", o["direction"], o["price"])).or_default() += shown;
        }
    }
    let (_, book) = app.get(&format!("/api/instruments/{}/book", v.instrument), Some(&v.a)).await;
    let mut shown = std::collections::BTreeMap::<String, i64>::new();
    for l in book["levels"].as_array().unwrap() {
        for side in ["BUY", "SELL"] {
            let q = l[format!("{}_quantity", side.to_lowercase())].as_i64().unwrap();
            if q > 0 {
                shown.insert(format!("\"{side}\":{}", l["price"]), q);
            }
        }
    }
    assert_eq!(shown, resting, "{what}: the book shows the resting orders");
}

/// Sixteen clients create, edit and cancel child orders of the same three parents at
/// once; afterwards every counter equals the sum of its child orders.
async fn concurrent_writers_keep_counters_exact(b: Backend) {
    let v = std::sync::Arc::new(venue(b).await);
    let parents =
        vec![v.parent(&v.a, "BUY", 6000).await, v.parent(&v.a, "BUY", 4000).await, v.parent(&v.a, "SELL", 5000).await];
    let mut tasks = Vec::new();
    for client in 0..16_u64 {
        let (v, parents) = (v.clone(), parents.clone());
        tasks.push(tokio::spawn(async move {
            let mut rng = rand::rngs::StdRng::seed_from_u64(client);
            let prices = ["94.71", "94.72", "94.75", "94.79"];
            for step in 0..12 {
                let parent = &parents[rng.gen_range(0..parents.len())];
                let pid = parent["parent_order_id"].as_str().unwrap();
                let (_, children) =
                    v.app.get(&format!("/api/orders?parent_order_id={pid}&state=WORKING"), Some(&v.a)).await;
                let children = children.as_array().unwrap().clone();
                let s = match rng.gen_range(0..3) {
                    1 if !children.is_empty() => {
                        let c = &children[rng.gen_range(0..children.len())];
                        let q = [500, 800, 1200][rng.gen_range(0..3)];
                        let body = json!({"quantity": q});
                        v.app
                            .patch(&format!("/api/orders/{}", c["order_id"].as_str().unwrap()), Some(&v.a), body)
                            .await
                            .0
                    }
                    2 if !children.is_empty() => {
                        let c = &children[rng.gen_range(0..children.len())];
                        let path = format!("/api/orders/{}", c["order_id"].as_str().unwrap());
                        v.app.call(Method::DELETE, &path, Some(&v.a), None).await.0
                    }
                    _ => {
                        let q = [500, 700, 1000][rng.gen_range(0..3)];
                        v.child(&v.a, parent, q, p(prices[rng.gen_range(0..prices.len())]), false).await.0
                    }
                };
                // Refusals are fine (too much, or the order changed meanwhile), and so is a
                // write shed under load (503 with Retry-After: a busy CI machine); the
                // counters are checked against the children after all. Errors are not.
                let refusals = [StatusCode::BAD_REQUEST, StatusCode::CONFLICT, StatusCode::SERVICE_UNAVAILABLE];
                assert!(
                    [StatusCode::OK, StatusCode::CREATED].contains(&s) || refusals.contains(&s),
                    "client {client} step {step}: {s}"
                );
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_counters_match_children(&v, &parents, "after 192 concurrent writes").await;
    std::sync::Arc::into_inner(v).unwrap().app.stop().await;
}

/// Edits race the close, run by the serving node's engine as its job loop runs it: an
/// order the close expired never comes back to WORKING, and the counters stay exact.
/// What this guards is the lock order (the close locks each parent like an edit does, so
/// neither deadlocks nor loses a compare-and-set); the compare-and-set itself is tested
/// with a stale read in the store's `stale_order_write_is_refused`.
async fn edits_racing_the_close_never_revive_an_order(b: Backend) {
    let v = std::sync::Arc::new(venue(b).await);
    let parents = vec![v.parent(&v.a, "BUY", 20_000).await, v.parent(&v.a, "SELL", 20_000).await];
    let mut ids = Vec::new();
    for (n, parent) in parents.iter().cycle().take(16).enumerate() {
        let (s, o) = v.child(&v.a, parent, 500 + n as i64, p("94.75"), n % 3 == 0).await;
        assert_eq!(s, StatusCode::CREATED, "{o}");
        ids.push(o["order_id"].as_str().unwrap().to_owned());
    }
    let mut edits = Vec::new();
    for (n, id) in ids.iter().enumerate() {
        let (v, id) = (v.clone(), id.clone());
        edits.push(tokio::spawn(async move {
            for k in 0..4_i64 {
                let body = json!({"quantity": 600 + 10 * k + n as i64});
                let (s, body) = v.app.patch(&format!("/api/orders/{id}"), Some(&v.a), body).await;
                assert!([StatusCode::OK, StatusCode::CONFLICT].contains(&s), "{s}: {body}");
            }
        }));
    }
    let expired = v.app.running.as_ref().unwrap().expire_day(tuesday_10am()).await.unwrap();
    for e in edits {
        e.await.unwrap();
    }
    assert_eq!(expired, 16);
    for id in &ids {
        let (_, o) = v.app.get(&format!("/api/orders/{id}"), Some(&v.a)).await;
        assert_eq!(o["state"], "EXPIRED", "{o}");
    }
    assert_counters_match_children(&v, &parents, "after the close").await;
    std::sync::Arc::into_inner(v).unwrap().app.stop().await;
}

/// Instruments, brokers and books are cached (ADR 0014): each change an admin or a
/// trader commits applies to the very next call, with every cache warm beforehand.
/// Changes an instrument's minimum block in the database behind the node's back, as
/// another node does before its announcement arrives: the node's cached copy is stale.
/// With `icebergs`, also what each resting iceberg shows, as that node's change writes it.
async fn set_block_unheard(v: &Venue, block: i64, icebergs: Option<i64>) {
    use sqlx::Connection as _;
    let id = v.instrument.parse::<sqlx::types::Uuid>().unwrap();
    let mut sql = vec![("update instrument set min_quantity = $1 where instrument_id = $2", block)];
    if let Some(shown) = icebergs {
        sql.push(("update child_order set shown = $1 where instrument_id = $2 and rests and iceberg", shown));
    }
    for (sql, n) in sql {
        if v.app.database_url.starts_with("sqlite:") {
            let mut c = sqlx::SqliteConnection::connect(&v.app.database_url).await.unwrap();
            sqlx::query(sql).bind(n).bind(id).execute(&mut c).await.unwrap();
        } else {
            let mut c = sqlx::PgConnection::connect(&v.app.database_url).await.unwrap();
            sqlx::query(sql).bind(n).bind(id).execute(&mut c).await.unwrap();
        }
    }
}

/// ADR 0057: what an iceberg shows is by the instrument's block when it is written, even
/// on a node whose copy of the instrument is stale. The order path's insert refuses the
/// block it was given and the node reads the instrument again; an edit, a take of part of
/// it and its part released back to the book (the taker withdraws) each write it by the
/// block they hold.
async fn icebergs_show_a_block_the_node_has_not_heard_of(b: Backend) {
    async fn shown_to_b(v: &Venue, price: &'static str) -> Value {
        let (_, book) = v.app.get(&format!("/api/instruments/{}/book", v.instrument), Some(&v.b)).await;
        let level = book["levels"].as_array().unwrap().iter().find(|l| l["price"] == json!(p(price).0)).cloned();
        level.map_or(json!(0), |l| l["sell_quantity"].clone())
    }
    let v = venue(b).await;
    let app = &v.app;
    let sell_at = |price| shown_to_b(&v, price);
    let sell = v.parent(&v.a, "SELL", 10_000).await;
    set_block_unheard(&v, 200, None).await;
    let (s, iceberg) = v.child(&v.a, &sell, 3000, p("94.8"), true).await;
    assert_eq!(s, StatusCode::CREATED, "{iceberg}");
    assert_eq!(sell_at("94.8").await, json!(200), "a new iceberg");

    set_block_unheard(&v, 300, None).await;
    let path = format!("/api/orders/{}", iceberg["order_id"].as_str().unwrap());
    let (s, edited) = app.patch(&path, Some(&v.a), json!({"limit_price": p("94.75").0})).await;
    assert_eq!(s, StatusCode::OK, "{edited}");
    assert_eq!((sell_at("94.8").await, sell_at("94.75").await), (json!(0), json!(300)), "an edit");

    set_block_unheard(&v, 250, None).await;
    let buy = v.parent(&v.b, "BUY", 500).await;
    let take = json!({"requesting_parent_order_id": buy["parent_order_id"], "quantity": 500, "price": p("94.75").0,
                      "requesting_broker_id": v.broker, "dry_run": false, "residual": false});
    let (s, took) = app.post("/api/order-match-requests", Some(&v.b), take).await;
    assert_eq!(s, StatusCode::CREATED, "{took}");
    assert_eq!(sell_at("94.75").await, json!(250), "the rest of an iceberg taken in part");

    set_block_unheard(&v, 400, None).await;
    let request = took[0]["order_match_request_id"].as_str().unwrap();
    let (s, withdrawn) =
        app.patch(&format!("/api/order-match-requests/{request}"), Some(&v.b), json!({"state": "CANCELLED"})).await;
    assert_eq!(s, StatusCode::OK, "{withdrawn}");
    assert_eq!(sell_at("94.75").await, json!(250 + 400), "the part released back to the book beside the rest");

    // Another node's change of block to 100, with the icebergs it wrote again (the book
    // shows 100 + 100); this node still has 200 cached. A preview, which reads the rows,
    // tells no more than the book shows (ADR 0027).
    set_block_unheard(&v, 100, Some(100)).await;
    let preview = json!({"requesting_parent_order_id": buy["parent_order_id"], "quantity": 500, "price": p("94.75").0,
                         "requesting_broker_id": v.broker, "dry_run": true, "residual": false});
    let (s, previewed) = app.post("/api/order-match-requests", Some(&v.b), preview).await;
    assert_eq!(s, StatusCode::OK, "{previewed}");
    let told: i64 = previewed.as_array().unwrap().iter().map(|b| b["quantity"].as_i64().unwrap()).sum();
    assert_eq!(told, 200, "a preview of {told} lots where the book shows 200: {previewed}");
    assert_balanced(&v).await;
    v.app.stop().await;
}

async fn reference_changes_apply_to_the_next_call(b: Backend) {
    let v = venue(b).await;
    let app = &v.app;
    let admin = app.admin_token().await;
    let parent = v.parent(&v.a, "BUY", 5000).await;
    let pid = parent["parent_order_id"].as_str().unwrap();
    let book_path = format!("/api/instruments/{}/book", v.instrument);
    let (s, _) = v.child(&v.a, &parent, 500, p("94.85"), false).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "94.85 is outside the band 94.70-94.80");
    let (_, book) = app.get(&book_path, Some(&v.b)).await;
    assert_eq!((book["max_tick_price"].clone(), book["levels"].clone()), (json!(94.8), json!([])));

    // A band move: the next order and the next book read see it.
    let (s, moved) = app
        .post(
            &format!("/api/admin/instruments/{}/band", v.instrument),
            Some(&admin),
            json!({"min_tick_price": 94.80, "max_tick_price": 94.90}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{moved}");
    let (s, o) = v.child(&v.a, &parent, 500, p("94.85"), true).await;
    assert_eq!(s, StatusCode::CREATED, "{o}");
    let (_, book) = app.get(&book_path, Some(&v.b)).await;
    assert_eq!(book["max_tick_price"], json!(94.9));
    assert_eq!(book["levels"][0]["price"], json!(94.85));
    assert_eq!(book["levels"][0]["buy_quantity"], json!(500));
    // Each firm sees its own share of the same book, whoever read it first.
    assert_eq!(book["levels"][0]["own_buy_quantity"], json!(0));
    let (_, own) = app.get(&book_path, Some(&v.a)).await;
    assert_eq!(own["levels"][0]["own_buy_quantity"], json!(500));
    let (_, again) = app.get(&book_path, Some(&v.b)).await;
    assert_eq!(again, book);
    // A new minimum block: the iceberg now shows 200 of its 500; under a larger one, all
    // of it; its owner's share the same.
    for (block, shown) in [(200, 200), (1000, 500), (200, 200)] {
        let (s, _) = app
            .patch(&format!("/api/admin/instruments/{}", v.instrument), Some(&admin), json!({"min_quantity": block}))
            .await;
        assert_eq!(s, StatusCode::OK);
        let (_, book) = app.get(&book_path, Some(&v.b)).await;
        assert_eq!(book["levels"][0]["buy_quantity"], json!(shown), "block {block}: {book}");
        let (_, own) = app.get(&book_path, Some(&v.a)).await;
        assert_eq!(own["levels"][0]["own_buy_quantity"], json!(shown), "block {block}: {own}");
    }

    // The firm's brokers: a new list and a broker's new name apply at once.
    let (_, dogger) = app
        .post(
            "/api/admin/companies",
            Some(&admin),
            json!({"name": "Dogger", "full_name": "Dogger Ltd", "roles": ["broker"]}),
        )
        .await;
    let (_, me) = app.get("/api/users/me", Some(&v.a)).await;
    let halyard = me["company_id"].as_str().unwrap();
    let only_dogger = json!([{"company_id": dogger["company_id"]}]);
    let (s, c) = app
        .patch(
            &format!("/api/admin/companies/{halyard}"),
            Some(&admin),
            json!({"name": "Halyard", "full_name": "Halyard LLP", "brokers": only_dogger, "default_broker": only_dogger[0]}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{c}");
    let (s, refused) = v.child(&v.a, &parent, 500, p("94.85"), false).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "Baltic is no longer Halyard's broker: {refused}");
    let (_, view) = app.get(&format!("/api/parent-orders/{pid}"), Some(&v.a)).await;
    assert_eq!(view["eligible_brokers"][0]["name"], json!("Dogger"));
    let (s, _) = app
        .patch(
            &format!("/api/admin/companies/{}", dogger["company_id"].as_str().unwrap()),
            Some(&admin),
            json!({"name": "Dogger Bank", "full_name": "Dogger Ltd", "roles": ["broker"]}),
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    let (_, view) = app.get(&format!("/api/parent-orders/{pid}"), Some(&v.a)).await;
    assert_eq!(view["eligible_brokers"][0]["name"], json!("Dogger Bank"));
    v.app.stop().await;
}

/// The close timer runs late (the node was down at 17:00): it expires what was working at
/// the close it was scheduled for, never what was placed after the next open.
async fn a_late_close_spares_the_next_days_orders(b: Backend) {
    let v = venue(b).await;
    let app = &v.app;
    let parent = v.parent(&v.a, "BUY", 2000).await;
    let (_, tuesday) = v.child(&v.a, &parent, 500, p("94.72"), false).await;
    app.clock.set(tuesday_10am() + Duration::days(1) - Duration::minutes(30));
    let (s, wednesday) = v.child(&v.a, &parent, 500, p("94.73"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{wednesday}");
    let running = app.running.as_ref().unwrap();
    running.expire_day(tuesday_10am() + Duration::hours(7)).await.unwrap();
    running.run_due_timers().await;
    let state = |o: &Value| format!("/api/orders/{}", o["order_id"].as_str().unwrap());
    assert_eq!(app.get(&state(&tuesday), Some(&v.a)).await.1["state"], "EXPIRED");
    assert_eq!(app.get(&state(&wednesday), Some(&v.a)).await.1["state"], "WORKING");
    let (_, view) =
        app.get(&format!("/api/parent-orders/{}", parent["parent_order_id"].as_str().unwrap()), Some(&v.a)).await;
    assert_eq!(view["quantities"], json!({"tradable": 1500, "working": 500, "matched": 0}));
    v.app.stop().await;
}

/// The review's finding (issue 26, ADR 0027): a company admin gave a trader a multiplier of
/// 9e18, a parent order of i64::MAX went in, and two child orders whose sum left 64 bits
/// broke the book, market data, previews and the kill switch for every firm. Every number
/// is bounded now, at the edge, in the engine and in the database.
async fn one_firm_cannot_break_an_instrument(b: Backend) {
    let v = venue(b).await;
    let app = &v.app;
    let admin = app.admin_token().await;
    let (_, me) = app.get("/api/users/me", Some(&v.a)).await;
    let user = format!("/api/users/{}", me["user_id"].as_str().unwrap());
    for m in [9_000_000_000_000_000_000_i64, i64::MAX, 1_000_000_001] {
        let (s, r) = app.patch(&user, Some(&admin), json!({"parent_order_limit_multiplier": m})).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{m}: {r}");
        assert_eq!(messages(&r), [("parent_order_limit_multiplier".into(), "Must be at most 1000000000".into())]);
    }
    for m in [0, -2] {
        let (s, r) = app.patch(&user, Some(&admin), json!({"parent_order_limit_multiplier": m})).await;
        assert_eq!((s, messages(&r)[0].0.as_str()), (StatusCode::BAD_REQUEST, "parent_order_limit_multiplier"));
    }
    let (s, r) = app.patch(&user, Some(&admin), json!({"parent_order_limit_multiplier": 1_000_000})).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let a = app.login_remembered("a@halyard.test", PW).await;

    // The largest parent is the multiplier times the block (5e8 here), below the venue's
    // maximum; past 64 bits the edge answers 400 naming the field.
    let body = |q: Value| json!({"direction": "SELL", "instrument_id": v.instrument, "quantity": q});
    let (_, r) = app.post("/api/parent-orders", Some(&a), body(json!(500_000_001))).await;
    assert_eq!(messages(&r), [("quantity".into(), "The maximum quantity is 500000000".into())]);
    for q in [json!(i64::MAX), json!(1_000_000_000_001_i64), json!(-1)] {
        let (s, r) = app.post("/api/parent-orders", Some(&a), body(q.clone())).await;
        assert_eq!((s, messages(&r)[0].0.as_str()), (StatusCode::BAD_REQUEST, "quantity"), "{q}: {r}");
    }
    let parent = v.parent(&a, "SELL", 500_000_000).await;

    // Child orders are checked against what is left of the parent, not its whole quantity.
    let (s, first) = v.child(&a, &parent, 499_999_500, p("94.75"), true).await;
    assert_eq!(s, StatusCode::CREATED, "{first}");
    let (s, r) = v.child(&a, &parent, 1000, p("94.75"), false).await;
    assert_eq!(
        (s, messages(&r)),
        (StatusCode::BAD_REQUEST, vec![("quantity".into(), "Exceeds available quantity".into())])
    );
    for q in [i64::MAX, i64::MAX - 499_999_000] {
        let (s, r) = v.child(&a, &parent, q, p("94.75"), false).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{q}: {r}");
    }
    let (s, r) = v.child(&a, &parent, 500, p("94.76"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{r}");
    assert_eq!(quantities(&v, &a, &parent).await, json!({"tradable": 0, "working": 500_000_000, "matched": 0}));
    let edit = format!("/api/orders/{}", first["order_id"].as_str().unwrap());
    let (s, r) = app.patch(&edit, Some(&a), json!({"quantity": i64::MAX})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{r}");
    let (s, r) = app.patch(&edit, Some(&a), json!({"quantity": 500_000_000})).await;
    assert_eq!(
        (s, messages(&r)),
        (StatusCode::BAD_REQUEST, vec![("quantity".into(), "Exceeds available quantity".into())])
    );

    // Every firm still reads the book and market data, previews and takes; extreme takes
    // and RFQs are refused with the field.
    for token in [&a, &v.b] {
        for what in ["book", "market-data"] {
            let (s, r) = app.get(&format!("/api/instruments/{}/{what}", v.instrument), Some(token)).await;
            assert_eq!(s, StatusCode::OK, "{what}: {r}");
        }
    }
    let (_, book) = app.get(&format!("/api/instruments/{}/book", v.instrument), Some(&v.b)).await;
    let shown: i64 = book["levels"].as_array().unwrap().iter().map(|l| l["sell_quantity"].as_i64().unwrap()).sum();
    assert_eq!(shown, 1000, "the iceberg shows one block: {book}");
    let taker = v.parent(&v.b, "BUY", 100_000).await;
    let take = |q: Value, dry_run: bool| {
        json!({"requesting_parent_order_id": taker["parent_order_id"], "quantity": q, "price": p("94.76").0,
               "requesting_broker_id": v.broker, "dry_run": dry_run})
    };
    for q in [json!(i64::MAX), json!(-5), json!(1_000_000_000_001_i64)] {
        let (s, r) = app.post("/api/order-match-requests", Some(&v.b), take(q.clone(), true)).await;
        assert_eq!((s, messages(&r)[0].0.as_str()), (StatusCode::BAD_REQUEST, "quantity"), "{q}: {r}");
        let (s, r) = app
            .post(
                "/api/rfqs",
                Some(&v.b),
                json!({"parent_order_id": taker["parent_order_id"], "quantity": q,
                   "liquidity_provider_ids": [me["company_id"]]}),
            )
            .await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{r}");
        assert!(messages(&r).iter().any(|(f, _)| f == "quantity"), "{q}: {r}");
    }
    let (s, r) = app.post("/api/order-match-requests", Some(&v.b), take(json!(100_000), true)).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let (s, r) = app.post("/api/order-match-requests", Some(&v.b), take(json!(1000), false)).await;
    assert_eq!(s, StatusCode::CREATED, "{r}");

    // The firm's own reads and the kill switch work whatever it holds.
    let pid = parent["parent_order_id"].as_str().unwrap();
    let (s, r) = app.get(&format!("/api/parent-orders/{pid}"), Some(&a)).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let (s, r) = app
        .post(&format!("/api/companies/{}/kill-switch", me["company_id"].as_str().unwrap()), Some(&admin), json!({}))
        .await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let kids = children(&v, &a, &parent).await;
    assert!(kids.iter().all(|(state, _)| state != "WORKING"), "{kids:?}");
    assert_balanced_for(&v, &[&a, &v.b]).await;
}

/// On a holiday the status names it and says when the venue opens next, so the screens can
/// (issue 28.15); on any other day it says none.
async fn a_holiday_is_named_in_the_status(b: Backend) {
    use upstairs_domain::calendar::Holiday;
    let app = TestApp::spawn_with(b, |s| {
        s.calendar.holidays =
            vec![Holiday::parse("2026-03-03=Venue Day").unwrap(), Holiday::parse("2026-03-04").unwrap()];
    })
    .await;
    let admin = app.admin_token().await;
    app.clock.set(tuesday_10am());
    let (_, st) = app.get("/api/platform/status", Some(&admin)).await;
    assert_eq!(
        (st["open"].clone(), st["holiday"].clone(), st["next_open"].clone()),
        (json!(false), json!({"date": "2026-03-03", "name": "Venue Day"}), json!("2026-03-05T09:00:00Z"))
    );
    app.clock.set(tuesday_10am() + Duration::days(1));
    let (_, st) = app.get("/api/platform/status", Some(&admin)).await;
    assert_eq!(st["holiday"], json!({"date": "2026-03-04", "name": null}));
    app.clock.set(tuesday_10am() + Duration::days(2));
    let (_, st) = app.get("/api/platform/status", Some(&admin)).await;
    assert_eq!((st["open"].clone(), st["holiday"].clone()), (json!(true), Value::Null));
    app.stop().await;
}

/// An exchange's calendar (ADR 0052), kept by the venue admin and in force at once: the
/// instruments naming its MIC follow its hours and holidays, refused with the reason and
/// the next opening; its close ends only their day; every other instrument keeps the
/// venue's own hours.
async fn exchange_calendars_decide_per_instrument(b: Backend) {
    let v = venue(b).await;
    let app = &v.app;
    let admin = app.admin_token().await;
    let (s, sonia) = app
        .post(
            "/api/admin/instruments",
            Some(&admin),
            json!({"name": "SONIA 3M Mar27-Jun27", "term": "Mar27-Jun27",
            "min_quantity": 500, "tick_size": 0.01, "exchange_id": "SO3", "currency": "GBP",
            "min_tick_price": 94.70, "max_tick_price": 94.80}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{sonia}");
    let (s, r) = app
        .patch(&format!("/api/admin/instruments/{}", v.instrument), Some(&admin), json!({"exchange_iso_code": "XEUR"}))
        .await;
    assert_eq!(s, StatusCode::OK, "{r}");
    // Tuesday 10:00 in London: an order rests on each instrument.
    let seller = v.parent(&v.a, "SELL", 1000).await;
    let (s, resting) = v.child(&v.a, &seller, 500, p("94.75"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{resting}");
    let (s, other_parent) = app
        .post(
            "/api/parent-orders",
            Some(&v.a),
            json!({"direction": "SELL", "instrument_id": sonia["instrument_id"], "quantity": 1000}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{other_parent}");
    let (s, other) = app
        .post(
            "/api/orders",
            Some(&v.a),
            json!({"parent_order_id": other_parent["parent_order_id"], "quantity": 500,
            "limit_price": p("94.75").0, "residual": true, "iceberg": false, "broker_id": v.broker}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{other}");
    let taker = v.parent(&v.b, "BUY", 500).await;

    let eurex = |close: &str, holidays: Value| {
        json!({"name": "Eurex", "time_zone": "Europe/Berlin", "open_time": "08:00", "close_time": close,
               "parent_orders_from": "07:30", "days": ["Mon", "Tue", "Wed", "Thu", "Fri"], "holidays": holidays})
    };
    // Only a venue admin keeps calendars, and every field is checked.
    let (s, _) = app.put("/api/admin/exchanges/XEUR", Some(&v.a), eurex("22:00", json!([]))).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let (s, r) = app
        .put(
            "/api/admin/exchanges/xeur",
            Some(&admin),
            json!({"name": "", "time_zone": "Mars/Base", "open_time": "9am",
            "close_time": "17:00", "parent_orders_from": "05:30", "days": [],
            "holidays": [{"date": "2026-12-25"}, {"date": "2026-12-25", "name": "Christmas"}]}),
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{r}");
    assert_eq!(
        messages(&r),
        [
            ("mic".into(), "A MIC is 4 capital letters or digits".into()),
            ("name".into(), "Name is required".into()),
            ("time_zone".into(), "Unknown time zone: Mars/Base".into()),
            ("open_time".into(), "Use a time like 09:00".into()),
            ("days".into(), "Pick at least one trading day".into()),
            ("holidays".into(), "2026-12-25 is listed twice".into()),
        ]
    );

    // Eurex is on holiday today: nothing trades on its instrument, the other trades on.
    let holiday = json!([{"date": "2026-03-03", "name": "Eurex Day"}, {"date": "2026-12-25", "name": " "}]);
    let (s, e) = app.put("/api/admin/exchanges/XEUR", Some(&admin), eurex("22:00", holiday)).await;
    assert_eq!(s, StatusCode::CREATED, "{e}");
    assert_eq!((e["instruments"].clone(), e["status"]["open"].clone()), (json!(1), json!(false)));
    assert_eq!(
        e["holidays"],
        json!([{"date": "2026-03-03", "name": "Eurex Day"}, {"date": "2026-12-25", "name": null}])
    );
    let (_, st) = app.get("/api/platform/status", Some(&v.b)).await;
    assert_eq!(st["open"], json!(true), "the venue's own hours: {st}");
    let x = &st["exchanges"][0];
    assert_eq!(
        (
            x["mic"].as_str(),
            x["open"].clone(),
            x["holiday"]["name"].as_str(),
            x["next_open"].as_str(),
            x["days"].clone()
        ),
        (
            Some("XEUR"),
            json!(false),
            Some("Eurex Day"),
            Some("2026-03-04T07:00:00Z"),
            json!(["Mon", "Tue", "Wed", "Thu", "Fri"])
        )
    );
    let closed = "Eurex is closed today for Eurex Day. It opens again tomorrow at 08:00 Europe/Berlin time.";
    let take = json!({"requesting_parent_order_id": taker["parent_order_id"], "quantity": 500, "price": p("94.75").0,
                      "requesting_broker_id": v.broker, "dry_run": true});
    let (s, r) = app.post("/api/order-match-requests", Some(&v.b), take.clone()).await;
    assert_eq!((s, r["detail"].as_str()), (StatusCode::CONFLICT, Some(closed)));
    let (s, r) = v.child(&v.a, &seller, 500, p("94.75"), false).await;
    assert_eq!((s, r["detail"].as_str()), (StatusCode::CONFLICT, Some(closed)));
    let (s, r) = v.try_parent(&v.b, "BUY", 500).await;
    assert_eq!((s, r["detail"].as_str()), (StatusCode::CONFLICT, Some(closed)));
    let (_, r) = app.get(&format!("/api/orders/{}", resting["order_id"].as_str().unwrap()), Some(&v.a)).await;
    assert_eq!(r["waiting_for_open"], json!(true), "{r}");
    let (s, r) = app
        .post(
            "/api/orders",
            Some(&v.a),
            json!({"parent_order_id": other_parent["parent_order_id"], "quantity": 500,
            "limit_price": p("94.76").0, "residual": true, "iceberg": false, "broker_id": v.broker}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "the venue's own hours: {r}");

    // The holiday is taken out and the close moved to 12:00 Berlin: at once, it trades,
    // and its day ends at its own close.
    let (s, e) = app.put("/api/admin/exchanges/XEUR", Some(&admin), eurex("12:00", json!([]))).await;
    assert_eq!((s, e["status"]["open"].clone()), (StatusCode::OK, json!(true)), "{e}");
    let (s, r) = app.post("/api/order-match-requests", Some(&v.b), take).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    app.clock.set(tuesday_10am() + Duration::hours(1));
    run_timers(&v).await;
    let state = |id: &Value| {
        let path = format!("/api/orders/{}", id.as_str().unwrap());
        let token = v.a.clone();
        async move { app.get(&path, Some(&token)).await.1["state"].clone() }
    };
    assert_eq!(state(&resting["order_id"]).await, json!("EXPIRED"), "Eurex closed at 12:00 Berlin");
    assert_eq!(state(&other["order_id"]).await, json!("WORKING"), "the venue closes at 17:00 London");
    app.clock.set(tuesday_10am() + Duration::hours(7));
    run_timers(&v).await;
    assert_eq!(state(&other["order_id"]).await, json!("EXPIRED"));

    // A session that crosses midnight: Wednesday's opens at 13:00 Berlin on Tuesday and
    // closes at 12:00 on Wednesday; parent orders open between the close and the open.
    let overnight = |from: &str| {
        let mut e = eurex("12:00", json!([]));
        e["open_time"] = json!("13:00");
        e["parent_orders_from"] = json!(from);
        e
    };
    let (s, r) = app.put("/api/admin/exchanges/XEUR", Some(&admin), overnight("05:30")).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{r}");
    assert_eq!(messages(&r), [("parent_orders_from".into(), "Parent orders cannot open after the open".into())]);
    let (s, e) = app.put("/api/admin/exchanges/XEUR", Some(&admin), overnight("12:30")).await;
    assert_eq!(s, StatusCode::OK, "{e}");
    assert_eq!(
        (e["status"]["open"].clone(), e["status"]["next_close"].as_str()),
        (json!(true), Some("2026-03-04T11:00:00Z")),
        "18:00 Berlin on Tuesday is in Wednesday's session: {e}"
    );
    let (s, r) = v.child(&v.a, &seller, 500, p("94.75"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{r}");
    // Wednesday 12:10 Berlin, between its close and Thursday's parent orders: none.
    app.clock.set(tuesday_10am() + Duration::hours(25) + Duration::minutes(10));
    let (s, r) = v.try_parent(&v.b, "BUY", 500).await;
    let refused = "Parent orders on Eurex can be created on trading days from 12:30 the day before to 12:00 \
                   Europe/Berlin time.";
    assert_eq!((s, r["detail"].as_str()), (StatusCode::CONFLICT, Some(refused)));

    // Removed, its instrument follows the venue's hours again (the admin signs in again: a
    // day went by).
    let admin = app.admin_token().await;
    let (s, _) = app.delete("/api/admin/exchanges/XEUR", Some(&admin)).await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    let (s, _) = app.delete("/api/admin/exchanges/XEUR", Some(&admin)).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (_, list) = app.get("/api/admin/exchanges", Some(&admin)).await;
    assert_eq!(list, json!([]));
    app.clock.set(tuesday_10am() + Duration::days(1) + Duration::hours(2));
    let (_, st) = app.get("/api/platform/status", Some(&v.b)).await;
    assert_eq!((st["open"].clone(), st["exchanges"].clone()), (json!(true), json!([])));
    let (s, r) = v.child(&v.a, &seller, 500, p("94.75"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{r}");
    v.app.stop().await;
}
