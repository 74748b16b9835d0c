#![allow(clippy::unwrap_used)]
//! Issue 13's hardening over HTTP on both backends: idempotent writes (ADR 0023).
mod support;

use chrono::Duration;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use support::venue::*;
use support::*;

on_both_backends!(
    keyed_writes_act_once,
    a_keyed_take_replays_every_request_it_made,
    racing_retries_act_once,
    writes_are_throttled_per_user_and_kind,
    failed_sign_ins_slow_down_and_never_lock_out,
    a_trusted_proxy_names_the_client,
    texts_and_settings_are_bounded,
    links_are_bound_to_their_purpose,
    control_characters_are_refused_by_field,
    unknown_keys_are_refused_by_name,
    admin_creates_act_once_per_key,
);

fn order_body(v: &Venue, parent: &Value, quantity: i64, price: &str) -> Value {
    json!({"parent_order_id": parent["parent_order_id"], "quantity": quantity,
           "limit_price": serde_json::value::RawValue::from_string(price.into()).unwrap(),
           "residual": true, "iceberg": false, "broker_id": v.broker})
}

async fn keyed_writes_act_once(b: Backend) {
    let v = venue(b).await;
    // A parent order: the retry answers the first answer, and makes nothing more.
    let body = json!({"direction": "BUY", "instrument_id": v.instrument, "quantity": 5000});
    let (s1, p1) = v.app.post_keyed("/api/parent-orders", &v.a, "parent-1", body.clone()).await;
    assert_eq!(s1, StatusCode::CREATED, "{p1}");
    let (s2, p2) = v.app.post_keyed("/api/parent-orders", &v.a, "parent-1", body.clone()).await;
    assert_eq!((s2, &p2), (StatusCode::CREATED, &p1));
    let (_, parents) = v.app.get("/api/parent-orders", Some(&v.a)).await;
    assert_eq!(parents.as_array().unwrap().len(), 1, "{parents}");

    // The same key with another body is refused, and changes nothing.
    let other = json!({"direction": "SELL", "instrument_id": v.instrument, "quantity": 5000});
    let (s, e) = v.app.post_keyed("/api/parent-orders", &v.a, "parent-1", other).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
    assert_eq!(e["detail"], "This Idempotency-Key was already used with a different request.");

    // A key is the user's: another trader's same key is a new write.
    let (s, _) = v.app.post_keyed("/api/parent-orders", &v.b, "parent-1", body.clone()).await;
    assert_eq!(s, StatusCode::CREATED);
    // No key: every post acts.
    v.parent(&v.a, "BUY", 1000).await;
    let (_, parents) = v.app.get("/api/parent-orders", Some(&v.a)).await;
    assert_eq!(parents.as_array().unwrap().len(), 2, "{parents}");

    // A child order, through the one-statement write: once, whatever the retries.
    let order = order_body(&v, &p1, 1000, "94.75");
    let (s1, o1) = v.app.post_keyed("/api/orders", &v.a, "order-1", order.clone()).await;
    assert_eq!(s1, StatusCode::CREATED, "{o1}");
    for _ in 0..3 {
        let (s, o) = v.app.post_keyed("/api/orders", &v.a, "order-1", order.clone()).await;
        assert_eq!((s, o["order_id"].clone()), (StatusCode::CREATED, o1["order_id"].clone()));
    }
    assert_eq!(children(&v, &v.a, &p1).await, vec![("WORKING".to_owned(), 1000)]);
    assert_eq!(quantities(&v, &v.a, &p1).await["working"], 1000);
    // A refused write keeps no key: fixed, the same key then acts.
    let (s, _) = v.app.post_keyed("/api/orders", &v.a, "order-2", order_body(&v, &p1, 100, "94.75")).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let (s, _) = v.app.post_keyed("/api/orders", &v.a, "order-2", order_body(&v, &p1, 500, "94.75")).await;
    assert_eq!(s, StatusCode::CREATED);
    assert_eq!(quantities(&v, &v.a, &p1).await["working"], 1500);

    // Keys that are not one visible token are refused before anything happens.
    for bad in ["", "has space", &"k".repeat(256)] {
        let (s, e) = v.app.post_keyed("/api/orders", &v.a, bad, order.clone()).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{bad:?}: {e}");
    }
    assert_eq!(quantities(&v, &v.a, &p1).await["working"], 1500);
    assert_balanced(&v).await;
}

