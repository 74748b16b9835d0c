#![allow(clippy::unwrap_used)]
//! Requests for quote over HTTP on both backends: sent, quoted, requoted, declined,
//! accepted (a match with its broker links), expired at the deadline or the close,
//! withdrawn, ended with their parent; who sees what; the form's rules. After each test
//! every parent order still adds up.
mod support;

use chrono::Duration;
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::venue::*;
use support::*;

on_both_backends!(
    send_quote_and_accept,
    deadline_withdrawal_parent_cancel_and_close,
    providers_see_only_what_is_theirs,
    rfq_and_quote_rules,
    realtime_reaches_only_the_parties,
);

/// The venue with two liquidity providers (Fathom, Gull), a trader in each.
struct Rfqs {
    v: Venue,
    fathom: String,
    gull: String,
    fathom_id: String,
    gull_id: String,
}

async fn rfq_venue(b: Backend) -> Rfqs {
    let v = venue(b).await;
    let admin = v.app.admin_token().await;
    let brokers = json!([{"company_id": v.broker}]);
    let mut ids = Vec::new();
    for name in ["Fathom", "Gull"] {
        let (s, c) = v
            .app
            .post(
                "/api/admin/companies",
                Some(&admin),
                json!({"name": name, "full_name": format!("{name} Markets"), "roles": ["liquidity-provider"],
                       "brokers": brokers, "default_broker": brokers[0]}),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{c}");
        ids.push(c["company_id"].as_str().unwrap().to_owned());
        let email = format!("lp@{}.test", name.to_lowercase());
        upstairs::app::bootstrap_user(&v.app.database_url, &email, PW, &["trader"], name).await.unwrap();
    }
    let fathom = v.app.login_remembered("lp@fathom.test", PW).await;
    let gull = v.app.login_remembered("lp@gull.test", PW).await;
    Rfqs { v, fathom, gull, fathom_id: ids.remove(0), gull_id: ids.remove(0) }
}

async fn send(r: &Rfqs, parent: &Value, body: Value) -> (StatusCode, Value) {
    let mut payload = json!({"parent_order_id": parent["parent_order_id"], "quantity": 2000,
                             "liquidity_provider_ids": [r.fathom_id, r.gull_id]});
    for (k, val) in body.as_object().unwrap() {
        payload[k] = val.clone();
    }
    r.v.app.post("/api/rfqs", Some(&r.v.b), payload).await
}

async fn quote(r: &Rfqs, token: &str, rfq: &Value, body: Value) -> (StatusCode, Value) {
    let id = rfq["rfq_id"].as_str().unwrap();
    r.v.app.post(&format!("/api/rfqs/{id}/responses"), Some(token), body).await
}

fn response_of<'a>(rfq: &'a Value, company: &str) -> &'a Value {
    rfq["responses"].as_array().unwrap().iter().find(|x| x["company_name"] == company).unwrap()
}

async fn accept(r: &Rfqs, token: &str, rfq: &Value, response: &Value) -> (StatusCode, Value) {
    let (id, rid) = (rfq["rfq_id"].as_str().unwrap(), response["rfq_response_id"].as_str().unwrap());
    r.v.app.patch(&format!("/api/rfqs/{id}/responses/{rid}"), Some(token), json!({"state": "ACCEPTED"})).await
}

async fn rfq_now(r: &Rfqs, rfq: &Value) -> Value {
    let (s, body) = r.v.app.get(&format!("/api/rfqs/{}", rfq["rfq_id"].as_str().unwrap()), Some(&r.v.b)).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    body
}

fn states(rfq: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = rfq["responses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["company_name"].as_str().unwrap().to_owned(), x["state"].as_str().unwrap().to_owned()))
        .collect();
    out.sort();
    out
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_owned(), b.to_owned())
}

async fn notice_types(v: &Venue, token: &str) -> Vec<(String, String)> {
    let (_, page) = v.app.get("/api/notifications?archived=false", Some(token)).await;
    let mut out: Vec<(String, String)> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["type"].as_str().unwrap().to_owned(), n["status"].as_str().unwrap().to_owned()))
        .collect();
    out.sort();
    out
}

async fn balanced(r: &Rfqs) {
    assert_balanced_for(&r.v, &[&r.v.a, &r.v.b, &r.fathom, &r.gull]).await;
}

