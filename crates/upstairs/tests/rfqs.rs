#![allow(clippy::unwrap_used)]
//! Requests for quote over HTTP on both backends: sent, quoted, requoted, declined,
//! accepted (a match with its broker links), expired at the deadline or the close,
//! withdrawn, ended with their parent; who sees what; the form's rules; late closes.
//! After each test every parent order in the database still adds up (`balanced_after`).
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
    accepting_one_quote_rejects_the_others,
    two_way_rfqs_trade_the_side_against_the_requester,
    quantities_stay_exact_through_quotes_and_declines,
    a_second_rfq_cannot_reserve_more_than_is_left,
    an_anonymous_rfq_never_reveals_the_requester,
    an_accept_names_the_quote_it_takes,
    providers_see_todays_outcomes,
    providers_see_today_by_the_instruments_exchange,
    keyed_rfqs_and_quotes_act_once,
    an_accepted_quote_reaches_the_broker_by_fix,
    a_provider_that_blocks_the_requester_is_not_on_its_list,
    a_quote_waits_while_prices_are_stale,
);

on_both_backends!(
    a_late_close_in_the_pre_open_spares_the_waiting_order,
    a_late_close_after_the_open_spares_the_new_requests_and_rfqs,
    a_late_close_never_strands_a_request_made_after_the_open,
    the_requesters_notices_say_the_rfq_traded,
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
    with_providers(venue(b).await).await
}