async fn a_keyed_take_replays_every_request_it_made(b: Backend) {
    let v = venue(b).await;
    let sell = v.parent(&v.b, "SELL", 3000).await;
    for price in ["94.74", "94.75"] {
        let (s, o) = v.app.post("/api/orders", Some(&v.b), order_body(&v, &sell, 1000, price)).await;
        assert_eq!(s, StatusCode::CREATED, "{o}");
    }
    let buy = v.parent(&v.a, "BUY", 3000).await;
    let take = json!({"requesting_parent_order_id": buy["parent_order_id"], "price": 94.75, "quantity": 2000,
                      "requesting_broker_id": v.broker, "residual": false});
    let (s1, r1) = v.app.post_keyed("/api/order-match-requests", &v.a, "take-1", take.clone()).await;
    assert_eq!(s1, StatusCode::CREATED, "{r1}");
    assert_eq!(r1.as_array().unwrap().len(), 2, "{r1}");
    let (s2, r2) = v.app.post_keyed("/api/order-match-requests", &v.a, "take-1", take.clone()).await;
    assert_eq!((s2, &r2), (StatusCode::CREATED, &r1));
    let (_, pending) = v.app.get("/api/order-match-requests", Some(&v.a)).await;
    assert_eq!(pending.as_array().unwrap().len(), 2, "{pending}");
    assert_eq!(quantities(&v, &v.a, &buy).await["working"], 2000);
    // A dry run writes nothing, so its key is not kept or checked: it only looks.
    let mut dry = take.clone();
    dry["dry_run"] = json!(true);
    dry["quantity"] = json!(1000);
    let (s, hits) = v.app.post_keyed("/api/order-match-requests", &v.a, "take-1", dry).await;
    assert_eq!(s, StatusCode::OK, "{hits}");
    assert_balanced(&v).await;
}