async fn send_quote_and_accept(b: Backend) {
    let r = rfq_venue(b).await;
    let v = &r.v;
    let buy = v.parent(&v.b, "BUY", 3000).await;
    let (s, rfq) = send(&r, &buy, json!({"anonymous": true})).await;
    assert_eq!(s, StatusCode::CREATED, "{rfq}");
    assert_eq!((rfq["state"].clone(), rfq["direction"].clone()), (json!("OPEN"), json!("BUY")));
    assert_eq!(rfq["expires_in_seconds"], 120, "the default deadline is 2 minutes");
    assert_eq!(states(&rfq), vec![pair("Fathom", "AWAITING_RESPONSE"), pair("Gull", "AWAITING_RESPONSE")]);
    // The quantity is reserved from the parent.
    assert_eq!(children(v, &v.b, &buy).await, vec![("AWAITING_RFQ_ACCEPTANCE".into(), 2000)]);
    assert_eq!(quantities(v, &v.b, &buy).await, json!({"tradable": 1000, "working": 2000, "matched": 0}));
    let (_, open) = v.app.get("/api/rfqs?state=OPEN", Some(&v.b)).await;
    assert_eq!(open.as_array().unwrap().len(), 1);
    assert_eq!(notice_types(v, &r.fathom).await, vec![pair("RFQ_RECEIVED", "PENDING")]);

    // A one-way RFQ to buy asks the providers to sell.
    let (s, body) = quote(&r, &r.fathom, &rfq, json!({"buy_price": 94.74, "buy_quantity": 1500})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
    let (s, q) = quote(&r, &r.fathom, &rfq, json!({"sell_price": 94.76, "sell_quantity": 1500})).await;
    assert_eq!((s, q["state"].clone()), (StatusCode::OK, json!("RESPONDED")), "{q}");
    assert_eq!(notice_types(v, &v.b).await, vec![pair("RFQ_QUOTE_RECEIVED", "PENDING")]);
    // Requoted, better; Gull declines.
    let (s, q) = quote(&r, &r.fathom, &rfq, json!({"sell_price": 94.75, "sell_quantity": 1500})).await;
    assert_eq!((s, q["sell_price"].clone()), (StatusCode::OK, json!(94.75)), "{q}");
    let (s, q) = quote(&r, &r.gull, &rfq, json!({"state": "REJECTED_BY_RESPONDER"})).await;
    assert_eq!((s, q["state"].clone()), (StatusCode::OK, json!("REJECTED_BY_RESPONDER")), "{q}");
    assert_eq!(notice_types(v, &v.b).await, vec![pair("RFQ_QUOTE_RECEIVED", "PENDING")], "one notice per provider");
    let seen = rfq_now(&r, &rfq).await;
    assert_eq!(states(&seen), vec![pair("Fathom", "RESPONDED"), pair("Gull", "REJECTED_BY_RESPONDER")]);

    // Only a received quote can be accepted, and only by the requester's firm.
    assert_eq!(accept(&r, &v.b, &seen, response_of(&seen, "Gull")).await.0, StatusCode::CONFLICT);
    assert_eq!(accept(&r, &r.fathom, &seen, response_of(&seen, "Fathom")).await.0, StatusCode::NOT_FOUND);
    let (s, done) = accept(&r, &v.b, &seen, response_of(&seen, "Fathom")).await;
    assert_eq!((s, done["state"].clone()), (StatusCode::OK, json!("COMPLETED")), "{done}");
    assert_eq!(states(&done), vec![pair("Fathom", "ACCEPTED"), pair("Gull", "REJECTED_BY_RESPONDER")]);
    assert_eq!(accept(&r, &v.b, &seen, response_of(&seen, "Fathom")).await.0, StatusCode::CONFLICT);

    // The reserved order matched the quote; the 500 not quoted went back to the parent.
    assert_eq!(children(v, &v.b, &buy).await, vec![("MATCHED".into(), 1500)]);
    assert_eq!(quantities(v, &v.b, &buy).await, json!({"tradable": 1500, "working": 0, "matched": 1500}));
    let pid = buy["parent_order_id"].as_str().unwrap();
    let (_, orders) = v.app.get(&format!("/api/orders?parent_order_id={pid}"), Some(&v.b)).await;
    assert_eq!(orders[0]["price"], json!(94.75));
    // The provider's side: a filled SELL parent with its matched order.
    let (_, lp_parents) = v.app.get("/api/parent-orders?state=FILLED", Some(&r.fathom)).await;
    let lp_parent = &lp_parents[0];
    assert_eq!((lp_parent["direction"].clone(), lp_parent["quantity"].clone()), (json!("SELL"), json!(1500)));
    assert_eq!(children(v, &r.fathom, lp_parent).await, vec![("MATCHED".into(), 1500)]);
    // Both sides see the match; the broker is asked to confirm each side.
    for token in [&v.b, &r.fathom] {
        let (_, matches) = v.app.get("/api/order-match-requests?state=ACCEPTED", Some(token)).await;
        assert_eq!((matches[0]["price"].clone(), matches[0]["quantity"].clone()), (json!(94.75), json!(1500)));
    }
    let mails = v.app.mails_to(BROKER_DESK, 2).await;
    assert!(mails.iter().all(|m| m.contains("/accept-order?order_id=")), "{mails:?}");
    assert_eq!(
        notice_types(v, &r.fathom).await,
        vec![pair("RFQ_QUOTE_ACCEPTED", "ACCEPTED"), pair("RFQ_RECEIVED", "ACCEPTED")]
    );
    assert_eq!(notice_types(v, &r.gull).await, vec![pair("RFQ_RECEIVED", "REJECTED")]);
    // An RFQ trade is not a match request the provider answered: no reliability effect.
    assert_eq!(v.app.get("/api/users/me", Some(&r.fathom)).await.1["reliability_score"], 100);
    let (_, open) = v.app.get("/api/rfqs?state=OPEN", Some(&v.b)).await;
    assert_eq!(open, json!([]));
    let (_, completed) = v.app.get(&format!("/api/rfqs?state=COMPLETED&parent_order_id={pid}"), Some(&v.b)).await;
    assert_eq!(completed.as_array().unwrap().len(), 1);
    balanced(&r).await;
    r.v.app.stop().await;
}

async fn deadline_withdrawal_parent_cancel_and_close(b: Backend) {
    let r = rfq_venue(b).await;
    let v = &r.v;
    let sell = v.parent(&v.b, "SELL", 6000).await;

    // The deadline: one minute; quoting and accepting stop at it, the timer ends it.
    let (s, rfq) = send(&r, &sell, json!({"expires_in_seconds": 60, "two_way": true})).await;
    assert_eq!(s, StatusCode::CREATED, "{rfq}");
    let two_way = json!({"buy_price": 94.74, "buy_quantity": 2000, "sell_price": 94.76, "sell_quantity": 2000});
    assert_eq!(quote(&r, &r.fathom, &rfq, two_way.clone()).await.0, StatusCode::OK);
    v.app.clock.set(tuesday_10am() + Duration::seconds(59));
    run_timers(v).await;
    assert_eq!(rfq_now(&r, &rfq).await["state"], "OPEN");
    v.app.clock.set(tuesday_10am() + Duration::seconds(60));
    let seen = rfq_now(&r, &rfq).await;
    assert_eq!(seen["expires_in_seconds"], 0);
    assert_eq!(accept(&r, &v.b, &seen, response_of(&seen, "Fathom")).await.0, StatusCode::CONFLICT);
    assert_eq!(quote(&r, &r.gull, &rfq, two_way.clone()).await.0, StatusCode::CONFLICT);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while rfq_now(&r, &rfq).await["state"] != "EXPIRED" {
        run_timers(v).await;
        assert!(std::time::Instant::now() < deadline, "the deadline timer never ran");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(states(&rfq_now(&r, &rfq).await), vec![pair("Fathom", "EXPIRED"), pair("Gull", "EXPIRED")]);
    assert_eq!(children(v, &v.b, &sell).await, vec![("EXPIRED".into(), 2000)]);
    assert_eq!(quantities(v, &v.b, &sell).await, json!({"tradable": 6000, "working": 0, "matched": 0}));
    assert_eq!(notice_types(v, &r.gull).await, vec![pair("RFQ_RECEIVED", "TIMED_OUT")]);

    // Withdrawn by the requester.
    let (_, rfq) = send(&r, &sell, json!({})).await;
    let id = rfq["rfq_id"].as_str().unwrap();
    assert_eq!(
        v.app.patch(&format!("/api/rfqs/{id}"), Some(&r.fathom), json!({"state": "CANCELLED"})).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        v.app.patch(&format!("/api/rfqs/{id}"), Some(&v.b), json!({"state": "OPEN"})).await.0,
        StatusCode::BAD_REQUEST
    );
    let (s, cancelled) = v.app.patch(&format!("/api/rfqs/{id}"), Some(&v.b), json!({"state": "CANCELLED"})).await;
    assert_eq!((s, cancelled["state"].clone()), (StatusCode::OK, json!("CANCELLED")), "{cancelled}");
    assert_eq!(states(&cancelled), vec![pair("Fathom", "CANCELLED"), pair("Gull", "CANCELLED")]);
    assert_eq!(quantities(v, &v.b, &sell).await, json!({"tradable": 6000, "working": 0, "matched": 0}));
    assert_eq!(
        v.app.patch(&format!("/api/rfqs/{id}"), Some(&v.b), json!({"state": "CANCELLED"})).await.0,
        StatusCode::CONFLICT
    );

    // Cancelling the parent withdraws its open RFQ.
    let other = v.parent(&v.b, "SELL", 2000).await;
    let (_, rfq) = send(&r, &other, json!({})).await;
    let pid = other["parent_order_id"].as_str().unwrap();
    let (s, body) = v.app.delete(&format!("/api/parent-orders/{pid}"), Some(&v.b)).await;
    assert!(s.is_success(), "{s} {body}");
    assert_eq!(rfq_now(&r, &rfq).await["state"], "CANCELLED");

    // The close ends what is still open, at 17:00.
    v.app.clock.set(tuesday_10am() + Duration::minutes(6 * 60 + 50));
    let (_, rfq) = send(&r, &sell, json!({"expires_in_seconds": 900, "two_way": true})).await;
    assert_eq!(quote(&r, &r.gull, &rfq, two_way).await.0, StatusCode::OK);
    v.app.clock.set(tuesday_10am() + Duration::hours(7));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while rfq_now(&r, &rfq).await["state"] != "EXPIRED" {
        run_timers(v).await;
        assert!(std::time::Instant::now() < deadline, "the close never ended the RFQ");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(states(&rfq_now(&r, &rfq).await), vec![pair("Fathom", "EXPIRED"), pair("Gull", "EXPIRED")]);
    assert_eq!(quantities(v, &v.b, &sell).await, json!({"tradable": 6000, "working": 0, "matched": 0}));
    assert_eq!(send(&r, &sell, json!({})).await.0, StatusCode::CONFLICT, "closed");
    balanced(&r).await;
    r.v.app.stop().await;
}

async fn providers_see_only_what_is_theirs(b: Backend) {
    let r = rfq_venue(b).await;
    let v = &r.v;
    let buy = v.parent(&v.b, "BUY", 3000).await;
    // Anonymous and two-way, to Fathom only.
    let (s, rfq) =
        send(&r, &buy, json!({"anonymous": true, "two_way": true, "liquidity_provider_ids": [r.fathom_id]})).await;
    assert_eq!(s, StatusCode::CREATED, "{rfq}");
    let (_, incoming) = v.app.get("/api/rfqs/all/responses?state=AWAITING_RESPONSE", Some(&r.fathom)).await;
    let seen = &incoming[0];
    assert_eq!(
        (seen["requester_company_name"].clone(), seen["direction"].clone(), seen["two_way"].clone()),
        (Value::Null, Value::Null, json!(true)),
        "anonymous and two-way: neither the firm nor the side: {seen}"
    );
    let (_, me) = v.app.get("/api/users/me", Some(&v.b)).await;
    let text = incoming.to_string();
    for secret in [
        "Kestrel",
        me["user_id"].as_str().unwrap(),
        buy["parent_order_id"].as_str().unwrap(),
        rfq["order_id"].as_str().unwrap(),
    ] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
    let (_, by_instrument) =
        v.app.get(&format!("/api/rfqs/all/responses?instrument_id={}", v.instrument), Some(&r.fathom)).await;
    assert_eq!(by_instrument.as_array().unwrap().len(), 1);
    // Gull was not asked: it sees nothing and cannot answer; nor can another trading firm.
    let (_, nothing) = v.app.get("/api/rfqs/all/responses", Some(&r.gull)).await;
    assert_eq!(nothing, json!([]));
    let quote_body = json!({"buy_price": 94.74, "buy_quantity": 1000, "sell_price": 94.76, "sell_quantity": 1000});
    assert_eq!(quote(&r, &r.gull, &rfq, quote_body.clone()).await.0, StatusCode::NOT_FOUND);
    assert_eq!(quote(&r, &v.a, &rfq, quote_body.clone()).await.0, StatusCode::NOT_FOUND);
    for token in [&r.gull, &r.fathom, &v.a] {
        let id = rfq["rfq_id"].as_str().unwrap();
        assert_eq!(v.app.get(&format!("/api/rfqs/{id}"), Some(token)).await.0, StatusCode::NOT_FOUND);
        assert_eq!(v.app.get("/api/rfqs", Some(token)).await.1, json!([]));
    }
    assert_eq!(notice_types(v, &r.gull).await, vec![]);
    // The provider's notification names the RFQ only.
    let (_, page) = v.app.get("/api/notifications", Some(&r.fathom)).await;
    let n = &page["items"][0];
    assert_eq!((n["rfq_id"].clone(), n["order_match_request_id"].clone()), (rfq["rfq_id"].clone(), Value::Null));
    // Not anonymous, one-way: the firm's name and the side are shown.
    let (_, open) = send(&r, &buy, json!({"quantity": 1000, "liquidity_provider_ids": [r.gull_id]})).await;
    let (_, incoming) = v.app.get("/api/rfqs/all/responses", Some(&r.gull)).await;
    assert_eq!(
        (incoming[0]["requester_company_name"].clone(), incoming[0]["direction"].clone()),
        (json!("Kestrel"), json!("BUY")),
        "{incoming}"
    );
    assert_eq!(incoming[0]["rfq_id"], open["rfq_id"]);
    balanced(&r).await;
    r.v.app.stop().await;
}

fn fields(body: &Value) -> Vec<String> {
    body["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap().to_owned()).collect()
}

async fn rfq_and_quote_rules(b: Backend) {
    let r = rfq_venue(b).await;
    let v = &r.v;
    let buy = v.parent(&v.b, "BUY", 3000).await;
    let bad = [
        (json!({"quantity": 400}), "quantity", "Min block size: 500"),
        (json!({"quantity": 3500}), "quantity", "Exceeds available quantity"),
        (json!({"liquidity_provider_ids": []}), "liquidity_provider_ids", "Choose at least one liquidity provider"),
        (
            json!({"liquidity_provider_ids": [v.broker]}),
            "liquidity_provider_ids",
            "Choose liquidity providers from the list",
        ),
        (json!({"expires_in_seconds": 90}), "expires_in_seconds", "Must be a whole number of minutes from 1 to 15"),
        (json!({"expires_in_seconds": 960}), "expires_in_seconds", "Must be a whole number of minutes from 1 to 15"),
        (json!({"broker_id": r.fathom_id}), "broker_id", "Choose one of the eligible brokers"),
    ];
    for (body, field, message) in bad {
        let (s, answer) = send(&r, &buy, body.clone()).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}: {answer}");
        assert_eq!(fields(&answer), vec![field.to_owned()], "{body}: {answer}");
        assert_eq!(answer["errors"][0]["message"], message);
    }
    let (s, body) = v.app.post("/api/rfqs", Some(&v.b), json!({"parent_order_id": buy["parent_order_id"]})).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "a body without its required fields: {body}");
    assert_eq!(children(v, &v.b, &buy).await, vec![], "nothing reserved by a refused RFQ");
    // Another firm's parent is not found.
    let (s, _) = v
        .app
        .post(
            "/api/rfqs",
            Some(&v.a),
            json!({"parent_order_id": buy["parent_order_id"], "quantity": 1000, "liquidity_provider_ids": [r.fathom_id]}),
        )
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);

    let (_, rfq) = send(&r, &buy, json!({"two_way": true})).await;
    let bad_quotes = [
        (
            json!({"buy_price": 94.745, "buy_quantity": 1000, "sell_price": 94.76, "sell_quantity": 1000}),
            vec!["buy_price"],
        ),
        (
            json!({"buy_price": 94.74, "buy_quantity": 1000, "sell_price": 94.90, "sell_quantity": 1000}),
            vec!["sell_price"],
        ),
        (
            json!({"buy_price": 94.74, "buy_quantity": 400, "sell_price": 94.76, "sell_quantity": 2500}),
            vec!["buy_quantity", "sell_quantity"],
        ),
        (
            json!({"buy_price": 94.77, "buy_quantity": 1000, "sell_price": 94.76, "sell_quantity": 1000}),
            vec!["sell_price"],
        ),
        (json!({"sell_price": 94.76, "sell_quantity": 1000}), vec!["buy_price", "buy_quantity"]),
        (json!({"buy_price": 94.74}), vec!["buy_quantity"]),
        (json!({"state": "ACCEPTED"}), vec!["state"]),
    ];
    for (body, want) in bad_quotes {
        let (s, answer) = quote(&r, &r.fathom, &rfq, body.clone()).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}: {answer}");
        assert_eq!(fields(&answer), want, "{body}: {answer}");
    }
    assert_eq!(
        states(&rfq_now(&r, &rfq).await),
        vec![pair("Fathom", "AWAITING_RESPONSE"), pair("Gull", "AWAITING_RESPONSE")]
    );
    // Declined, a response is over: no quote after it.
    assert_eq!(quote(&r, &r.gull, &rfq, json!({"state": "REJECTED_BY_RESPONDER"})).await.0, StatusCode::OK);
    let good = json!({"buy_price": 94.74, "buy_quantity": 1000, "sell_price": 94.76, "sell_quantity": 1000});
    assert_eq!(quote(&r, &r.gull, &rfq, good).await.0, StatusCode::CONFLICT);
    balanced(&r).await;
    r.v.app.stop().await;
}