/// Adds the two liquidity providers to a venue.
async fn with_providers(v: Venue) -> Rfqs {
    let (fathom, fathom_id) = provider(&v, "Fathom", &v.broker).await;
    let (gull, gull_id) = provider(&v, "Gull", &v.broker).await;
    Rfqs { v, fathom, gull, fathom_id, gull_id }
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
    // An RFQ's notices carry no match request's terms.
    for n in page["items"].as_array().unwrap() {
        assert_eq!((&n["direction"], &n["quantity"], &n["price"]), (&Value::Null, &Value::Null, &Value::Null), "{n}");
    }
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

/// An RFQ and a quote sent with an `Idempotency-Key` and retried act once (ADR 0023).
async fn keyed_rfqs_and_quotes_act_once(b: Backend) {
    let r = rfq_venue(b).await;
    let v = &r.v;
    let buy = v.parent(&v.b, "BUY", 3000).await;
    let body = json!({"parent_order_id": buy["parent_order_id"], "quantity": 2000,
                      "liquidity_provider_ids": [r.fathom_id, r.gull_id]});
    let (s, rfq) = v.app.post_keyed("/api/rfqs", &v.b, "rfq-1", body.clone()).await;
    assert_eq!(s, StatusCode::CREATED, "{rfq}");
    let (s, again) = v.app.post_keyed("/api/rfqs", &v.b, "rfq-1", body).await;
    assert_eq!((s, again["rfq_id"].clone()), (StatusCode::CREATED, rfq["rfq_id"].clone()));
    let (_, open) = v.app.get("/api/rfqs?state=OPEN", Some(&v.b)).await;
    assert_eq!(open.as_array().unwrap().len(), 1, "{open}");
    assert_eq!(quantities(v, &v.b, &buy).await["working"], 2000);
    assert_eq!(notice_types(v, &r.fathom).await, vec![pair("RFQ_RECEIVED", "PENDING")]);

    let path = format!("/api/rfqs/{}/responses", rfq["rfq_id"].as_str().unwrap());
    let quote = json!({"sell_price": 94.76, "sell_quantity": 1500});
    let (s, q1) = v.app.post_keyed(&path, &r.fathom, "quote-1", quote.clone()).await;
    assert_eq!(s, StatusCode::OK, "{q1}");
    let (s, q2) = v.app.post_keyed(&path, &r.fathom, "quote-1", quote).await;
    assert_eq!((s, &q2), (StatusCode::OK, &q1));
    assert_eq!(notice_types(v, &v.b).await, vec![pair("RFQ_QUOTE_RECEIVED", "PENDING")]);
    // A requote is another action: another key; the first key with it is refused.
    let better = json!({"sell_price": 94.75, "sell_quantity": 1500});
    let (s, e) = v.app.post_keyed(&path, &r.fathom, "quote-1", better.clone()).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
    let (s, q3) = v.app.post_keyed(&path, &r.fathom, "quote-2", better).await;
    assert_eq!((s, q3["sell_price"].clone()), (StatusCode::OK, json!(94.75)), "{q3}");
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

    // A one-way RFQ to buy asks the providers to sell (two seconds in: the scorecard's
    // quote time below).
    v.app.clock.advance(chrono::Duration::seconds(2));
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

    // The scorecards (issue 29): the requester's RFQ quoted and traded; the provider's
    // quote, given in 2 s and won; the other provider's, asked and declined. The trade is
    // not a match request either side sent or received.
    let card = |token: String| async move { v.app.get("/api/scorecard", Some(&token)).await.1 };
    let requester = card(v.b.clone()).await;
    let rfqs = |c: &Value| (c["rfqs_sent"].clone(), c["rfqs_quoted"].clone(), c["rfqs_traded"].clone());
    let quotes = |c: &Value| (c["quotes_asked"].clone(), c["quotes_given"].clone(), c["quotes_won"].clone());
    assert_eq!(rfqs(&requester), (json!(1), json!(1), json!(1)), "{requester}");
    assert_eq!((requester["trades"].clone(), requester["sent"]["total"].clone()), (json!(1), json!(0)));
    let won = card(r.fathom.clone()).await;
    assert_eq!(quotes(&won), (json!(1), json!(1), json!(1)), "{won}");
    assert_eq!(won["quote_times"], json!({"count": 1, "p50_ms": 2000, "p90_ms": 2000}));
    assert_eq!((won["rfqs_sent"].clone(), won["received"]["total"].clone()), (json!(0), json!(0)));
    let declined = card(r.gull.clone()).await;
    assert_eq!(quotes(&declined), (json!(1), json!(0), json!(0)), "{declined}");
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
    use upstairs::demo::DEMO_PASSWORD;
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
    let instrument_path = format!("/api/instruments/{}", instrument["instrument_id"].as_str().unwrap());
    let dec = |v: &Value| v.to_string().parse::<rust_decimal::Decimal>().unwrap();
    // The demo's market-data feed moves the band a tick every few seconds while we wait:
    // each quote is checked against the band read just before and just after the poll
    // that first saw it (a move between two polls is at most one tick).
    let band = || {
        let (app, t, instrument_path) = (&app, &t, &instrument_path);
        async move {
            let (_, i) = app.get(instrument_path, Some(t)).await;
            (dec(&i["min_tick_price"]), dec(&i["max_tick_price"]))
        }
    };
    let mut windows: std::collections::HashMap<String, Vec<(rust_decimal::Decimal, rust_decimal::Decimal)>> =
        Default::default();
    let mut last_band = band().await;
    let mut wait_for = async |n: usize| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let (_, now) = app.get(&path, Some(&t)).await;
            let after = band().await;
            for r in now["responses"].as_array().unwrap().iter().filter(|r| r["state"] == "RESPONDED") {
                let id = r["rfq_response_id"].as_str().unwrap().to_owned();
                windows.entry(id).or_insert_with(|| vec![last_band, after]);
            }
            last_band = after;
            if received(states(&now)) >= n {
                return now;
            }
            assert!(std::time::Instant::now() < deadline, "{n} quotes never came: {now}");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    };
    // Nothing before three seconds; then the first provider, then the second.
    assert_eq!(received(states(&app.get(&path, Some(&t)).await.1)), 0);
    app.clock.set(start + Duration::seconds(3));
    let first = wait_for(1).await;
    assert_eq!(received(states(&first)), 1, "{first}");
    app.clock.set(start + Duration::seconds(6));
    let both = wait_for(2).await;
    let tick = dec(&instrument["tick_size"]);
    for r in both["responses"].as_array().unwrap() {
        assert_eq!((r["buy_price"].clone(), r["sell_quantity"].clone()), (Value::Null, json!(1000)), "one way: {r}");
        let price = dec(&r["sell_price"]);
        assert!((price / tick).fract().is_zero(), "on the tick: {r}");
        let seen_in = &windows[r["rfq_response_id"].as_str().unwrap()];
        assert!(
            seen_in.iter().any(|(min, max)| *min <= price && price <= *max),
            "inside the band {seen_in:?} when quoted: {r}"
        );
        // A robot's offer is inside the band, never on its edge (n + 1 ticks in).
        assert!(seen_in.iter().any(|(_, max)| price < *max), "inside, not at the edge {seen_in:?}: {r}");
    }
    let best = both["responses"].as_array().unwrap().iter().min_by_key(|r| dec(&r["sell_price"])).unwrap();
    let (s, done) = app
        .patch(
            &format!("{path}/responses/{}", best["rfq_response_id"].as_str().unwrap()),
            Some(&t),
            json!({"state": "ACCEPTED"}),
        )
        .await;
    assert_eq!((s, done["state"].clone()), (StatusCode::OK, json!("COMPLETED")), "{done}");
    // Both brokers are asked to confirm: Kestrel's default broker (Baltic) and the
    // winner's (Meridian's default is Northgate, Ostrava's Baltic; see the seed).
    let winner = best["company_name"].as_str().unwrap();
    let theirs = match winner {
        "Meridian" => "confirmations@northgate.demo",
        "Ostrava" => "blocks@baltic.demo",
        other => panic!("an unknown demo provider {other}"),
    };
    let mine = "blocks@baltic.demo";
    let want = if theirs == mine { 2 } else { 1 };
    let mut mails = app.mails_to(mine, want).await;
    if theirs != mine {
        mails.extend(app.mails_to(theirs, 1).await);
    }
    assert_eq!(mails.len(), 2, "{mails:?}");
    let mut linked: Vec<String> = mails
        .iter()
        .map(|m| {
            let at = m.find("/accept-order?order_id=").unwrap_or_else(|| panic!("no accept link in {m}"));
            m[at + "/accept-order?order_id=".len()..].chars().take_while(|c| *c != '&').collect()
        })
        .collect();
    linked.sort();
    linked.dedup();
    assert_eq!(linked.len(), 2, "one e-mail per side: {linked:?}");
    assert!(linked.iter().any(|o| o == rfq["order_id"].as_str().unwrap()), "the requester's order: {linked:?}");
    assert!(mails.iter().any(|m| m.contains("Client: Kestrel")), "{mails:?}");
    assert!(mails.iter().any(|m| m.contains(&format!("Client: {winner}"))), "{mails:?}");
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

/// Over STOMP too, an RFQ reaches its requester and the providers it names, each as
/// their panel lists it (ADR 0029): the requester's row of `GET /rfqs`, with every
/// response; a provider's row of `GET /rfqs/all/responses`, with its own response only.
async fn realtime_reaches_only_the_parties(b: Backend) {
    let r = rfq_venue(b).await;
    let v = &r.v;
    let wait = std::time::Duration::from_secs(10);
    let mut requester = rfq_socket(v, &v.b).await;
    let mut fathom = rfq_socket(v, &r.fathom).await;
    let mut gull = rfq_socket(v, &r.gull).await;
    let buy = v.parent(&v.b, "BUY", 3000).await;
    let (_, first) = send(&r, &buy, json!({"anonymous": true, "liquidity_provider_ids": [r.fathom_id]})).await;
    // The next frame on `peer`: (type, seq, rfq_id, state), and the row it carries.
    let next = async |peer: &mut Peer| {
        let mut body = peer.next_json(wait).await.expect("a frame")["body"].take();
        let head = (body["type"].take(), body["seq"].take(), body["rfq_id"].clone(), body["state"].clone());
        let row = body.as_object_mut().unwrap();
        row.remove("type");
        row.remove("seq");
        (head, body)
    };
    let sent =
        |rfq: &Value, seq: u64, state: &str| (json!("RFQ_UPDATED"), json!(seq), rfq["rfq_id"].clone(), json!(state));
    let asked = |rfq: &Value, seq: u64, state: &str| {
        (json!("INCOMING_RFQ_UPDATED"), json!(seq), rfq["rfq_id"].clone(), json!(state))
    };
    let listed = async |token: &str, path: &str, rfq: &Value| {
        let (_, list) = v.app.get(path, Some(token)).await;
        list.as_array().unwrap().iter().find(|x| x["rfq_id"] == rfq["rfq_id"]).cloned().expect("listed")
    };
    // Each user's frames are numbered 1, 2, 3 … (ADR 0029).
    let (head, row) = next(&mut fathom).await;
    assert_eq!(head, asked(&first, 1, "OPEN"));
    assert_eq!(row, listed(&r.fathom, "/api/rfqs/all/responses", &first).await);
    assert_eq!(row["requester_company_name"], Value::Null, "anonymous: {row}");
    let (head, row) = next(&mut requester).await;
    assert_eq!(head, sent(&first, 1, "OPEN"));
    assert_eq!(row, listed(&v.b, "/api/rfqs?state=OPEN", &first).await);
    // Gull was not asked: the first message it gets is of the RFQ sent to it next.
    let (_, second) = send(&r, &buy, json!({"quantity": 500, "liquidity_provider_ids": [r.gull_id]})).await;
    assert_eq!(next(&mut gull).await.0, asked(&second, 1, "OPEN"));
    assert_eq!(next(&mut requester).await.0, sent(&second, 2, "OPEN"));
    // A quote reaches the requester and the provider's own colleagues, not the others.
    assert_eq!(
        quote(&r, &r.fathom, &first, json!({"sell_price": 94.75, "sell_quantity": 1000})).await.0,
        StatusCode::OK
    );
    let (head, row) = next(&mut requester).await;
    assert_eq!(head, sent(&first, 3, "OPEN"));
    assert_eq!(row["responses"][0]["sell_price"], json!(94.75), "{row}");
    assert_eq!(row, listed(&v.b, "/api/rfqs?state=OPEN", &first).await);
    let (head, row) = next(&mut fathom).await;
    assert_eq!(head, asked(&first, 2, "OPEN"));
    assert_eq!(row["response"]["state"], "RESPONDED", "{row}");
    let id = second["rfq_id"].as_str().unwrap();
    assert_eq!(
        v.app.patch(&format!("/api/rfqs/{id}"), Some(&v.b), json!({"state": "CANCELLED"})).await.0,
        StatusCode::OK
    );
    // Gull heard nothing of Fathom's RFQ.
    assert_eq!(next(&mut gull).await.0, asked(&second, 2, "CANCELLED"));
    drop((requester, fathom, gull));
    r.v.app.stop().await;
}

/// A liquidity provider confirming through `broker`, with a trader: (the trader's token,
/// the company's id).
async fn provider(v: &Venue, name: &str, broker: &str) -> (String, String) {
    let admin = v.app.admin_token().await;
    let brokers = json!([{"company_id": broker}]);
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
    let email = format!("lp@{}.test", name.to_lowercase());
    upstairs::app::bootstrap_user(&v.app.database_url, &email, PW, &["trader"], name).await.unwrap();
    (v.app.login_remembered(&email, PW).await, c["company_id"].as_str().unwrap().to_owned())
}

/// A broker company whose trade confirmations go to `desk`; its id.
async fn broker(v: &Venue, name: &str, desk: &str) -> String {
    let admin = v.app.admin_token().await;
    let (s, c) = v
        .app
        .post(
            "/api/admin/companies",
            Some(&admin),
            json!({"name": name, "full_name": format!("{name} Brokers Ltd"), "roles": ["broker"],
                   "trade_confirmation_email": desk, "trade_confirmation_via_email_enabled": true}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{c}");
    c["company_id"].as_str().unwrap().to_owned()
}

/// Runs the due timers until the RFQ reaches `want` (the server's own job loop may hold
/// a due timer's lease meanwhile), within a deadline.
async fn rfq_settles(r: &Rfqs, rfq: &Value, want: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        run_timers(&r.v).await;
        let now = rfq_now(r, rfq).await;
        if now["state"] == want {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "still {}, want {want}", now["state"]);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The provider's incoming view of one RFQ (any state of its response).
async fn incoming(r: &Rfqs, token: &str, rfq: &Value, state: &str) -> Value {
    let (s, list) = r.v.app.get(&format!("/api/rfqs/all/responses?state={state}"), Some(token)).await;
    assert_eq!(s, StatusCode::OK, "{list}");
    list.as_array()
        .unwrap()
        .iter()
        .find(|i| i["rfq_id"] == rfq["rfq_id"])
        .unwrap_or_else(|| panic!("no {state} response to {} in {list}", rfq["rfq_id"]))
        .clone()
}

/// One quote accepted while another provider's quote is RESPONDED and a third has not
/// answered: both others end REJECTED_BY_REQUESTER, and the losers are told (their
/// RFQ_RECEIVED notice ends REJECTED, their socket hears the RFQ COMPLETED). After the
/// deadline nothing changes any more.
async fn accepting_one_quote_rejects_the_others(b: Backend) {
    let r = rfq_venue(b).await;
    let v = &r.v;
    let (hake, hake_id) = provider(v, "Hake", &v.broker).await;
    let mut hake_socket = rfq_socket(v, &hake).await;
    let buy = v.parent(&v.b, "BUY", 3000).await;
    let (s, rfq) = send(&r, &buy, json!({"liquidity_provider_ids": [r.fathom_id, r.gull_id, hake_id]})).await;
    assert_eq!(s, StatusCode::CREATED, "{rfq}");
    let wait = std::time::Duration::from_secs(10);
    assert_eq!(hake_socket.next_json(wait).await.unwrap()["body"]["state"], "OPEN");
    let (s, _) = quote(&r, &r.fathom, &rfq, json!({"sell_price": 94.76, "sell_quantity": 2000})).await;
    assert_eq!(s, StatusCode::OK);
    let (s, _) = quote(&r, &r.gull, &rfq, json!({"sell_price": 94.75, "sell_quantity": 1500})).await;
    assert_eq!(s, StatusCode::OK);
    let seen = rfq_now(&r, &rfq).await;
    assert_eq!(
        states(&seen),
        vec![pair("Fathom", "RESPONDED"), pair("Gull", "RESPONDED"), pair("Hake", "AWAITING_RESPONSE")]
    );

    let (s, done) = accept(&r, &v.b, &seen, response_of(&seen, "Gull")).await;
    assert_eq!((s, done["state"].clone()), (StatusCode::OK, json!("COMPLETED")), "{done}");
    let want =
        vec![pair("Fathom", "REJECTED_BY_REQUESTER"), pair("Gull", "ACCEPTED"), pair("Hake", "REJECTED_BY_REQUESTER")];
    assert_eq!(states(&done), want);
    assert_eq!(states(&rfq_now(&r, &rfq).await), want);
    // The losers' quotes are kept as they were; their own view says what became of them.
    let fathom_view = incoming(&r, &r.fathom, &rfq, "REJECTED_BY_REQUESTER").await;
    assert_eq!(
        (fathom_view["state"].clone(), fathom_view["response"]["sell_price"].clone()),
        (json!("COMPLETED"), json!(94.76)),
        "{fathom_view}"
    );
    let hake_view = incoming(&r, &hake, &rfq, "REJECTED_BY_REQUESTER").await;
    assert_eq!(hake_view["response"]["sell_price"], Value::Null, "{hake_view}");
    // Told: each loser's RFQ_RECEIVED notice ends REJECTED; only the winner's ends
    // ACCEPTED, with the RFQ_QUOTE_ACCEPTED notice besides.
    assert_eq!(notice_types(v, &r.fathom).await, vec![pair("RFQ_RECEIVED", "REJECTED")]);
    assert_eq!(notice_types(v, &hake).await, vec![pair("RFQ_RECEIVED", "REJECTED")]);
    assert_eq!(
        notice_types(v, &r.gull).await,
        vec![pair("RFQ_QUOTE_ACCEPTED", "ACCEPTED"), pair("RFQ_RECEIVED", "ACCEPTED")]
    );
    // The provider that never answered hears over STOMP that the RFQ is over.
    let msg = hake_socket.next_json(wait).await.unwrap();
    assert!(msg["body"]["seq"].as_u64().is_some_and(|n| n > 1), "numbered after the OPEN frame: {msg}");
    let body = &msg["body"];
    assert_eq!(
        (&body["type"], &body["rfq_id"], &body["state"], &body["response"]["state"]),
        (&json!("INCOMING_RFQ_UPDATED"), &rfq["rfq_id"], &json!("COMPLETED"), &json!("REJECTED_BY_REQUESTER")),
        "{msg}"
    );
    // Losers can neither quote nor decline any more.
    assert_eq!(
        quote(&r, &hake, &rfq, json!({"sell_price": 94.74, "sell_quantity": 2000})).await.0,
        StatusCode::CONFLICT
    );
    assert_eq!(quote(&r, &r.fathom, &rfq, json!({"state": "REJECTED_BY_RESPONDER"})).await.0, StatusCode::CONFLICT);

    // Gull's 1500 matched; the 500 it did not quote is back on the parent.
    assert_eq!(children(v, &v.b, &buy).await, vec![("MATCHED".into(), 1500)]);
    assert_eq!(quantities(v, &v.b, &buy).await, json!({"tradable": 1500, "working": 0, "matched": 1500}));
    let (_, fathom_parents) = v.app.get("/api/parent-orders?state=ACTIVE,FILLED,CANCELLED", Some(&r.fathom)).await;
    assert_eq!(fathom_parents, json!([]), "a loser trades nothing");
    // The deadline passing changes nothing of a completed RFQ.
    v.app.clock.set(tuesday_10am() + Duration::minutes(3));
    run_timers(v).await;
    assert_eq!(states(&rfq_now(&r, &rfq).await), want);
    assert_eq!(rfq_now(&r, &rfq).await["state"], "COMPLETED");
    assert_eq!(quantities(v, &v.b, &buy).await, json!({"tradable": 1500, "working": 0, "matched": 1500}));
    drop(hake_socket);
    r.v.app.stop().await;
}

/// Accepts `provider`'s quote on `rfq`; the requester's one child order of `parent` then.
async fn accepted_match(r: &Rfqs, parent: &Value, rfq: &Value, provider: &str) -> Value {
    let v = &r.v;
    let seen = rfq_now(r, rfq).await;
    let (s, done) = accept(r, &v.b, &seen, response_of(&seen, provider)).await;
    assert_eq!((s, done["state"].clone()), (StatusCode::OK, json!("COMPLETED")), "{done}");
    let pid = parent["parent_order_id"].as_str().unwrap();
    let (_, orders) = v.app.get(&format!("/api/orders?parent_order_id={pid}"), Some(&v.b)).await;
    assert_eq!(orders.as_array().unwrap().len(), 1, "{orders}");
    orders[0].clone()
}

/// Two-way RFQs: a requester who sells trades on the provider's buy side, one who buys
/// on the provider's sell side; each at that side's price and quantity, both child orders
/// MATCHED, both parents exact.
async fn two_way_rfqs_trade_the_side_against_the_requester(b: Backend) {
    let r = rfq_venue(b).await;
    let v = &r.v;
    let both = json!({"buy_price": 94.73, "buy_quantity": 1500, "sell_price": 94.77, "sell_quantity": 1000});

    // The requester sells 2000: Fathom's bid (it buys 1500 at 94.73) is the trade.
    let sell = v.parent(&v.b, "SELL", 4000).await;
    let (s, rfq) = send(&r, &sell, json!({"two_way": true, "liquidity_provider_ids": [r.fathom_id]})).await;
    assert_eq!(s, StatusCode::CREATED, "{rfq}");
    assert_eq!(quote(&r, &r.fathom, &rfq, both.clone()).await.0, StatusCode::OK);
    let mine = accepted_match(&r, &sell, &rfq, "Fathom").await;
    assert_eq!(
        (mine["state"].clone(), mine["direction"].clone(), mine["price"].clone(), mine["quantity"].clone()),
        (json!("MATCHED"), json!("SELL"), json!(94.73), json!(1500)),
        "{mine}"
    );
    assert_eq!(quantities(v, &v.b, &sell).await, json!({"tradable": 2500, "working": 0, "matched": 1500}));
    let (_, lp) = v.app.get("/api/parent-orders?state=FILLED", Some(&r.fathom)).await;
    assert_eq!(lp.as_array().unwrap().len(), 1, "{lp}");
    assert_eq!((lp[0]["direction"].clone(), lp[0]["quantity"].clone()), (json!("BUY"), json!(1500)));
    assert_eq!(lp[0]["quantities"], json!({"tradable": 0, "working": 0, "matched": 1500}));
    assert_eq!(children(v, &r.fathom, &lp[0]).await, vec![("MATCHED".into(), 1500)]);
    let (_, m) = v.app.get("/api/order-match-requests?state=ACCEPTED", Some(&r.fathom)).await;
    assert_eq!(
        (m[0]["direction"].clone(), m[0]["price"].clone(), m[0]["quantity"].clone(), m[0]["role"].clone()),
        (json!("BUY"), json!(94.73), json!(1500), json!("RESPONDER"))
    );

    // The requester buys 1000: Gull's offer (it sells 1000 at 94.77) is the trade, the
    // whole RFQ, so the parent is FILLED.
    let buy = v.parent(&v.b, "BUY", 1000).await;
    let (_, rfq) =
        send(&r, &buy, json!({"two_way": true, "quantity": 1000, "liquidity_provider_ids": [r.gull_id]})).await;
    let both = json!({"buy_price": 94.73, "buy_quantity": 500, "sell_price": 94.77, "sell_quantity": 1000});
    assert_eq!(quote(&r, &r.gull, &rfq, both).await.0, StatusCode::OK);
    let mine = accepted_match(&r, &buy, &rfq, "Gull").await;
    assert_eq!(
        (mine["state"].clone(), mine["direction"].clone(), mine["price"].clone(), mine["quantity"].clone()),
        (json!("MATCHED"), json!("BUY"), json!(94.77), json!(1000)),
        "{mine}"
    );
    assert_eq!(quantities(v, &v.b, &buy).await, json!({"tradable": 0, "working": 0, "matched": 1000}));
    let pid = buy["parent_order_id"].as_str().unwrap();
    assert_eq!(v.app.get(&format!("/api/parent-orders/{pid}"), Some(&v.b)).await.1["state"], "FILLED");
    let (_, lp) = v.app.get("/api/parent-orders?state=FILLED", Some(&r.gull)).await;
    assert_eq!((lp[0]["direction"].clone(), lp[0]["quantity"].clone()), (json!("SELL"), json!(1000)));
    assert_eq!(lp[0]["quantities"], json!({"tradable": 0, "working": 0, "matched": 1000}));
    assert_eq!(children(v, &r.gull, &lp[0]).await, vec![("MATCHED".into(), 1000)]);
    let (_, m) = v.app.get("/api/order-match-requests?state=ACCEPTED", Some(&v.b)).await;
    let mut trades: Vec<String> = m
        .as_array()
        .unwrap()
        .iter()
        .map(|x| format!("{} {} at {}", x["direction"], x["quantity"], x["price"]))
        .collect();
    trades.sort();
    assert_eq!(trades, vec![r#""BUY" 1000 at 94.77"#, r#""SELL" 1500 at 94.73"#], "{m}");
    // Four broker e-mails, one per side of each trade.
    let mails = v.app.mails_to(BROKER_DESK, 4).await;
    assert_eq!(mails.len(), 4);
    r.v.app.stop().await;
}

/// The requester's parent through quotes and declines: the reserved quantity stays
/// reserved while providers quote or decline; when every provider has declined, nothing
/// is left to wait for: the RFQ ends at once (EXPIRED) and the quantity is back (ADR 0036).
async fn quantities_stay_exact_through_quotes_and_declines(b: Backend) {
    let r = rfq_venue(b).await;
    let v = &r.v;
    let sell = v.parent(&v.b, "SELL", 5000).await;
    let (_, rfq) = send(&r, &sell, json!({"quantity": 3000, "expires_in_seconds": 60})).await;
    let reserved = json!({"tradable": 2000, "working": 3000, "matched": 0});
    assert_eq!(quantities(v, &v.b, &sell).await, reserved);
    assert_eq!(quote(&r, &r.fathom, &rfq, json!({"buy_price": 94.72, "buy_quantity": 2500})).await.0, StatusCode::OK);
    assert_eq!(quantities(v, &v.b, &sell).await, reserved, "a quote moves nothing");
    assert_eq!(quote(&r, &r.fathom, &rfq, json!({"buy_price": 94.73, "buy_quantity": 500})).await.0, StatusCode::OK);
    assert_eq!(quantities(v, &v.b, &sell).await, reserved, "nor a requote");
    assert_eq!(quote(&r, &r.gull, &rfq, json!({"state": "REJECTED_BY_RESPONDER"})).await.0, StatusCode::OK);
    assert_eq!(quantities(v, &v.b, &sell).await, reserved, "nor one decline");
    assert_eq!(rfq_now(&r, &rfq).await["state"], "OPEN", "Fathom's quote is still there");
    // Fathom withdraws its quote by declining too: every provider has declined.
    assert_eq!(quote(&r, &r.fathom, &rfq, json!({"state": "REJECTED_BY_RESPONDER"})).await.0, StatusCode::OK);
    let seen = rfq_now(&r, &rfq).await;
    assert_eq!(seen["state"], "EXPIRED", "all declined, the RFQ ends at once: {seen}");
    assert_eq!(states(&seen), vec![pair("Fathom", "REJECTED_BY_RESPONDER"), pair("Gull", "REJECTED_BY_RESPONDER")]);
    assert_eq!(children(v, &v.b, &sell).await, vec![("EXPIRED".into(), 3000)]);
    assert_eq!(quantities(v, &v.b, &sell).await, json!({"tradable": 5000, "working": 0, "matched": 0}));
    assert_eq!(accept(&r, &v.b, &seen, response_of(&seen, "Fathom")).await.0, StatusCode::CONFLICT);
    assert_eq!(notice_types(v, &r.fathom).await, vec![pair("RFQ_RECEIVED", "REJECTED")]);
    assert_eq!(notice_types(v, &r.gull).await, vec![pair("RFQ_RECEIVED", "REJECTED")]);
    let id = rfq["rfq_id"].as_str().unwrap();
    let (s, _) = v.app.patch(&format!("/api/rfqs/{id}"), Some(&v.b), json!({"state": "CANCELLED"})).await;
    assert_eq!(s, StatusCode::CONFLICT, "an ended RFQ cannot be withdrawn");
    // Its deadline comes and finds nothing to do.
    v.app.clock.set(tuesday_10am() + Duration::seconds(60));
    v.app.running.as_ref().unwrap().run_due_timers().await;
    assert_eq!(rfq_now(&r, &rfq).await["state"], "EXPIRED");
    assert_eq!(quantities(v, &v.b, &sell).await, json!({"tradable": 5000, "working": 0, "matched": 0}));
    r.v.app.stop().await;
}

/// What an earlier RFQ reserved is not available to the next one.
async fn a_second_rfq_cannot_reserve_more_than_is_left(b: Backend) {
    let r = rfq_venue(b).await;
    let v = &r.v;
    let buy = v.parent(&v.b, "BUY", 3000).await;
    let (s, first) = send(&r, &buy, json!({})).await;
    assert_eq!(s, StatusCode::CREATED, "{first}");
    let (s, body) = send(&r, &buy, json!({"quantity": 1500})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(fields(&body), vec!["quantity".to_owned()], "{body}");
    assert_eq!(body["errors"][0]["message"], "Exceeds available quantity");
    assert_eq!(children(v, &v.b, &buy).await, vec![("AWAITING_RFQ_ACCEPTANCE".into(), 2000)], "nothing more reserved");
    assert_eq!(quantities(v, &v.b, &buy).await, json!({"tradable": 1000, "working": 2000, "matched": 0}));
    // Exactly what is left is fine; then nothing is left.
    let (s, second) = send(&r, &buy, json!({"quantity": 1000})).await;
    assert_eq!(s, StatusCode::CREATED, "{second}");
    assert_eq!(quantities(v, &v.b, &buy).await, json!({"tradable": 0, "working": 3000, "matched": 0}));
    let (s, body) = send(&r, &buy, json!({"quantity": 500})).await;
    assert_eq!(
        (s, body["errors"][0]["message"].clone()),
        (StatusCode::BAD_REQUEST, json!("Exceeds available quantity"))
    );
    // Nor can a child order; withdrawing the first RFQ frees its 2000.
    let (s, body) = v.child(&v.b, &buy, 500, p("94.75"), false).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
    let id = first["rfq_id"].as_str().unwrap();
    assert_eq!(
        v.app.patch(&format!("/api/rfqs/{id}"), Some(&v.b), json!({"state": "CANCELLED"})).await.0,
        StatusCode::OK
    );
    let (s, body) = send(&r, &buy, json!({"quantity": 2000})).await;
    assert_eq!(s, StatusCode::CREATED, "{body}");
    assert_eq!(quantities(v, &v.b, &buy).await, json!({"tradable": 0, "working": 3000, "matched": 0}));
    r.v.app.stop().await;
}

/// Every frame the peer has printed until `stop` matches one, then whatever follows
/// within a short quiet spell.
async fn frames_until(peer: &mut Peer, stop: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut out = Vec::new();
    loop {
        let msg = peer.next_json(std::time::Duration::from_secs(10)).await.expect("the awaited frame never came");
        let done = stop(&msg["body"]);
        out.push(msg);
        if done {
            break;
        }
    }
    while let Some(msg) = peer.next_json(std::time::Duration::from_millis(300)).await {
        out.push(msg);
    }
    out
}

/// An anonymous RFQ, quoted and accepted: nothing a provider can see names the
/// requester's firm, user (name, e-mail, id) or their parent and order: the incoming
/// list, the notifications, the STOMP frames on both topics, its match, its broker's
/// e-mail and link page. The requester's own broker's e-mail names them (so the search
/// would find a leak).
async fn an_anonymous_rfq_never_reveals_the_requester(b: Backend) {
    let r = rfq_venue(b).await;
    let v = &r.v;
    // The provider confirms through its own broker, so its broker's e-mail is apart.
    let tern = broker(v, "Tern", "confirm@tern.test").await;
    let admin = v.app.admin_token().await;
    let only_tern = json!([{"company_id": tern}]);
    let (s, body) = v
        .app
        .patch(
            &format!("/api/admin/companies/{}", r.fathom_id),
            Some(&admin),
            json!({"name": "Fathom", "full_name": "Fathom Markets", "roles": ["liquidity-provider"],
                   "brokers": only_tern, "default_broker": only_tern[0]}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{body}");
    upstairs::app::bootstrap_user_named(
        &v.app.database_url,
        "ines@kestrel.test",
        PW,
        &["trader"],
        "Kestrel",
        "Ines",
        "Quarterdeck",
    )
    .await
    .unwrap();
    let ines = v.app.login_remembered("ines@kestrel.test", PW).await;
    let (_, me) = v.app.get("/api/users/me", Some(&ines)).await;

    let mut rfq_frames = rfq_socket(v, &r.fathom).await;
    let topic = "/user/topic/notifications";
    let mut notice_frames =
        Peer::spawn("stomp_client.py", &["127.0.0.1".into(), v.app.port().to_string(), r.fathom.clone(), topic.into()]);
    let wait = std::time::Duration::from_secs(10);
    assert_eq!(notice_frames.next_json(wait).await.unwrap()["event"], "connected");
    assert_eq!(notice_frames.next_json(wait).await.unwrap()["event"], "subscribed");

    let (s, parent) = v
        .app
        .post(
            "/api/parent-orders",
            Some(&ines),
            json!({"direction": "BUY", "instrument_id": v.instrument, "quantity": 2000}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{parent}");
    let (s, rfq) = v
        .app
        .post(
            "/api/rfqs",
            Some(&ines),
            json!({"parent_order_id": parent["parent_order_id"], "quantity": 2000, "anonymous": true,
                   "liquidity_provider_ids": [r.fathom_id]}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{rfq}");
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut keep = |what: &str, payload: &Value| seen.push((what.to_owned(), payload.to_string()));
    keep("incoming, awaiting", &v.app.get("/api/rfqs/all/responses", Some(&r.fathom)).await.1);
    let (s, q) = quote(&r, &r.fathom, &rfq, json!({"sell_price": 94.76, "sell_quantity": 2000})).await;
    assert_eq!(s, StatusCode::OK, "{q}");
    keep("the quote's answer", &q);
    keep("incoming, responded", &v.app.get("/api/rfqs/all/responses?state=RESPONDED", Some(&r.fathom)).await.1);
    let id = rfq["rfq_id"].as_str().unwrap();
    let (_, now) = v.app.get(&format!("/api/rfqs/{id}"), Some(&ines)).await;
    let rid = now["responses"][0]["rfq_response_id"].as_str().unwrap();
    let (s, done) =
        v.app.patch(&format!("/api/rfqs/{id}/responses/{rid}"), Some(&ines), json!({"state": "ACCEPTED"})).await;
    assert_eq!((s, done["state"].clone()), (StatusCode::OK, json!("COMPLETED")), "{done}");

    keep("incoming, accepted", &v.app.get("/api/rfqs/all/responses?state=ACCEPTED", Some(&r.fathom)).await.1);
    keep("incoming, default", &v.app.get("/api/rfqs/all/responses", Some(&r.fathom)).await.1);
    keep("notifications", &v.app.get("/api/notifications", Some(&r.fathom)).await.1);
    keep("match requests", &v.app.get("/api/order-match-requests?state=ACCEPTED", Some(&r.fathom)).await.1);
    let (_, lp_parents) = v.app.get("/api/parent-orders?state=ACTIVE,FILLED,CANCELLED", Some(&r.fathom)).await;
    keep("the provider's parents", &lp_parents);
    let lp_pid = lp_parents[0]["parent_order_id"].as_str().unwrap();
    let (_, lp_orders) = v.app.get(&format!("/api/orders?parent_order_id={lp_pid}"), Some(&r.fathom)).await;
    keep("the provider's orders", &lp_orders);
    for frame in frames_until(&mut rfq_frames, |b| b["state"] == "COMPLETED").await {
        keep("an /user/topic/rfqs frame", &frame);
    }
    let accepted = |b: &Value| b["type"] == "RFQ_QUOTE_ACCEPTED";
    let frames = frames_until(&mut notice_frames, accepted).await;
    assert!(frames.iter().any(|f| f["body"]["type"] == "RFQ_RECEIVED"), "{frames:?}");
    for frame in frames {
        keep("an /user/topic/notifications frame", &frame);
    }
    let mails = v.app.mails_to("confirm@tern.test", 1).await;
    assert_eq!(mails.len(), 1);
    assert!(mails[0].contains("Client: Fathom"), "{}", mails[0]);
    let lp_order = lp_orders[0]["order_id"].as_str().unwrap();
    let needle = format!("/accept-order?order_id={lp_order}&token=");
    let at = mails[0].find(&needle).unwrap_or_else(|| panic!("no link in {}", mails[0])) + needle.len();
    let token: String = mails[0][at..].chars().take_while(|c| c.is_ascii_hexdigit()).collect();
    let (s, page) = v.app.get(&format!("/api/orders/{lp_order}/confirmation?token={token}&step=ACCEPT"), None).await;
    assert_eq!(s, StatusCode::OK, "{page}");
    seen.push(("the provider's broker's e-mail".into(), mails[0].clone()));
    seen.push(("the provider's broker's link page".into(), page.to_string()));

    let secrets = [
        "Kestrel".to_owned(),
        "Ines".to_owned(),
        "Quarterdeck".to_owned(),
        "ines@kestrel.test".to_owned(),
        me["user_id"].as_str().unwrap().to_owned(),
        me["company_id"].as_str().unwrap().to_owned(),
        parent["parent_order_id"].as_str().unwrap().to_owned(),
        rfq["order_id"].as_str().unwrap().to_owned(),
    ];
    assert!(seen.len() >= 16, "{seen:?}");
    for (what, text) in &seen {
        for secret in &secrets {
            assert!(!text.contains(secret.as_str()), "{what} reveals {secret}: {text}");
        }
    }
    // The requester's own broker is told who its client is: the search finds names.
    let theirs = v.app.mails_to(BROKER_DESK, 1).await;
    for secret in ["Client: Kestrel", "Trader: Ines Quarterdeck", rfq["order_id"].as_str().unwrap()] {
        assert!(theirs[0].contains(secret), "{secret} in {}", theirs[0]);
    }
    drop((rfq_frames, notice_frames));
    r.v.app.stop().await;
}

/// What was pending or open at Tuesday's close, made at 16:58: A's resting 1000 wholly
/// taken by B (the request expires at 17:03), and B's RFQ for 1000 of a SELL parent
/// (deadline 17:13), quoted by Fathom.
struct AtTheClose {
    a_sell: Value,
    tuesday_rest: Value,
    b_buy: Value,
    b_sell: Value,
    tuesday_request: String,
    tuesday_rfq: Value,
}

fn tuesday_close() -> chrono::DateTime<chrono::Utc> {
    tuesday_10am() + Duration::hours(7)
}

/// The venue with its providers, its job loop polling once an hour (only a poke, a take
/// or an RFQ, or the test runs it), and Tuesday's business pending at the close.
async fn pending_at_the_close(b: Backend) -> (Rfqs, AtTheClose) {
    let v = venue_with(b, |s| s.scheduler_poll = std::time::Duration::from_secs(3600)).await;
    let r = with_providers(v).await;
    let v = &r.v;
    v.app.clock.set(tuesday_close() - Duration::minutes(2));
    let a_sell = v.parent(&v.a, "SELL", 2000).await;
    let (s, tuesday_rest) = v.child(&v.a, &a_sell, 1000, p("94.75"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{tuesday_rest}");
    let b_buy = v.parent(&v.b, "BUY", 4000).await;
    let (s, sent) = take_for(v, &b_buy, 1000, "94.75").await;
    assert_eq!(s, StatusCode::CREATED, "{sent}");
    let b_sell = v.parent(&v.b, "SELL", 3000).await;
    let (s, tuesday_rfq) = send(&r, &b_sell, json!({"quantity": 1000, "expires_in_seconds": 900})).await;
    assert_eq!(s, StatusCode::CREATED, "{tuesday_rfq}");
    let (s, q) = quote(&r, &r.fathom, &tuesday_rfq, json!({"buy_price": 94.74, "buy_quantity": 1000})).await;
    assert_eq!(s, StatusCode::OK, "{q}");
    run_timers(v).await;
    let tuesday_request = sent[0]["order_match_request_id"].as_str().unwrap().to_owned();
    (r, AtTheClose { a_sell, tuesday_rest, b_buy, b_sell, tuesday_request, tuesday_rfq })
}

async fn take_for(v: &Venue, parent: &Value, quantity: i64, price: &'static str) -> (StatusCode, Value) {
    let body = json!({"requesting_parent_order_id": parent["parent_order_id"], "quantity": quantity,
                      "price": p(price).0, "requesting_broker_id": v.broker, "dry_run": false, "residual": false});
    v.app.post("/api/order-match-requests", Some(&v.b), body).await
}

/// The due times of the pending DAY_CLOSE timers.
async fn closes_pending(v: &Venue) -> Vec<chrono::DateTime<chrono::Utc>> {
    pending_timers(&v.app.database_url)
        .await
        .into_iter()
        .filter(|t| t.kind == upstairs_engine::orders::DAY_CLOSE)
        .map(|t| t.due_at)
        .collect()
}

fn match_path(id: &str) -> String {
    format!("/api/order-match-requests/{id}")
}

/// Tuesday's request timed out, its orders expired, its RFQ expired with every response,
/// each quantity back; no mark against the responder (the close ended it, not its
/// deadline); the next close is scheduled, once.
async fn tuesday_ended(r: &Rfqs, t: &AtTheClose) {
    let v = &r.v;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while v.app.get(&match_path(&t.tuesday_request), Some(&v.b)).await.1["state"] != "TIMED_OUT" {
        run_timers(v).await;
        assert!(std::time::Instant::now() < deadline, "the late close never ended Tuesday's request");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    rfq_settles(r, &t.tuesday_rfq, "EXPIRED").await;
    assert_eq!(states(&rfq_now(r, &t.tuesday_rfq).await), vec![pair("Fathom", "EXPIRED"), pair("Gull", "EXPIRED")]);
    let order = format!("/api/orders/{}", t.tuesday_rest["order_id"].as_str().unwrap());
    assert_eq!(v.app.get(&order, Some(&v.a)).await.1["state"], "EXPIRED");
    assert_eq!(v.app.get("/api/users/me", Some(&v.a)).await.1["reliability_score"], 100);
    assert_eq!(closes_pending(v).await, vec![tuesday_close() + Duration::days(1)]);
}

/// The close runs late, in Wednesday's pre-open (06:00; the node was down over night):
/// it ends what was pending or open at Tuesday's 17:00 and gives the quantities back, but
/// spares the order A placed at 06:00 to wait for the open, which goes live at 09:00.
async fn a_late_close_in_the_pre_open_spares_the_waiting_order(b: Backend) {
    let (r, t) = pending_at_the_close(b).await;
    let v = &r.v;
    v.app.clock.set(tuesday_close() + Duration::hours(13));
    let (s, waiting) = v.child(&v.a, &t.a_sell, 500, p("94.76"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{waiting}");
    assert_eq!(waiting["waiting_for_open"], json!(true), "{waiting}");
    // Nothing pokes the job loop in the pre-open: the close is still to run, now.
    assert_eq!(closes_pending(v).await, vec![tuesday_close()]);
    assert_eq!(v.app.get(&match_path(&t.tuesday_request), Some(&v.b)).await.1["state"], "PENDING");
    tuesday_ended(&r, &t).await;
    let order = format!("/api/orders/{}", waiting["order_id"].as_str().unwrap());
    let (_, spared) = v.app.get(&order, Some(&v.a)).await;
    assert_eq!((spared["state"].clone(), spared["waiting_for_open"].clone()), (json!("WORKING"), json!(true)));
    assert_eq!(children(v, &v.a, &t.a_sell).await, vec![("EXPIRED".into(), 1000), ("WORKING".into(), 500)]);
    assert_eq!(quantities(v, &v.a, &t.a_sell).await, json!({"tradable": 1500, "working": 500, "matched": 0}));
    assert_eq!(children(v, &v.b, &t.b_buy).await, vec![("EXPIRED".into(), 1000)]);
    assert_eq!(quantities(v, &v.b, &t.b_buy).await, json!({"tradable": 4000, "working": 0, "matched": 0}));
    assert_eq!(children(v, &v.b, &t.b_sell).await, vec![("EXPIRED".into(), 1000)]);
    assert_eq!(quantities(v, &v.b, &t.b_sell).await, json!({"tradable": 3000, "working": 0, "matched": 0}));
    assert_eq!(notice_types(v, &r.fathom).await, vec![pair("RFQ_RECEIVED", "TIMED_OUT")]);
    // At the open it goes live by itself, and a take reaches it.
    v.app.clock.set(tuesday_close() + Duration::hours(16));
    let (_, live) = v.app.get(&order, Some(&v.a)).await;
    assert_eq!((live["waiting_for_open"].clone(), live["matchable"].clone()), (json!(false), json!(true)));
    let (s, sent) = take_for(v, &t.b_buy, 500, "94.76").await;
    assert_eq!((s, sent[0]["quantity"].clone()), (StatusCode::CREATED, json!(500)), "{sent}");
    r.v.app.stop().await;
}

/// The close runs later still, after Wednesday's open (09:30): the order, the match
/// request and the RFQ made since the open are spared.
async fn a_late_close_after_the_open_spares_the_new_requests_and_rfqs(b: Backend) {
    let (r, t) = pending_at_the_close(b).await;
    let v = &r.v;
    v.app.clock.set(tuesday_close() + Duration::hours(16) + Duration::minutes(30));
    let (s, wednesday_rest) = v.child(&v.a, &t.a_sell, 500, p("94.76"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{wednesday_rest}");
    assert_eq!(closes_pending(v).await, vec![tuesday_close()], "Tuesday's close still waits to run");
    // A Wednesday take (of the Wednesday order: Tuesday's is locked) and RFQ; each pokes
    // the job loop, which may run the late close from then on.
    let (s, sent) = take_for(v, &t.b_buy, 500, "94.76").await;
    assert_eq!((s, sent[0]["price"].clone()), (StatusCode::CREATED, json!(94.76)), "{sent}");
    let wednesday_request = sent[0]["order_match_request_id"].as_str().unwrap().to_owned();
    let (s, wednesday_rfq) = send(&r, &t.b_sell, json!({"quantity": 1000})).await;
    assert_eq!(s, StatusCode::CREATED, "{wednesday_rfq}");
    tuesday_ended(&r, &t).await;
    // Spared: what was made after the next open.
    assert_eq!(v.app.get(&match_path(&wednesday_request), Some(&v.b)).await.1["state"], "PENDING");
    let now = rfq_now(&r, &wednesday_rfq).await;
    assert_eq!(now["state"], "OPEN");
    assert_eq!(states(&now), vec![pair("Fathom", "AWAITING_RESPONSE"), pair("Gull", "AWAITING_RESPONSE")]);
    assert_eq!(children(v, &v.a, &t.a_sell).await, vec![("AWAITING_MATCH".into(), 500), ("EXPIRED".into(), 1000)]);
    assert_eq!(quantities(v, &v.a, &t.a_sell).await, json!({"tradable": 1500, "working": 500, "matched": 0}));
    assert_eq!(children(v, &v.b, &t.b_buy).await, vec![("AWAITING_MATCH".into(), 500), ("EXPIRED".into(), 1000)]);
    assert_eq!(quantities(v, &v.b, &t.b_buy).await, json!({"tradable": 3500, "working": 500, "matched": 0}));
    assert_eq!(
        children(v, &v.b, &t.b_sell).await,
        vec![("AWAITING_RFQ_ACCEPTANCE".into(), 1000), ("EXPIRED".into(), 1000)]
    );
    assert_eq!(quantities(v, &v.b, &t.b_sell).await, json!({"tradable": 2000, "working": 1000, "matched": 0}));
    assert_eq!(
        notice_types(v, &r.fathom).await,
        vec![pair("RFQ_RECEIVED", "PENDING"), pair("RFQ_RECEIVED", "TIMED_OUT")]
    );
    // Wednesday's request still trades.
    let (s, accepted) = v.app.patch(&match_path(&wednesday_request), Some(&v.a), json!({"state": "ACCEPTED"})).await;
    assert_eq!((s, accepted["state"].clone()), (StatusCode::OK, json!("ACCEPTED")), "{accepted}");
    assert_eq!(quantities(v, &v.b, &t.b_buy).await, json!({"tradable": 3500, "working": 0, "matched": 500}));
    r.v.app.stop().await;
}

/// The close runs late, after Wednesday's open. A take made at 09:30 must not reach an
/// order A placed on Tuesday, still resting only because the close had not run: the
/// close would expire it and strand the request.
async fn a_late_close_never_strands_a_request_made_after_the_open(b: Backend) {
    let v = venue_with(b, |s| s.scheduler_poll = std::time::Duration::from_secs(3600)).await;
    v.app.clock.set(tuesday_close() - Duration::minutes(2));
    let a_sell = v.parent(&v.a, "SELL", 1000).await;
    let (s, tuesday) = v.child(&v.a, &a_sell, 1000, p("94.75"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{tuesday}");
    let b_buy = v.parent(&v.b, "BUY", 1000).await;
    // Wednesday 09:30, Tuesday's close not run yet: Tuesday's order is over all the same,
    // so nothing can lock it for a request the close would then strand.
    v.app.clock.set(tuesday_close() + Duration::hours(16) + Duration::minutes(30));
    let (s, sent) = take_for(&v, &b_buy, 1000, "94.75").await;
    assert_eq!(s, StatusCode::CONFLICT, "{sent}");
    assert_eq!(sent["detail"], "This trade could not be matched due to your trade criteria", "{sent}");
    // The late close runs and expires it; B's parent is whole.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while closes_pending(&v).await != vec![tuesday_close() + Duration::days(1)] {
        run_timers(&v).await;
        assert!(std::time::Instant::now() < deadline, "the late close never ran");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(children(&v, &v.a, &a_sell).await[0].0, "EXPIRED");
    let q = quantities(&v, &v.b, &b_buy).await;
    assert_eq!((q["tradable"].clone(), q["working"].clone()), (json!(1000), json!(0)), "{q}");
    v.app.stop().await;
}

/// The requester accepted a quote: their notices of the quotes received do not all say
/// REJECTED (the history would show a completed trade as rejected); the one of the
/// accepted quote says ACCEPTED.
async fn the_requesters_notices_say_the_rfq_traded(b: Backend) {
    let r = rfq_venue(b).await;
    let v = &r.v;
    let buy = v.parent(&v.b, "BUY", 2000).await;
    let (_, rfq) = send(&r, &buy, json!({})).await;
    assert_eq!(quote(&r, &r.fathom, &rfq, json!({"sell_price": 94.76, "sell_quantity": 2000})).await.0, StatusCode::OK);
    assert_eq!(quote(&r, &r.gull, &rfq, json!({"sell_price": 94.75, "sell_quantity": 2000})).await.0, StatusCode::OK);
    let seen = rfq_now(&r, &rfq).await;
    assert_eq!(accept(&r, &v.b, &seen, response_of(&seen, "Gull")).await.0, StatusCode::OK);
    let mine = notice_types(v, &v.b).await;
    assert_eq!(mine.len(), 2, "{mine:?}");
    assert!(mine.contains(&pair("RFQ_QUOTE_RECEIVED", "ACCEPTED")), "{mine:?}");
    r.v.app.stop().await;
}

/// An accept may name the quote the requester saw: a requote since, or a band that moved
/// away from the quote, is refused and nothing trades; the quote as it is now trades.
async fn an_accept_names_the_quote_it_takes(b: Backend) {
    let r = rfq_venue(b).await;
    let v = &r.v;
    let buy = v.parent(&v.b, "BUY", 2000).await;
    let (_, rfq) = send(&r, &buy, json!({})).await;
    assert_eq!(quote(&r, &r.fathom, &rfq, json!({"sell_price": 94.76, "sell_quantity": 2000})).await.0, StatusCode::OK);
    let seen = rfq_now(&r, &rfq).await;
    // Fathom requotes worse before the click.
    assert_eq!(quote(&r, &r.fathom, &rfq, json!({"sell_price": 94.78, "sell_quantity": 2000})).await.0, StatusCode::OK);
    let path = format!(
        "/api/rfqs/{}/responses/{}",
        rfq["rfq_id"].as_str().unwrap(),
        response_of(&seen, "Fathom")["rfq_response_id"].as_str().unwrap()
    );
    let stale = json!({"state": "ACCEPTED", "price": 94.76, "quantity": 2000});
    let (s, body) = v.app.patch(&path, Some(&v.b), stale).await;
    assert_eq!(
        (s, body["detail"].clone()),
        (StatusCode::CONFLICT, json!("The quote has changed: check the new price and accept again."))
    );
    let (s, body) = v.app.patch(&path, Some(&v.b), json!({"state": "ACCEPTED", "price": 94.78})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "price without quantity: {body}");
    // The band moves above the quote: refused too.
    let admin = v.app.admin_token().await;
    let band = format!("/api/admin/instruments/{}/band", v.instrument);
    let moved = json!({"min_tick_price": 94.70, "max_tick_price": 94.77});
    assert_eq!(v.app.post(&band, Some(&admin), moved).await.0, StatusCode::OK);
    let (s, body) =
        v.app.patch(&path, Some(&v.b), json!({"state": "ACCEPTED", "price": 94.78, "quantity": 2000})).await;
    assert_eq!(
        (s, body["detail"].clone()),
        (StatusCode::CONFLICT, json!("The market has moved away from this quote: ask for a new one."))
    );
    assert_eq!(quantities(v, &v.b, &buy).await, json!({"tradable": 0, "working": 2000, "matched": 0}));
    // Back inside: the quote as seen now trades.
    let back = json!({"min_tick_price": 94.70, "max_tick_price": 94.80});
    assert_eq!(v.app.post(&band, Some(&admin), back).await.0, StatusCode::OK);
    let (s, done) =
        v.app.patch(&path, Some(&v.b), json!({"state": "ACCEPTED", "price": 94.78, "quantity": 2000})).await;
    assert_eq!((s, done["state"].clone()), (StatusCode::OK, json!("COMPLETED")), "{done}");
    assert_eq!(quantities(v, &v.b, &buy).await, json!({"tradable": 0, "working": 0, "matched": 2000}));
    r.v.app.stop().await;
}

/// Without a state, a provider's list holds its open responses and then today's ended
/// ones with their outcome; an RFQ of yesterday that ended is not listed.
async fn providers_see_todays_outcomes(b: Backend) {
    let r = rfq_venue(b).await;
    let v = &r.v;
    let buy = v.parent(&v.b, "BUY", 5000).await;
    let (_, yesterday) = send(&r, &buy, json!({"quantity": 1000, "liquidity_provider_ids": [r.fathom_id]})).await;
    assert_eq!(
        v.app
            .patch(
                &format!("/api/rfqs/{}", yesterday["rfq_id"].as_str().unwrap()),
                Some(&v.b),
                json!({"state": "CANCELLED"})
            )
            .await
            .0,
        StatusCode::OK
    );
    // The next day (Wednesday 10:00): one accepted, one expired, one still open.
    v.app.clock.advance(Duration::days(1));
    let (_, won) = send(&r, &buy, json!({"quantity": 1000, "liquidity_provider_ids": [r.fathom_id]})).await;
    assert_eq!(quote(&r, &r.fathom, &won, json!({"sell_price": 94.76, "sell_quantity": 1000})).await.0, StatusCode::OK);
    let seen = rfq_now(&r, &won).await;
    assert_eq!(accept(&r, &v.b, &seen, response_of(&seen, "Fathom")).await.0, StatusCode::OK);
    let (_, lapsed) =
        send(&r, &buy, json!({"quantity": 1000, "liquidity_provider_ids": [r.fathom_id], "expires_in_seconds": 60}))
            .await;
    v.app.clock.advance(Duration::seconds(60));
    run_timers(v).await;
    assert_eq!(rfq_now(&r, &lapsed).await["state"], "EXPIRED");
    let (_, open) = send(&r, &buy, json!({"quantity": 1000, "liquidity_provider_ids": [r.fathom_id]})).await;
    let (s, list) = v.app.get("/api/rfqs/all/responses", Some(&r.fathom)).await;
    assert_eq!(s, StatusCode::OK, "{list}");
    let got: Vec<(Value, Value)> =
        list.as_array().unwrap().iter().map(|i| (i["rfq_id"].clone(), i["response"]["state"].clone())).collect();
    assert_eq!(
        got,
        vec![
            (open["rfq_id"].clone(), json!("AWAITING_RESPONSE")),
            (lapsed["rfq_id"].clone(), json!("EXPIRED")),
            (won["rfq_id"].clone(), json!("ACCEPTED")),
        ]
    );
    // The spec's call filters as it did.
    let (_, awaiting) = v.app.get("/api/rfqs/all/responses?state=AWAITING_RESPONSE", Some(&r.fathom)).await;
    assert_eq!(awaiting.as_array().unwrap().len(), 1);
    r.v.app.stop().await;
}

/// An accepted quote is a match like a taken order: the broker with a FIX session gets a
/// TradeCaptureReport for each side (ADR 0025), at the quote's price.
async fn an_accepted_quote_reaches_the_broker_by_fix(b: Backend) {
    let v = venue_with(b, |s| {
        s.fix = Some(upstairs_fix::FixSettings {
            bind: "127.0.0.1:0".into(),
            comp_id: "UPSTAIRS".into(),
            tls: None,
            outbox_poll: upstairs_fix::OUTBOX_POLL,
        });
    })
    .await;
    let admin = v.app.admin_token().await;
    let body = json!({"fix_comp_id": "BALTIC", "fix_password": "Baltic-FIX-pass"});
    assert_eq!(v.app.patch(&format!("/api/admin/companies/{}", v.broker), Some(&admin), body).await.0, StatusCode::OK);
    let port = v.app.running.as_ref().unwrap().fix.as_ref().unwrap().local_addr().port();
    let r = with_providers(v).await;
    let v = &r.v;
    let dir = temp_dir();
    let mut broker = support::fix::FixPeer::spawn(port, "BALTIC", "Baltic-FIX-pass", dir.path(), &[]);
    broker.logon().await;
    let buy = v.parent(&v.b, "BUY", 3000).await;
    let (s, rfq) = send(&r, &buy, json!({})).await;
    assert_eq!(s, StatusCode::CREATED, "{rfq}");
    let (s, q) = quote(&r, &r.fathom, &rfq, json!({"sell_price": 94.76, "sell_quantity": 1500})).await;
    assert_eq!(s, StatusCode::OK, "{q}");
    let seen = rfq_now(&r, &rfq).await;
    assert_eq!(accept(&r, &v.b, &seen, response_of(&seen, "Fathom")).await.0, StatusCode::OK);
    let within = support::fix::WITHIN;
    let mut sides = Vec::new();
    for _ in 0..2 {
        let report = broker.expect("a trade report", within, |e| support::fix::is_app(e, "AE")).await;
        assert_eq!(support::fix::field(&report, 31).as_deref(), Some("94.76"), "{report}");
        assert_eq!(support::fix::field(&report, 32).as_deref(), Some("1500"), "{report}");
        sides.push(support::fix::field(&report, 54).unwrap());
    }
    sides.sort();
    assert_eq!(sides, ["1", "2"]);
    broker.stop().await;
    balanced(&r).await;
    r.v.app.stop().await;
}

/// Issue 29 (ADR 0042): Fathom's firm filter blocks Kestrel. Kestrel's list of providers
/// no longer names Fathom, and an RFQ to it is refused as one to a firm that is no
/// provider at all; Gull is asked as before. Lifted, Fathom is back.
async fn a_provider_that_blocks_the_requester_is_not_on_its_list(b: Backend) {
    let r = rfq_venue(b).await;
    let v = &r.v;
    let admin = v.app.admin_token().await;
    let kestrel = v.app.get("/api/users/me", Some(&v.b)).await.1["company_id"].clone();
    let filter = format!("/api/companies/{}/counterparty-filter", r.fathom_id);
    let names = || async {
        let (_, lps) = v.app.get("/api/liquidity-providers", Some(&v.b)).await;
        lps.as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
    };
    assert_eq!(names().await, ["Fathom", "Gull"]);
    let (s, _) = v.app.put(&filter, Some(&admin), json!({"blocked_company_ids": [kestrel]})).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(names().await, ["Gull"]);
    let buy = v.parent(&v.b, "BUY", 3000).await;
    let blocked = send(&r, &buy, json!({"liquidity_provider_ids": [r.fathom_id]})).await;
    let unknown = send(&r, &buy, json!({"liquidity_provider_ids": [v.broker]})).await;
    assert_eq!(blocked.0, StatusCode::BAD_REQUEST, "{}", blocked.1);
    assert_eq!(blocked, unknown);
    let (s, rfq) = send(&r, &buy, json!({"liquidity_provider_ids": [r.gull_id]})).await;
    assert_eq!(s, StatusCode::CREATED, "{rfq}");
    let (s, _) = v.app.put(&filter, Some(&admin), json!({"blocked_company_ids": []})).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(names().await, ["Fathom", "Gull"]);
    r.v.app.stop().await;
}

/// Issue 30, ADR 0048: a quote is not accepted while the instrument's prices are stale; the
/// RFQ stays open and the quote stands, and the next price lets the accept through.
async fn a_quote_waits_while_prices_are_stale(b: Backend) {
    let r = rfq_venue(b).await;
    let v = &r.v;
    let admin = v.app.admin_token().await;
    let path = format!("/api/admin/instruments/{}", v.instrument);
    assert_eq!(v.app.patch(&path, Some(&admin), json!({"prices_stale_after": 10})).await.0, StatusCode::OK);
    let buy = v.parent(&v.b, "BUY", 3000).await;
    let (s, rfq) = send(&r, &buy, json!({})).await;
    assert_eq!(s, StatusCode::CREATED, "{rfq}");
    let (s, q) = quote(&r, &r.fathom, &rfq, json!({"sell_price": 94.76, "sell_quantity": 1500})).await;
    assert_eq!(s, StatusCode::OK, "{q}");
    v.app.clock.advance(Duration::seconds(10));
    let seen = rfq_now(&r, &rfq).await;
    let (s, e) = accept(&r, &v.b, &seen, response_of(&seen, "Fathom")).await;
    assert_eq!(s, StatusCode::CONFLICT, "{e}");
    assert!(e["detail"].as_str().unwrap().contains("are stale"), "{e}");
    assert_eq!(states(&rfq_now(&r, &rfq).await), vec![pair("Fathom", "RESPONDED"), pair("Gull", "AWAITING_RESPONSE")]);
    let (s, _) = v
        .app
        .post(&format!("{path}/band"), Some(&admin), json!({"min_tick_price": 94.70, "max_tick_price": 94.80}))
        .await;
    assert_eq!(s, StatusCode::OK);
    let (s, done) = accept(&r, &v.b, &seen, response_of(&seen, "Fathom")).await;
    assert_eq!((s, done["state"].clone()), (StatusCode::OK, json!("COMPLETED")), "{done}");
    balanced(&r).await;
    r.v.app.stop().await;
}

/// "Today" in a provider's inbox is the instrument's trading day (its exchange's calendar,
/// ADR 0052), not the venue's: on a Tokyo instrument, an RFQ ended at 23:00 Tokyo time is
/// yesterday's two hours later, while in London, the venue's day, it is still Tuesday.
async fn providers_see_today_by_the_instruments_exchange(b: Backend) {
    let r = rfq_venue(b).await;
    let v = &r.v;
    let admin = v.app.admin_token().await;
    let tokyo = json!({"name": "Japan Exchange", "time_zone": "Asia/Tokyo", "open_time": "00:00",
                       "close_time": "23:59", "parent_orders_from": "00:00",
                       "days": ["Mon", "Tue", "Wed", "Thu", "Fri"], "holidays": []});
    let (s, body) = v.app.put("/api/admin/exchanges/XTKS", Some(&admin), tokyo).await;
    assert_eq!(s, StatusCode::CREATED, "{body}");
    let instrument = format!("/api/admin/instruments/{}", v.instrument);
    assert_eq!(v.app.patch(&instrument, Some(&admin), json!({"exchange_iso_code": "XTKS"})).await.0, StatusCode::OK);
    let buy = v.parent(&v.b, "BUY", 5000).await;
    let withdrawn = || async {
        let (s, rfq) = send(&r, &buy, json!({"quantity": 1000, "liquidity_provider_ids": [r.fathom_id]})).await;
        assert_eq!(s, StatusCode::CREATED, "{rfq}");
        let path = format!("/api/rfqs/{}", rfq["rfq_id"].as_str().unwrap());
        assert_eq!(v.app.patch(&path, Some(&v.b), json!({"state": "CANCELLED"})).await.0, StatusCode::OK);
        rfq["rfq_id"].clone()
    };
    // Tuesday 23:00 in Tokyo (14:00 in London), then Wednesday 01:00 (16:00 in London).
    v.app.clock.set(tuesday_10am() + Duration::hours(4));
    let tuesday = withdrawn().await;
    v.app.clock.set(tuesday_10am() + Duration::hours(6));
    let wednesday = withdrawn().await;
    v.app.clock.set(tuesday_10am() + Duration::hours(6) + Duration::minutes(30));
    let listed = || async {
        let (s, list) = v.app.get("/api/rfqs/all/responses", Some(&r.fathom)).await;
        assert_eq!(s, StatusCode::OK, "{list}");
        list.as_array().unwrap().iter().map(|i| i["rfq_id"].clone()).collect::<Vec<_>>()
    };
    assert_eq!(listed().await, vec![wednesday.clone()], "Tokyo's Wednesday began at 15:00 in London");
    // Back on the venue's calendar, both are Tuesday's.
    assert_eq!(v.app.delete("/api/admin/exchanges/XTKS", Some(&admin)).await.0, StatusCode::NO_CONTENT);
    assert_eq!(listed().await, vec![wednesday, tuesday]);
    r.v.app.stop().await;
}