async fn racing_retries_act_once(b: Backend) {
    let v = venue(b).await;
    let parent = v.parent(&v.a, "BUY", 20000).await;
    let body = order_body(&v, &parent, 1000, "94.75");
    let tries = (0..8).map(|_| v.app.post_keyed("/api/orders", &v.a, "racing", body.clone()));
    let answers = futures::future::join_all(tries).await;
    let ids: std::collections::BTreeSet<String> = answers
        .iter()
        .map(|(s, o)| {
            assert_eq!(*s, StatusCode::CREATED, "{o}");
            o["order_id"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(ids.len(), 1, "{answers:?}");
    assert_eq!(children(&v, &v.a, &parent).await, vec![("WORKING".to_owned(), 1000)]);
    assert_balanced(&v).await;
}

async fn writes_are_throttled_per_user_and_kind(b: Backend) {
    let v = venue_with(b, |s| {
        s.rate_limits.write_burst = 3;
        s.rate_limits.writes_per_second = 1;
    })
    .await;
    // Three orders' writes at once: a parent and two children; the fourth waits a second.
    let parent = v.parent(&v.a, "BUY", 5000).await;
    for _ in 0..2 {
        let (s, o) = v.app.post("/api/orders", Some(&v.a), order_body(&v, &parent, 500, "94.75")).await;
        assert_eq!(s, StatusCode::CREATED, "{o}");
    }
    let res = v
        .app
        .client
        .post(format!("{}/api/orders", v.app.base))
        .bearer_auth(&v.a)
        .json(&order_body(&v, &parent, 500, "94.75"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(res.headers()["retry-after"], "1");
    let problem: Value = res.json().await.unwrap();
    assert_eq!(problem["detail"], "Too many requests in a short time. Please wait a moment and try again.");
    // Nothing of the refused write happened.
    assert_eq!(quantities(&v, &v.a, &parent).await["working"], 1000);
    // Another user, and another kind of write, have their own buckets.
    let other = v.parent(&v.b, "SELL", 5000).await;
    let (s, _) = v.app.post("/api/orders", Some(&v.b), order_body(&v, &other, 500, "94.76")).await;
    assert_eq!(s, StatusCode::CREATED);
    let take = json!({"requesting_parent_order_id": parent["parent_order_id"], "price": 94.76, "quantity": 500,
                      "requesting_broker_id": v.broker, "residual": false});
    let (s, t) = v.app.post("/api/order-match-requests", Some(&v.a), take).await;
    assert_eq!(s, StatusCode::CREATED, "{t}");
    // A second later one more order goes in.
    v.app.clock.advance(Duration::seconds(1));
    let (s, _) = v.app.post("/api/orders", Some(&v.a), order_body(&v, &parent, 500, "94.75")).await;
    assert_eq!(s, StatusCode::CREATED);
    let (s, _) = v.app.post("/api/orders", Some(&v.a), order_body(&v, &parent, 500, "94.75")).await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS);
    assert_balanced(&v).await;
}

async fn failed_sign_ins_slow_down_and_never_lock_out(b: Backend) {
    let v = venue(b).await;
    let login = |password: &'static str, xff: Option<&'static str>| {
        let app = &v.app;
        async move {
            let mut headers = vec![];
            if let Some(x) = xff {
                headers.push(("x-forwarded-for", x));
            }
            let body = json!({"email": "a@halyard.test", "password": password});
            app.call_with(Method::POST, "/api/auth/login", None, &headers, Some(body)).await
        }
    };
    // Five wrong passwords cost nothing more than the answer; the sixth try waits 1 s.
    for _ in 0..5 {
        assert_eq!(login("Wrong-Pass1", None).await.0, StatusCode::UNAUTHORIZED);
    }
    let (s, e) = login(PW, None).await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS, "{e}");
    // A forged X-Forwarded-For from an untrusted peer changes nothing: the same address.
    assert_eq!(login(PW, Some("198.51.100.7")).await.0, StatusCode::TOO_MANY_REQUESTS);
    // After the wait the right password signs in, and clears the count.
    v.app.clock.advance(Duration::seconds(1));
    let (s, t) = login(PW, None).await;
    assert_eq!(s, StatusCode::OK, "{t}");
    assert_eq!(login("Wrong-Pass1", None).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(login(PW, None).await.0, StatusCode::OK);
}

async fn a_trusted_proxy_names_the_client(b: Backend) {
    let v = venue_with(b, |s| s.trusted_proxies = vec!["127.0.0.0/8".parse().unwrap()]).await;
    let login = |password: &'static str, xff: &'static str| {
        let app = &v.app;
        async move {
            let body = json!({"email": "a@halyard.test", "password": password});
            app.call_with(Method::POST, "/api/auth/login", None, &[("x-forwarded-for", xff)], Some(body)).await.0
        }
    };
    for _ in 0..5 {
        assert_eq!(login("Wrong-Pass1", "198.51.100.7").await, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(login(PW, "198.51.100.7").await, StatusCode::TOO_MANY_REQUESTS);
    // The trader at another address, behind the same proxy, is not slowed.
    assert_eq!(login(PW, "203.0.113.20").await, StatusCode::OK);
    // The audit trail names the client, not the proxy.
    let admin = v.app.admin_token().await;
    let (_, logs) = v.app.get("/api/admin/action-logs?email=a%40halyard&size=1", Some(&admin)).await;
    assert_eq!(logs["items"][0]["details"]["address"], "203.0.113.20", "{logs}");
}

async fn texts_and_settings_are_bounded(b: Backend) {
    let v = venue(b).await;
    let parent = |instructions: String| {
        json!({"direction": "BUY", "instrument_id": v.instrument, "quantity": 1000,
               "broker_instructions": instructions})
    };
    let (s, e) = v.app.post("/api/parent-orders", Some(&v.a), parent("é".repeat(2001))).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    assert_eq!(e["errors"][0]["field"], "broker_instructions", "{e}");
    let (s, p) = v.app.post("/api/parent-orders", Some(&v.a), parent("é".repeat(2000))).await;
    assert_eq!(s, StatusCode::CREATED, "{p}");

    let long_query = format!("/api/orders?state={}", "WORKING,".repeat(600));
    assert_eq!(v.app.get(&long_query, Some(&v.a)).await.0, StatusCode::BAD_REQUEST);

    let (_, me) = v.app.get("/api/users/me", Some(&v.a)).await;
    let path = format!("/api/users/{}", me["user_id"].as_str().unwrap());
    let keys: Vec<Value> = (0..33).map(|i| json!({"key": format!("k{i}"), "value": true})).collect();
    let (s, e) = v.app.patch(&path, Some(&v.a), json!({"ui_metadata": keys})).await;
    assert_eq!((s, e["errors"][0]["field"].clone()), (StatusCode::BAD_REQUEST, json!("ui_metadata")), "{e}");
    let big: Vec<Value> = (0..10).map(|i| json!({"key": format!("k{i}"), "value": "x".repeat(1900)})).collect();
    let (s, e) = v.app.patch(&path, Some(&v.a), json!({"ui_metadata": big})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    let (s, e) = v.app.patch(&path, Some(&v.a), json!({"ui_metadata": [{"key": "TOOLTIPS", "value": []}]})).await;
    assert_eq!(s, StatusCode::OK, "{e}");
}

async fn links_are_bound_to_their_purpose(b: Backend) {
    let v = venue(b).await;
    let (s, _) = v.app.post("/api/users/password-reset", None, json!({"email": "a@halyard.test"})).await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    let mail = v.app.mails_to("a@halyard.test", 1).await.pop().unwrap();
    let token = link_token(&mail, "reset-password");
    let path = format!("/api/users/password-reset/{token}");
    // Checked or used as an activation link, a reset link is not valid, and stays unused.
    let (s, _) = v.app.get(&format!("{path}?purpose=ACTIVATION"), None).await;
    assert_eq!(s, StatusCode::GONE);
    let (s, e) = v.app.post(&path, None, json!({"password": "Another-Pass-2", "purpose": "ACTIVATION"})).await;
    assert_eq!(s, StatusCode::GONE, "{e}");
    assert_eq!(e["detail"], "This link has expired or has already been used.");
    let (s, l) = v.app.get(&format!("{path}?purpose=RESET"), None).await;
    assert_eq!((s, l["purpose"].clone()), (StatusCode::OK, json!("RESET")));
    let (s, e) = v.app.post(&path, None, json!({"password": "Another-Pass-2", "purpose": "RESET"})).await;
    assert_eq!(s, StatusCode::NO_CONTENT, "{e}");
    v.app.login("a@halyard.test", "Another-Pass-2").await;
}

/// 400 naming `field`, as a problem with `errors: [{field, message}]`.
#[track_caller]
fn assert_refused(answer: &(StatusCode, Value), field: &str) {
    let (s, e) = answer;
    assert_eq!(*s, StatusCode::BAD_REQUEST, "{field}: {e}");
    assert_eq!(e["errors"][0]["field"], field, "{e}");
}

async fn control_characters_are_refused_by_field(b: Backend) {
    let v = venue(b).await;
    let admin = v.app.admin_token().await;
    let (_, me) = v.app.get("/api/users/me", Some(&admin)).await;
    for bad in ["Night\u{0}owl", "Evil\u{1b}[31m", "Del\u{7f}ete", "Next\u{85}line", "Two\nlines", "\u{0}\u{0}"] {
        let newsletter = json!({"name": bad, "description": "Daily rates"});
        assert_refused(&v.app.post("/api/admin/newsletters", Some(&admin), newsletter).await, "name");
        let company = json!({"name": bad, "full_name": "Evil Ltd"});
        assert_refused(&v.app.post("/api/admin/companies", Some(&admin), company).await, "name");
        let user = json!({"email": "eve@upstairs.test", "first_name": "Eve", "last_name": bad,
                          "company_id": me["company_id"], "roles": ["trader"]});
        assert_refused(&v.app.post("/api/users", Some(&admin), user).await, "last_name");
        let instrument = json!({"name": bad, "term": "Dec26", "min_quantity": 500, "tick_size": 0.01,
                                "exchange_id": "I", "currency": "EUR", "min_tick_price": 94.7, "max_tick_price": 94.8});
        assert_refused(&v.app.post("/api/admin/instruments", Some(&admin), instrument).await, "name");
        // In a nested object, through the keyed path, in an e-mail.
        let nested =
            json!({"name": "Osprey", "full_name": "Osprey Ltd", "brokers": [{"company_id": v.broker, "name": bad}]});
        assert_refused(&v.app.post("/api/admin/companies", Some(&admin), nested).await, "name");
        // (A parent order's instructions are multi-line: a line break is theirs.)
        if !bad.contains('\n') {
            let keyed = json!({"direction": "BUY", "instrument_id": v.instrument, "quantity": 1000,
                               "broker_instructions": bad});
            assert_refused(&v.app.post_keyed("/api/parent-orders", &v.a, "bad", keyed).await, "broker_instructions");
        }
        let email = json!({"email": format!("{bad}@upstairs.test")});
        assert_refused(&v.app.post("/api/users/password-reset", None, email).await, "email");
    }
    // Nothing was stored.
    let (_, newsletters) = v.app.get("/api/admin/newsletters", Some(&admin)).await;
    assert_eq!(newsletters, json!([]));
    // A query parameter no call takes (schemathesis sent one to the outbox).
    assert_refused(&v.app.get("/api/admin/outbox?page=0&colour=red", Some(&admin)).await, "colour");
    assert_refused(&v.app.get("/api/parent-orders?state=ACTIVE&colour=red", Some(&v.a)).await, "colour");
    let (_, users) = v.app.get("/api/admin/users?email=eve", Some(&admin)).await;
    assert_eq!(users["total_items"], 0, "{users}");
    let (_, parents) = v.app.get("/api/parent-orders", Some(&v.a)).await;
    assert_eq!(parents, json!([]));

    // A multi-line field keeps its line breaks and tabs, and nothing else.
    let lines = "Line 1\nLine 2\r\n\tindented";
    let (s, n) =
        v.app.post("/api/admin/newsletters", Some(&admin), json!({"name": "Rates", "description": lines})).await;
    assert_eq!((s, n["description"].as_str()), (StatusCode::CREATED, Some(lines)), "{n}");
    let bad = json!({"name": "Rates 2", "description": "Line 1\u{0}"});
    assert_refused(&v.app.post("/api/admin/newsletters", Some(&admin), bad).await, "description");
    let parent = |text: &str| json!({"direction": "BUY", "instrument_id": v.instrument, "quantity": 1000, "broker_instructions": text});
    let (s, p) = v.app.post("/api/parent-orders", Some(&v.a), parent("Work it slowly\nafter 11:00")).await;
    assert_eq!((s, p["broker_instructions"].as_str()), (StatusCode::CREATED, Some("Work it slowly\nafter 11:00")));
    assert_refused(&v.app.post("/api/parent-orders", Some(&v.a), parent("\u{1b}[2J")).await, "broker_instructions");

    // Query and path text.
    assert_refused(&v.app.get("/api/instruments?name=%00", Some(&v.a)).await, "name");
    assert_refused(&v.app.get("/api/users/password-reset/ab%1Bcd", None).await, "hash");
}

async fn unknown_keys_are_refused_by_name(b: Backend) {
    let v = venue(b).await;
    let admin = v.app.admin_token().await;
    // A nested object: the newsletter's filter.
    let body =
        json!({"name": "Rates", "description": "Daily", "filter_criteria": {"instrument_ids": null, "colour": "red"}});
    assert_refused(&v.app.post("/api/admin/newsletters", Some(&admin), body).await, "colour");
    let (_, newsletters) = v.app.get("/api/admin/newsletters", Some(&admin)).await;
    assert_eq!(newsletters, json!([]));
    // A trading write, with and without a key; an edit; a company's broker.
    let parent = v.parent(&v.a, "BUY", 5000).await;
    let mut order = order_body(&v, &parent, 1000, "94.75");
    order["stop_price"] = json!(94.7);
    assert_refused(&v.app.post("/api/orders", Some(&v.a), order.clone()).await, "stop_price");
    assert_refused(&v.app.post_keyed("/api/orders", &v.a, "unknown", order).await, "stop_price");
    let (s, o) = v.app.post("/api/orders", Some(&v.a), order_body(&v, &parent, 1000, "94.75")).await;
    assert_eq!(s, StatusCode::CREATED, "{o}");
    let path = format!("/api/orders/{}", o["order_id"].as_str().unwrap());
    assert_refused(&v.app.patch(&path, Some(&v.a), json!({"quantity": 500, "hidden": true})).await, "hidden");
    let company =
        json!({"name": "Osprey", "full_name": "Osprey Ltd", "brokers": [{"company_id": v.broker, "lei": "x"}]});
    assert_refused(&v.app.post("/api/admin/companies", Some(&admin), company).await, "lei");
    // Sign-in and the password links.
    let login = json!({"email": "a@halyard.test", "password": PW, "rememberMe": false, "otp": "1"});
    assert_refused(&v.app.post("/api/auth/login", None, login).await, "otp");
    let link = json!({"email": "a@halyard.test", "redirect": "https://example.test"});
    assert_refused(&v.app.post("/api/users/password-reset", None, link).await, "redirect");
    assert_eq!(quantities(&v, &v.a, &parent).await["working"], 1000);
}

async fn admin_creates_act_once_per_key(b: Backend) {
    let v = venue(b).await;
    let admin = v.app.admin_token().await;
    let (_, me) = v.app.get("/api/users/me", Some(&admin)).await;
    let instrument = |name: &str| {
        json!({"name": name, "term": "Jun27", "min_quantity": 500, "tick_size": 0.01, "exchange_id": "I",
               "currency": "EUR", "min_tick_price": 94.7, "max_tick_price": 94.8})
    };
    let user = |email: &str| json!({"email": email, "first_name": "Kay", "last_name": "Keyed", "company_id": me["company_id"], "roles": ["trader"]});
    // (path, body, another body, the list that shows how many were made)
    let creates = [
        (
            "/api/admin/companies",
            json!({"name": "Osprey", "full_name": "Osprey Ltd", "roles": ["broker"]}),
            json!({"name": "Osprey 2", "full_name": "Osprey Ltd", "roles": ["broker"]}),
            "/api/admin/companies?size=200",
        ),
        (
            "/api/admin/instruments",
            instrument("Euribor Jun27"),
            instrument("Euribor Sep27"),
            "/api/admin/instruments?name=Euribor",
        ),
        (
            "/api/admin/newsletters",
            json!({"name": "Rates", "description": "Daily"}),
            json!({"name": "Rates", "description": "Weekly"}),
            "/api/admin/newsletters",
        ),
        ("/api/users", user("kay@upstairs.test"), user("kay2@upstairs.test"), "/api/admin/users?size=200"),
    ];
    for (path, body, other, list) in creates {
        let count = |l: Value| l.get("items").unwrap_or(&l).as_array().unwrap().len();
        let before = count(v.app.get(list, Some(&admin)).await.1);
        // A key is the user's, for one action (of any kind): one per create here.
        let key = format!("create:{path}");
        let (s1, a1) = v.app.post_keyed(path, &admin, &key, body.clone()).await;
        assert_eq!(s1, StatusCode::CREATED, "{path}: {a1}");
        let (s2, a2) = v.app.post_keyed(path, &admin, &key, body.clone()).await;
        assert_eq!((s2, &a2), (StatusCode::CREATED, &a1), "{path}");
        assert_eq!(count(v.app.get(list, Some(&admin)).await.1), before + 1, "{path}");
        // The same key with another body is refused and makes nothing.
        let (s, e) = v.app.post_keyed(path, &admin, &key, other).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{path}: {e}");
        assert_eq!(e["detail"], "This Idempotency-Key was already used with a different request.");
        assert_eq!(count(v.app.get(list, Some(&admin)).await.1), before + 1, "{path}");
    }
    // The user was made, audited and e-mailed once.
    let (_, kay) = v.app.get("/api/admin/users?email=kay@", Some(&admin)).await;
    assert_eq!(kay["total_items"], 1, "{kay}");
    let (_, logs) = v.app.get("/api/admin/action-logs?size=500", Some(&admin)).await;
    let audited = logs["items"].as_array().unwrap().iter().filter(|l| l["entity_id"] == kay["items"][0]["user_id"]);
    assert_eq!(audited.count(), 1, "{logs}");
    assert_eq!(v.app.mails_to("kay@upstairs.test", 1).await.len(), 1);
}

/// A node takes so many `/api` requests at once (here 2, held waiting on the database's
/// write lock): another waits a moment and gets 429 with `Retry-After`; a sign-in is not
/// held up by the throttle; once the lock goes, every held request is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_refuses_what_it_cannot_take_at_once() {
    use sqlx::Connection;
    let app = std::sync::Arc::new(TestApp::spawn_with(Backend::Sqlite, |s| s.server_limits.max_in_flight = 2).await);
    let admin = app.admin_token().await;
    assert_eq!(app.get("/api/users/me", Some(&admin)).await.0, StatusCode::OK);
    let mut lock = sqlx::sqlite::SqliteConnection::connect(&app.database_url).await.unwrap();
    sqlx::query("begin immediate").execute(&mut lock).await.unwrap();
    let mut writes = Vec::new();
    for n in 0..2 {
        let (app, admin) = (app.clone(), admin.clone());
        writes.push(tokio::spawn(async move {
            let body = json!({"name": format!("Held {n}"), "full_name": "Held Ltd", "roles": ["broker"],
                              "trade_confirmation_email": "desk@held.test", "trade_confirmation_via_email_enabled": true});
            app.post("/api/admin/companies", Some(&admin), body).await.0
        }));
    }
    // Both places are taken once the held writes reach the database: poll until refused.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let refused = loop {
        let res = app.client.get(format!("{}/api/users/me", app.base)).bearer_auth(&admin).send().await.unwrap();
        if res.status() == StatusCode::TOO_MANY_REQUESTS {
            break res;
        }
        assert_eq!(res.status(), StatusCode::OK);
        assert!(std::time::Instant::now() < deadline, "never refused");
    };
    assert_eq!(refused.headers()["retry-after"], "1");
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["detail"], "The venue is busy. Please try again in a moment.");
    let sign_in = {
        let app = app.clone();
        tokio::spawn(async move {
            app.post("/api/auth/login", None, json!({"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD})).await.0
        })
    };
    sqlx::query("rollback").execute(&mut lock).await.unwrap();
    for w in writes {
        assert_eq!(w.await.unwrap(), StatusCode::CREATED);
    }
    assert_eq!(sign_in.await.unwrap(), StatusCode::OK, "sign-in waited on the database, not the throttle");
    assert_eq!(app.get("/api/users/me", Some(&admin)).await.0, StatusCode::OK);
    std::sync::Arc::into_inner(app).unwrap().stop().await;
}

/// A body that trickles in holds no place: a node with one place still answers others
/// meanwhile, and the slow one gets 408 once its time is up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_body_holds_no_place() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = TestApp::spawn_with(Backend::Sqlite, |s| {
        s.server_limits.max_in_flight = 1;
        s.server_limits.body_read = std::time::Duration::from_millis(500);
    })
    .await;
    let admin = app.admin_token().await;
    let mut slow = tokio::net::TcpStream::connect(format!("127.0.0.1:{}", app.port())).await.unwrap();
    let head = format!(
        "POST /api/parent-orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {admin}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"direction\":"
    );
    slow.write_all(head.as_bytes()).await.unwrap();
    for _ in 0..5 {
        assert_eq!(app.get("/api/users/me", Some(&admin)).await.0, StatusCode::OK);
    }
    let mut answer = String::new();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(30), slow.read_to_string(&mut answer)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    app.stop().await;
}