/// `upstairs demo`: the demo providers quote on an RFQ by themselves, one after the
/// other, inside the band; the requester accepts one and the trade goes to the brokers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_providers_quote_by_themselves() {
    use upstairs_engine::seed::DEMO_PASSWORD;
    let app = TestApp::spawn_with(Backend::Sqlite, |s| s.demo = true).await;
    let start = upstairs_engine::Clock::now(&*app.clock);
    let t = app.login("trader1@kestrel.demo", DEMO_PASSWORD).await;
    let (_, instruments) = app.get("/api/instruments?name=Euribor%203M%20Dec26", Some(&t)).await;
    let instrument = &instruments[0];
    let (s, parent) = app
        .post(
            "/api/parent-orders",
            Some(&t),
            json!({"direction": "BUY", "instrument_id": instrument["instrument_id"], "quantity": 1000}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{parent}");
    let (_, providers) = app.get("/api/liquidity-providers", Some(&t)).await;
    let ids: Vec<Value> = providers.as_array().unwrap().iter().map(|p| p["company_id"].clone()).collect();
    let (s, rfq) = app
        .post(
            "/api/rfqs",
            Some(&t),
            json!({"parent_order_id": parent["parent_order_id"], "quantity": 1000, "liquidity_provider_ids": ids}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{rfq}");
    let path = format!("/api/rfqs/{}", rfq["rfq_id"].as_str().unwrap());
    let received = |states: Vec<(String, String)>| states.iter().filter(|(_, s)| s == "RESPONDED").count();
    let wait_for = |n: usize| {
        let (app, t, path) = (&app, &t, &path);
        async move {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            loop {
                let (_, now) = app.get(path, Some(t)).await;
                if received(states(&now)) >= n {
                    return now;
                }
                assert!(std::time::Instant::now() < deadline, "{n} quotes never came: {now}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
    };
    // Nothing before three seconds; then the first provider, then the second.
    assert_eq!(received(states(&app.get(&path, Some(&t)).await.1)), 0);
    app.clock.set(start + Duration::seconds(3));
    let first = wait_for(1).await;
    assert_eq!(received(states(&first)), 1, "{first}");
    app.clock.set(start + Duration::seconds(6));
    let both = wait_for(2).await;
    let tick: rust_decimal::Decimal = instrument["tick_size"].to_string().parse().unwrap();
    for r in both["responses"].as_array().unwrap() {
        assert_eq!((r["buy_price"].clone(), r["sell_quantity"].clone()), (Value::Null, json!(1000)), "one way: {r}");
        let price: rust_decimal::Decimal = r["sell_price"].to_string().parse().unwrap();
        assert!((price / tick).fract().is_zero(), "on the tick: {r}");
    }
    let price = |r: &Value| r["sell_price"].to_string().parse::<rust_decimal::Decimal>().unwrap();
    let best = both["responses"].as_array().unwrap().iter().min_by_key(|r| price(r)).unwrap();
    let (s, done) = app
        .patch(
            &format!("{path}/responses/{}", best["rfq_response_id"].as_str().unwrap()),
            Some(&t),
            json!({"state": "ACCEPTED"}),
        )
        .await;
    assert_eq!((s, done["state"].clone()), (StatusCode::OK, json!("COMPLETED")), "{done}");
    app.stop().await;
}

/// A STOMP client (stomp.py) on `/user/topic/rfqs` for `token`, subscribed.
async fn rfq_socket(v: &Venue, token: &str) -> Peer {
    let mut peer = Peer::spawn(
        "stomp_client.py",
        &["127.0.0.1".into(), v.app.port().to_string(), token.into(), "/user/topic/rfqs".into()],
    );
    let wait = std::time::Duration::from_secs(10);
    assert_eq!(peer.next_json(wait).await.unwrap()["event"], "connected");
    assert_eq!(peer.next_json(wait).await, Some(json!({"event": "subscribed"})));
    peer
}

/// Over STOMP too, an RFQ reaches its requester and the providers it names, and its
/// message carries nothing but its id, state and the recipient's role.
async fn realtime_reaches_only_the_parties(b: Backend) {
    let r = rfq_venue(b).await;
    let v = &r.v;
    let wait = std::time::Duration::from_secs(10);
    let mut requester = rfq_socket(v, &v.b).await;
    let mut fathom = rfq_socket(v, &r.fathom).await;
    let mut gull = rfq_socket(v, &r.gull).await;
    let buy = v.parent(&v.b, "BUY", 3000).await;
    let (_, first) = send(&r, &buy, json!({"anonymous": true, "liquidity_provider_ids": [r.fathom_id]})).await;
    let want = |role: &str, rfq: &Value| json!({"type": "RFQ_UPDATED", "rfq_id": rfq["rfq_id"], "state": "OPEN", "role": role});
    assert_eq!(fathom.next_json(wait).await.unwrap()["body"], want("RESPONDER", &first));
    assert_eq!(requester.next_json(wait).await.unwrap()["body"], want("REQUESTER", &first));
    // Gull was not asked: the first message it gets is of the RFQ sent to it next.
    let (_, second) = send(&r, &buy, json!({"quantity": 500, "liquidity_provider_ids": [r.gull_id]})).await;
    assert_eq!(gull.next_json(wait).await.unwrap()["body"], want("RESPONDER", &second));
    assert_eq!(requester.next_json(wait).await.unwrap()["body"], want("REQUESTER", &second));
    // A quote reaches the requester and the provider's own colleagues, not the others.
    assert_eq!(
        quote(&r, &r.fathom, &first, json!({"sell_price": 94.75, "sell_quantity": 1000})).await.0,
        StatusCode::OK
    );
    assert_eq!(requester.next_json(wait).await.unwrap()["body"], want("REQUESTER", &first));
    assert_eq!(fathom.next_json(wait).await.unwrap()["body"], want("RESPONDER", &first));
    let id = second["rfq_id"].as_str().unwrap();
    assert_eq!(
        v.app.patch(&format!("/api/rfqs/{id}"), Some(&v.b), json!({"state": "CANCELLED"})).await.0,
        StatusCode::OK
    );
    let cancelled = gull.next_json(wait).await.unwrap();
    assert_eq!(cancelled["body"]["rfq_id"], second["rfq_id"], "Gull heard nothing of Fathom's RFQ: {cancelled}");
    assert_eq!(cancelled["body"]["state"], "CANCELLED");
    drop((requester, fathom, gull));
    r.v.app.stop().await;
}
