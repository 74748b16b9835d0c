#![allow(clippy::unwrap_used)]
//! Taking liquidity over HTTP on both backends: the dry run, match requests and every way
//! one ends (accepted, rejected, withdrawn, timed out, auto-answered, out of the band, the
//! close, a cancelled order), who may answer, sweeps and icebergs, and racing takers. After
//! each test every parent order in the database still adds up: tradable + working +
//! matched = quantity (`balanced_after`).
mod support;

use chrono::Duration;
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::venue::*;
use support::*;

on_both_backends!(
    dry_run_then_accept,
    reject_timeout_and_withdrawal,
    auto_responses,
    an_instant_auto_answer_runs_without_waiting_for_the_poll,
    only_the_parties_answer,
    nothing_to_match,
    band_move_close_and_cancel_end_requests,
    racing_takers_never_share_resting_quantity,
    notifications_tell_each_party_at_once,
    brokers_accept_then_fill_by_link,
    a_broker_declining_breaks_the_trade_down,
    broker_links_are_bound_and_expire,
    a_residual_works_at_the_take_price,
    a_take_sweeps_best_price_then_oldest_across_firms,
    a_take_reads_what_it_reaches_not_the_depth_of_the_book,
    a_take_reaches_into_an_iceberg,
    an_accept_after_an_unswept_band_move_cancels,
    no_resting_order_is_left_below_a_block,
    no_sequence_of_previews_finds_a_hidden_size,
    previews_are_throttled_per_user,
    a_minimum_execution_size_holds_in_takes_and_previews,
    a_minimum_execution_size_is_the_owners_to_set,
    counterparty_filters_hold_both_ways_unseen,
    counterparty_filters_are_set_by_their_owners,
    stale_prices_hold_trading_until_a_price_comes,
);

/// A's SELL of `quantity` resting at `price`; B's BUY parent of `parent_quantity`.
async fn rest_and_parent(v: &Venue, quantity: i64, price: &'static str, parent_quantity: i64) -> (Value, Value, Value) {
    let sell = v.parent(&v.a, "SELL", quantity).await;
    let (s, resting) = v.child(&v.a, &sell, quantity, p(price), false).await;
    assert_eq!(s, StatusCode::CREATED, "{resting}");
    let buy = v.parent(&v.b, "BUY", parent_quantity).await;
    (sell, resting, buy)
}

/// A take reads the best resting orders first (16 of them) and the rest of the side only
/// when those do not fill it: the best price wherever it stands in time, and past the
/// first 16 when the take needs them, in a preview as in the take.
async fn a_take_reads_what_it_reaches_not_the_depth_of_the_book(b: Backend) {
    let v = venue(b).await;
    let sell = v.parent(&v.a, "SELL", 100_000).await;
    for _ in 0..70 {
        assert_eq!(v.child(&v.a, &sell, 500, p("94.78"), false).await.0, StatusCode::CREATED);
    }
    assert_eq!(v.child(&v.a, &sell, 500, p("94.72"), false).await.0, StatusCode::CREATED);
    let buy = v.parent(&v.b, "BUY", 40_000).await;
    let prices = |requests: &Value| {
        requests
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["price"].to_string(), r["quantity"].as_i64().unwrap()))
            .collect::<Vec<_>>()
    };
    let (s, preview) = take(&v, &buy, 500, "94.8", true, false).await;
    assert_eq!(
        (s, prices(&preview)),
        (StatusCode::OK, vec![("94.72".into(), 500)]),
        "the newest order, at the best price"
    );
    let (s, sent) = take(&v, &buy, 500, "94.8", false, false).await;
    assert_eq!((s, prices(&sent)), (StatusCode::CREATED, vec![("94.72".into(), 500)]));

    let (s, preview) = take(&v, &buy, 35_000, "94.8", true, false).await;
    assert_eq!((s, prices(&preview)), (StatusCode::OK, vec![("94.78".into(), 500); 70]));
    let (s, sent) = take(&v, &buy, 34_500, "94.8", false, false).await;
    assert_eq!((s, prices(&sent)), (StatusCode::CREATED, vec![("94.78".into(), 500); 69]), "past the first 16");
    assert_balanced(&v).await;
    v.app.stop().await;
}

async fn take(
    v: &Venue,
    parent: &Value,
    quantity: i64,
    price: &'static str,
    dry_run: bool,
    residual: bool,
) -> (StatusCode, Value) {
    v.app
        .post(
            "/api/order-match-requests",
            Some(&v.b),
            json!({"requesting_parent_order_id": parent["parent_order_id"], "quantity": quantity,
                   "price": p(price).0, "requesting_broker_id": v.broker, "dry_run": dry_run, "residual": residual}),
        )
        .await
}

async fn answer(v: &Venue, token: &str, m: &Value, state: &str) -> (StatusCode, Value) {
    let id = m["order_match_request_id"].as_str().unwrap();
    v.app.patch(&format!("/api/order-match-requests/{id}"), Some(token), json!({"state": state})).await
}

async fn request_state(v: &Venue, token: &str, m: &Value) -> Value {
    let id = m["order_match_request_id"].as_str().unwrap();
    let (s, body) = v.app.get(&format!("/api/order-match-requests/{id}"), Some(token)).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    body["state"].clone()
}

/// Runs the due timers until the request reaches `want` (the server's own job loop may
/// hold a due timer's lease meanwhile), within a deadline.
async fn settles(v: &Venue, m: &Value, want: &str) {
    reaches(v, m, want, true).await;
}

/// Waits (polling, with a deadline) until the request is in `want`, running the due
/// timers by hand first each time when `by_hand`.
async fn reaches(v: &Venue, m: &Value, want: &str, by_hand: bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if by_hand {
            run_timers(v).await;
        }
        let now = request_state(v, &v.b, m).await;
        if now == want {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "still {now}, want {want}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

async fn dry_run_then_accept(b: Backend) {
    let v = venue(b).await;
    let (sell, _, buy) = rest_and_parent(&v, 1500, "94.75", 1000).await;
    // The dry run names the broker and the iceberg flag, nothing of the firm; it writes nothing.
    let (s, dry) = take(&v, &buy, 1000, "94.76", true, false).await;
    assert_eq!(s, StatusCode::OK, "{dry}");
    assert_eq!(
        dry,
        json!([{"price": 94.75, "quantity": 1000, "responding_broker_name": "Baltic", "responding_order_iceberg": false}])
    );
    assert_eq!(children(&v, &v.b, &buy).await, vec![]);

    let (s, sent) = take(&v, &buy, 1000, "94.76", false, false).await;
    assert_eq!(s, StatusCode::CREATED, "{sent}");
    let m = &sent[0];
    assert_eq!(
        (m["role"].clone(), m["direction"].clone(), m["price"].clone(), m["quantity"].clone(), m["state"].clone()),
        (json!("REQUESTER"), json!("BUY"), json!(94.75), json!(1000), json!("PENDING"))
    );
    // The resting order split: 1000 locked, 500 still in the book.
    assert_eq!(children(&v, &v.a, &sell).await, vec![("AWAITING_MATCH".into(), 1000), ("WORKING".into(), 500)]);
    assert_eq!(children(&v, &v.b, &buy).await, vec![("AWAITING_MATCH".into(), 1000)]);
    let (_, book) = v.app.get(&format!("/api/instruments/{}/book", v.instrument), Some(&v.b)).await;
    assert_eq!(
        book["levels"],
        json!([{"price": 94.75, "buy_quantity": 0, "sell_quantity": 500,
                                       "own_buy_quantity": 0, "own_sell_quantity": 0}])
    );
    // The responder sees it from their side.
    let (_, theirs) = v.app.get("/api/order-match-requests?state=PENDING", Some(&v.a)).await;
    assert_eq!((theirs[0]["role"].clone(), theirs[0]["direction"].clone()), (json!("RESPONDER"), json!("SELL")));

    let (s, accepted) = answer(&v, &v.a, m, "ACCEPTED").await;
    assert_eq!((s, accepted["state"].clone()), (StatusCode::OK, json!("ACCEPTED")), "{accepted}");
    assert_eq!(children(&v, &v.a, &sell).await, vec![("MATCHED".into(), 1000), ("WORKING".into(), 500)]);
    assert_eq!(children(&v, &v.b, &buy).await, vec![("MATCHED".into(), 1000)]);
    assert_eq!(quantities(&v, &v.b, &buy).await, json!({"tradable": 0, "working": 0, "matched": 1000}));
    // Fully matched: the parent is FILLED.
    let pid = buy["parent_order_id"].as_str().unwrap();
    let (_, filled) = v.app.get(&format!("/api/parent-orders/{pid}"), Some(&v.b)).await;
    assert_eq!(filled["state"], "FILLED");
    // It is over: no second answer, no withdrawal.
    assert_eq!(answer(&v, &v.a, m, "REJECTED").await.0, StatusCode::CONFLICT);
    assert_eq!(answer(&v, &v.b, m, "CANCELLED").await.0, StatusCode::CONFLICT);
    assert_balanced(&v).await;
    v.app.stop().await;
}

async fn reject_timeout_and_withdrawal(b: Backend) {
    let v = venue(b).await;
    let (sell, _, buy) = rest_and_parent(&v, 3000, "94.75", 3000).await;

    // Rejected, residual: the responder's locked part is cancelled (back to its parent),
    // the taker's order works on at the price.
    let (_, sent) = take(&v, &buy, 1000, "94.75", false, true).await;
    let (s, rejected) = answer(&v, &v.a, &sent[0], "REJECTED").await;
    assert_eq!((s, rejected["state"].clone()), (StatusCode::OK, json!("REJECTED")));
    assert_eq!(children(&v, &v.a, &sell).await, vec![("CANCELLED".into(), 1000), ("WORKING".into(), 2000)]);
    assert_eq!(children(&v, &v.b, &buy).await, vec![("WORKING".into(), 1000)]);
    assert_eq!(quantities(&v, &v.a, &sell).await, json!({"tradable": 1000, "working": 2000, "matched": 0}));

    // Withdrawn by the taker: the responder's part goes back to the book.
    let (_, sent) = take(&v, &buy, 500, "94.75", false, false).await;
    let (s, withdrawn) = answer(&v, &v.b, &sent[0], "CANCELLED").await;
    assert_eq!((s, withdrawn["state"].clone()), (StatusCode::OK, json!("CANCELLED")));
    assert_eq!(
        children(&v, &v.a, &sell).await,
        vec![("CANCELLED".into(), 1000), ("WORKING".into(), 500), ("WORKING".into(), 1500)]
    );
    assert_eq!(children(&v, &v.b, &buy).await, vec![("CANCELLED".into(), 500), ("WORKING".into(), 1000)]);

    // Five minutes without an answer: timed out, like a rejection (no residual here).
    let (_, sent) = take(&v, &buy, 500, "94.75", false, false).await;
    v.app.clock.set(tuesday_10am() + Duration::minutes(5) - Duration::seconds(1));
    run_timers(&v).await;
    assert_eq!(request_state(&v, &v.b, &sent[0]).await, "PENDING");
    v.app.clock.set(tuesday_10am() + Duration::minutes(5));
    settles(&v, &sent[0], "TIMED_OUT").await;
    assert_eq!(request_state(&v, &v.a, &sent[0]).await, "TIMED_OUT");
    assert_eq!(
        children(&v, &v.b, &buy).await,
        vec![("CANCELLED".into(), 500), ("CANCELLED".into(), 500), ("WORKING".into(), 1000)]
    );
    assert_balanced(&v).await;
    v.app.stop().await;
}

async fn auto_responses(b: Backend) {
    let v = venue(b).await;
    let (sell, _, buy) = rest_and_parent(&v, 3000, "94.75", 3000).await;
    let (_, me) = v.app.get("/api/users/me", Some(&v.a)).await;
    let me = format!("/api/users/{}", me["user_id"].as_str().unwrap());
    let set = |pref: &'static str| {
        let (v, me) = (&v, me.clone());
        async move {
            let (s, body) = v.app.patch(&me, Some(&v.a), json!({"auto_accept": pref})).await;
            assert_eq!(s, StatusCode::OK, "{body}");
        }
    };

    set("INSTANT").await;
    let (_, sent) = take(&v, &buy, 500, "94.75", false, false).await;
    settles(&v, &sent[0], "ACCEPTED").await;

    set("ACCEPT_WITH_DELAY").await;
    let (_, sent) = take(&v, &buy, 500, "94.75", false, false).await;
    // The responder reads when their preference answers; the taker never reads another
    // firm's preference (issue 28.5).
    let path = format!("/api/order-match-requests/{}", sent[0]["order_match_request_id"].as_str().unwrap());
    let (_, theirs) = v.app.get(&path, Some(&v.a)).await;
    assert_eq!(
        (theirs["auto_answer_at"].clone(), theirs["auto_accept"].clone(), theirs["answered_automatically"].clone()),
        (json!("2026-03-03T10:00:15Z"), json!(true), json!(false)),
        "{theirs}"
    );
    assert_eq!((sent[0]["auto_answer_at"].clone(), sent[0]["auto_accept"].clone()), (Value::Null, Value::Null));
    v.app.clock.set(tuesday_10am() + Duration::seconds(14));
    run_timers(&v).await;
    assert_eq!(request_state(&v, &v.b, &sent[0]).await, "PENDING");
    v.app.clock.set(tuesday_10am() + Duration::seconds(15));
    settles(&v, &sent[0], "ACCEPTED").await;
    // Both sides are told that the preference answered.
    for token in [&v.a, &v.b] {
        assert_eq!(v.app.get(&path, Some(token)).await.1["answered_automatically"], true);
    }

    set("REJECT_WITH_DELAY").await;
    let (_, sent) = take(&v, &buy, 500, "94.75", false, false).await;
    let (_, acted_first) = take(&v, &buy, 500, "94.75", false, false).await;
    // The user acts first: the preference then has nothing left to do.
    let (s, by_hand) = answer(&v, &v.a, &acted_first[0], "ACCEPTED").await;
    assert_eq!((s, by_hand["answered_automatically"].clone()), (StatusCode::OK, json!(false)), "{by_hand}");
    v.app.clock.set(tuesday_10am() + Duration::seconds(30));
    settles(&v, &sent[0], "REJECTED").await;
    assert_eq!(request_state(&v, &v.b, &acted_first[0]).await, "ACCEPTED");
    assert_eq!(quantities(&v, &v.a, &sell).await, json!({"tradable": 500, "working": 1000, "matched": 1500}));
    // Three of the four requests A received were accepted; B received none.
    assert_eq!(v.app.get("/api/users/me", Some(&v.a)).await.1["reliability_score"], 75);
    assert_eq!(v.app.get("/api/users/me", Some(&v.b)).await.1["reliability_score"], 100);
    let admin = v.app.admin_token().await;
    let (_, users) = v.app.get("/api/admin/users?email=halyard", Some(&admin)).await;
    let scores: Vec<i64> =
        users["items"].as_array().unwrap().iter().map(|u| u["reliability_score"].as_i64().unwrap()).collect();
    assert_eq!(scores, vec![75, 100], "a@ then small@halyard.test: {users}");
    // The firm's score counts every request its users received.
    let company = format!("/api/companies/{}", users["items"][0]["company_id"].as_str().unwrap());
    assert_eq!(v.app.get(&company, Some(&v.a)).await.1["reliability_score"], 75);
    let (_, companies) = v.app.get("/api/admin/companies", Some(&admin)).await;
    let kestrel = companies["items"].as_array().unwrap().iter().find(|c| c["name"] == "Kestrel").unwrap();
    assert_eq!(kestrel["reliability_score"], 100);
    assert_balanced(&v).await;
    v.app.stop().await;
}

/// A take whose responder accepts instantly wakes the trading lane itself: with the
/// scheduler's poll an hour away and no pass run by hand, the request is accepted.
async fn an_instant_auto_answer_runs_without_waiting_for_the_poll(b: Backend) {
    let v = venue_with(b, |s| s.scheduler_poll = std::time::Duration::from_secs(3600)).await;
    let (_, _, buy) = rest_and_parent(&v, 1000, "94.75", 1000).await;
    let (_, me) = v.app.get("/api/users/me", Some(&v.a)).await;
    let me = format!("/api/users/{}", me["user_id"].as_str().unwrap());
    let (s, body) = v.app.patch(&me, Some(&v.a), json!({"auto_accept": "INSTANT"})).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let (_, sent) = take(&v, &buy, 500, "94.75", false, false).await;
    reaches(&v, &sent[0], "ACCEPTED", false).await;
    v.app.stop().await;
}

async fn only_the_parties_answer(b: Backend) {
    let v = venue(b).await;
    let (_, _, buy) = rest_and_parent(&v, 1000, "94.75", 1000).await;
    let (_, sent) = take(&v, &buy, 1000, "94.75", false, false).await;
    let m = &sent[0];
    // The taker cannot accept; the responder cannot withdraw; a colleague of the
    // responder cannot answer; a third firm does not see it at all.
    assert_eq!(answer(&v, &v.b, m, "ACCEPTED").await.0, StatusCode::FORBIDDEN);
    assert_eq!(answer(&v, &v.a, m, "CANCELLED").await.0, StatusCode::FORBIDDEN);
    assert_eq!(answer(&v, &v.a_admin_limited, m, "ACCEPTED").await.0, StatusCode::FORBIDDEN);
    let admin = v.app.admin_token().await;
    let (s, _) = v
        .app
        .post(
            "/api/admin/companies",
            Some(&admin),
            json!({"name": "Outsider", "full_name": "Outsider Ltd",
            "brokers": [{"company_id": v.broker}], "default_broker": {"company_id": v.broker}}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED);
    upstairs::app::bootstrap_user(&v.app.database_url, "c@outsider.test", PW, &["trader"], "Outsider").await.unwrap();
    let c = v.app.login_remembered("c@outsider.test", PW).await;
    assert_eq!(answer(&v, &c, m, "ACCEPTED").await.0, StatusCode::NOT_FOUND);
    let id = m["order_match_request_id"].as_str().unwrap();
    assert_eq!(v.app.get(&format!("/api/order-match-requests/{id}"), Some(&c)).await.0, StatusCode::NOT_FOUND);
    let (_, listed) = v.app.get("/api/order-match-requests", Some(&c)).await;
    assert_eq!(listed, json!([]));
    assert_eq!(answer(&v, &v.a, m, "PENDING").await.0, StatusCode::BAD_REQUEST);
    assert_eq!(request_state(&v, &v.a, m).await, "PENDING");
    assert_balanced(&v).await;
    v.app.stop().await;
}

/// A take its terms refuse (a broker the taker may not use, a price off the tick or out
/// of the band, a size below the block) waits on no other firm's parent: while another
/// transaction holds the resting firm's parent, each refusal answers. PostgreSQL only:
/// SQLite has one writer, so nothing can hold a parent beside the take.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_take_waits_on_no_other_firms_parent() {
    use sqlx::Connection as _;
    balanced_after(async {
        let v = venue(Backend::Postgres).await;
        let (sell, _, buy) = rest_and_parent(&v, 1000, "94.75", 1000).await;
        let mut holder = sqlx::PgConnection::connect(&v.app.database_url).await.unwrap();
        sqlx::query("begin").execute(&mut holder).await.unwrap();
        sqlx::query("select 1 from parent_order where parent_order_id = $1::uuid for update")
            .bind(sell["parent_order_id"].as_str().unwrap())
            .execute(&mut holder)
            .await
            .unwrap();
        let valid = json!({"requesting_parent_order_id": buy["parent_order_id"], "quantity": 1000,
                           "price": p("94.75").0, "requesting_broker_id": v.broker, "dry_run": false, "residual": false});
        let refusals = [
            ("requesting_broker_id", json!(sell["parent_order_id"])),
            ("price", json!(p("94.755").0)),
            ("price", json!(p("94.85").0)),
            ("quantity", json!(100)),
        ];
        for (field, value) in refusals {
            let mut body = valid.clone();
            body[field] = value.clone();
            let answer = tokio::time::timeout(
                std::time::Duration::from_secs(20),
                v.app.post("/api/order-match-requests", Some(&v.b), body),
            )
            .await
            .unwrap_or_else(|_| panic!("a take with {field} {value} waited on the resting firm's parent"));
            assert_eq!(answer.0, StatusCode::BAD_REQUEST, "{field} {value}: {}", answer.1);
            assert_eq!(answer.1["errors"][0]["field"], field, "{}", answer.1);
        }
        // Once the holder lets go, the valid take goes through.
        sqlx::query("rollback").execute(&mut holder).await.unwrap();
        let (s, sent) = v.app.post("/api/order-match-requests", Some(&v.b), valid).await;
        assert_eq!(s, StatusCode::CREATED, "{sent}");
        v.app.stop().await;
    })
    .await
}

/// An accept reads its request and orders before it takes the parents' locks (so the next
/// order and take wait only for its writes); two answers that both read a request as
/// pending while another transaction held a parent end it once: one wins, the other is
/// told it is no longer pending and changes nothing. PostgreSQL only (one writer on SQLite).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_answers_read_before_the_locks_end_a_request_once() {
    use sqlx::Connection as _;
    balanced_after(async {
        let v = venue(Backend::Postgres).await;
        let (sell, _, buy) = rest_and_parent(&v, 1000, "94.75", 1000).await;
        let (s, sent) = take(&v, &buy, 1000, "94.75", false, false).await;
        assert_eq!(s, StatusCode::CREATED, "{sent}");
        let m = sent[0].clone();
        let mut holder = sqlx::PgConnection::connect(&v.app.database_url).await.unwrap();
        sqlx::query("begin").execute(&mut holder).await.unwrap();
        sqlx::query("select 1 from parent_order where parent_order_id = $1::uuid for update")
            .bind(sell["parent_order_id"].as_str().unwrap())
            .execute(&mut holder)
            .await
            .unwrap();
        let answers = async { tokio::join!(answer(&v, &v.a, &m, "ACCEPTED"), answer(&v, &v.b, &m, "CANCELLED")) };
        let release = async {
            // Both have read the request as pending and wait for the parents' locks.
            let mut watcher = sqlx::PgConnection::connect(&v.app.database_url).await.unwrap();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            loop {
                let waiting: i64 = sqlx::query_scalar(
                    "select count(*) from pg_stat_activity where wait_event_type = 'Lock' \
                     and query like 'select * from parent_order where parent_order_id in%'",
                )
                .fetch_one(&mut watcher)
                .await
                .unwrap();
                if waiting == 2 {
                    break;
                }
                assert!(std::time::Instant::now() < deadline, "{waiting} answers wait for the parents' locks");
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            sqlx::query("rollback").execute(&mut holder).await.unwrap();
        };
        let (((sa, accepted), (sw, withdrawn)), ()) = tokio::join!(answers, release);
        let (won, lost) = match (sa, sw) {
            (StatusCode::OK, StatusCode::CONFLICT) => ("ACCEPTED", withdrawn),
            (StatusCode::CONFLICT, StatusCode::OK) => ("CANCELLED", accepted),
            other => panic!("{other:?}: {accepted} {withdrawn}"),
        };
        assert_eq!(lost["detail"], "This match request is no longer pending.", "{lost}");
        assert_eq!(request_state(&v, &v.b, &m).await, won);
        let states: Vec<String> = children(&v, &v.b, &buy).await.into_iter().map(|(s, _)| s).collect();
        assert_eq!(states, vec![if won == "ACCEPTED" { "MATCHED" } else { "CANCELLED" }]);
        v.app.stop().await;
    })
    .await
}

async fn nothing_to_match(b: Backend) {
    let v = venue(b).await;
    // Only the taker's own firm rests at the price: nothing matches, nothing is written.
    let own = v.parent(&v.b, "SELL", 1000).await;
    assert_eq!(v.child(&v.b, &own, 1000, p("94.75"), false).await.0, StatusCode::CREATED);
    let buy = v.parent(&v.b, "BUY", 1000).await;
    let (s, dry) = take(&v, &buy, 1000, "94.80", true, false).await;
    assert_eq!((s, dry), (StatusCode::OK, json!([])));
    let (s, body) = take(&v, &buy, 1000, "94.80", false, true).await;
    assert_eq!(s, StatusCode::CONFLICT);
    assert_eq!(body["detail"], "This trade could not be matched due to your trade criteria");
    assert_eq!(children(&v, &v.b, &buy).await, vec![]);
    // Better than the take price only: a BUY at 94.74 does not reach a SELL at 94.75.
    let sell = v.parent(&v.a, "SELL", 1000).await;
    assert_eq!(v.child(&v.a, &sell, 1000, p("94.75"), false).await.0, StatusCode::CREATED);
    assert_eq!(take(&v, &buy, 1000, "94.74", true, false).await.1, json!([]));
    // Bad input answers 400 with the field.
    let (s, body) = take(&v, &buy, 100, "94.755", true, false).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let fields: Vec<&str> = body["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    assert_eq!(fields, vec!["quantity", "price"]);
    assert_balanced(&v).await;
    v.app.stop().await;
}

async fn band_move_close_and_cancel_end_requests(b: Backend) {
    let v = venue(b).await;
    let (sell, _, buy) = rest_and_parent(&v, 3000, "94.71", 3000).await;
    // Cancelling the taker's awaiting order withdraws its request.
    let (_, sent) = take(&v, &buy, 500, "94.71", false, false).await;
    let (_, mine) = v.app.get("/api/order-match-requests", Some(&v.b)).await;
    let order = mine[0]["order_id"].as_str().unwrap();
    let (s, cancelled) = v.app.delete(&format!("/api/orders/{order}"), Some(&v.b)).await;
    assert_eq!((s, cancelled["state"].clone()), (StatusCode::OK, json!("CANCELLED")), "{cancelled}");
    assert_eq!(request_state(&v, &v.b, &sent[0]).await, "CANCELLED");
    // The responder cancelling their locked part rejects it.
    let (_, sent) = take(&v, &buy, 500, "94.71", false, false).await;
    let (_, theirs) = v.app.get("/api/order-match-requests", Some(&v.a)).await;
    let locked = theirs[0]["order_id"].as_str().unwrap();
    assert_eq!(v.app.delete(&format!("/api/orders/{locked}"), Some(&v.a)).await.0, StatusCode::OK);
    assert_eq!(request_state(&v, &v.b, &sent[0]).await, "REJECTED");

    // The band moves away from a pending request's price: cancelled by the system, the
    // resting part back on its owner's list.
    let (_, sent) = take(&v, &buy, 500, "94.71", false, false).await;
    let admin = v.app.admin_token().await;
    let (s, _) = v
        .app
        .post(
            &format!("/api/admin/instruments/{}/band", v.instrument),
            Some(&admin),
            json!({"min_tick_price": 94.72, "max_tick_price": 94.80}),
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(request_state(&v, &v.a, &sent[0]).await, "SYSTEM_CANCELLED_PRICE_OUT_OF_TICK");

    // The close ends what is pending; every quantity goes back to its parent.
    // Orders left outside the band are never hit: this take reaches 94.75, not 94.71.
    v.app.clock.set(tuesday_10am() + Duration::hours(6) + Duration::minutes(58));
    assert_eq!(v.child(&v.a, &sell, 500, p("94.75"), false).await.0, StatusCode::CREATED);
    let (_, sent) = take(&v, &buy, 500, "94.75", false, false).await;
    assert_eq!(sent[0]["price"], json!(94.75), "{sent}");
    v.app.clock.set(tuesday_10am() + Duration::hours(7));
    settles(&v, &sent[0], "TIMED_OUT").await;
    assert_eq!(quantities(&v, &v.b, &buy).await, json!({"tradable": 3000, "working": 0, "matched": 0}));
    assert_eq!(quantities(&v, &v.a, &sell).await, json!({"tradable": 3000, "working": 0, "matched": 0}));
    // Of what A received, only its own rejection counts: not the withdrawal, the band
    // move nor the close.
    assert_eq!(v.app.get("/api/users/me", Some(&v.a)).await.1["reliability_score"], 0);
    assert_balanced(&v).await;
    v.app.stop().await;
}

/// Twelve takers at once against one resting order of 1,000 with a minimum block of 500:
/// at most two can be served, and what they lock never exceeds what rested.
async fn racing_takers_never_share_resting_quantity(b: Backend) {
    let v = std::sync::Arc::new(venue(b).await);
    let (sell, _, _) = rest_and_parent(&v, 1000, "94.75", 500).await;
    let mut parents = Vec::new();
    for _ in 0..12 {
        parents.push(v.parent(&v.b, "BUY", 500).await);
    }
    let mut takers = Vec::new();
    for parent in parents {
        let v = v.clone();
        takers.push(tokio::spawn(async move { take(&v, &parent, 500, "94.75", false, false).await }));
    }
    let mut sent = 0;
    for t in takers {
        let (s, body) = t.await.unwrap();
        assert!([StatusCode::CREATED, StatusCode::CONFLICT].contains(&s), "{s}: {body}");
        if s == StatusCode::CREATED {
            sent += body.as_array().unwrap().iter().map(|m| m["quantity"].as_i64().unwrap()).sum::<i64>();
        }
    }
    assert_eq!(sent, 1000, "both blocks of the resting order, once each");
    assert_eq!(children(&v, &v.a, &sell).await, vec![("AWAITING_MATCH".into(), 500), ("AWAITING_MATCH".into(), 500)]);
    assert_balanced(&v).await;
    std::sync::Arc::into_inner(v).unwrap().app.stop().await;
}

/// (type, status, role) of a user's notifications, newest first.
async fn notices(v: &Venue, token: &str) -> Vec<(String, String, String)> {
    let (s, page) = v.app.get("/api/notifications?archived=false&order_by=DESC", Some(token)).await;
    assert_eq!(s, StatusCode::OK, "{page}");
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let f = |k: &str| n[k].as_str().unwrap().to_owned();
            (f("type"), f("status"), f("role"))
        })
        .collect()
}

fn notice(t: &str, status: &str, role: &str) -> (String, String, String) {
    (t.into(), status.into(), role.into())
}

/// The responder's socket hears of the request the moment it is made, and of its end;
/// the taker hears of the answer; each party reads, archives and lists only its own.
async fn notifications_tell_each_party_at_once(b: Backend) {
    let v = venue(b).await;
    let (_, _, buy) = rest_and_parent(&v, 2000, "94.75", 2000).await;
    let topic = "/user/topic/notifications";
    let mut peer =
        Peer::spawn("stomp_client.py", &["127.0.0.1".into(), v.app.port().to_string(), v.a.clone(), topic.into()]);
    assert_eq!(peer.next_json(std::time::Duration::from_secs(10)).await.unwrap()["event"], "connected");
    assert_eq!(peer.next_json(std::time::Duration::from_secs(10)).await.unwrap()["event"], "subscribed");

    let (_, sent) = take(&v, &buy, 1000, "94.75", false, false).await;
    let msg = peer.next_json(std::time::Duration::from_secs(10)).await.expect("the responder is told");
    assert_eq!(msg["destination"], topic);
    let body = &msg["body"];
    assert_eq!(
        (body["type"].clone(), body["status"].clone(), body["role"].clone()),
        (json!("MATCH_REQUEST_RECEIVED"), json!("PENDING"), json!("RESPONDER"))
    );
    // Another firm took: said, never named (ADR 0046).
    assert_eq!(body["requestor"], json!({"party": "COUNTERPARTY"}));
    assert_eq!(body["order_match_request_id"], sent[0]["order_match_request_id"]);
    assert_eq!(body["expired_at"], sent[0]["expired_at"]);
    assert_eq!(body["seq"], 1, "the user's notification frames are numbered");
    // Its terms as the responder sees them: A's own side (A rests the sell B takes).
    assert_eq!(
        (body["direction"].clone(), body["quantity"].clone(), body["price"].clone()),
        (json!("SELL"), json!(1000), json!(94.75))
    );
    assert!(!body.to_string().contains("Kestrel"), "nothing names the taker's firm: {body}");
    assert_eq!(notices(&v, &v.b).await, vec![]);

    assert_eq!(answer(&v, &v.a, &sent[0], "REJECTED").await.0, StatusCode::OK);
    let msg = peer.next_json(std::time::Duration::from_secs(10)).await.expect("the received one changes");
    assert_eq!(
        (msg["body"]["type"].clone(), msg["body"]["status"].clone()),
        (json!("MATCH_REQUEST_RECEIVED"), json!("REJECTED"))
    );
    assert_eq!(msg["body"]["seq"], 2);
    assert_eq!(notices(&v, &v.a).await, vec![notice("MATCH_REQUEST_RECEIVED", "REJECTED", "RESPONDER")]);
    assert_eq!(notices(&v, &v.b).await, vec![notice("MATCH_REQUEST_REJECTED", "REJECTED", "REQUESTER")]);
    // Read back, each with its terms as its own party sees them; the taker's side is B's buy.
    let (_, a_page) = v.app.get("/api/notifications", Some(&v.a)).await;
    let (_, b_page) = v.app.get("/api/notifications", Some(&v.b)).await;
    let terms = |n: &Value| (n["direction"].clone(), n["quantity"].clone(), n["price"].clone());
    assert_eq!(terms(&a_page["items"][0]), (json!("SELL"), json!(1000), json!(94.75)));
    assert_eq!(terms(&b_page["items"][0]), (json!("BUY"), json!(1000), json!(94.75)));

    // Withdrawn: the responder is told; timed out: both are.
    let (_, sent) = take(&v, &buy, 500, "94.75", false, false).await;
    assert_eq!(answer(&v, &v.b, &sent[0], "CANCELLED").await.0, StatusCode::OK);
    assert_eq!(notices(&v, &v.a).await[0], notice("MATCH_REQUEST_CANCELLED", "CANCELLED", "RESPONDER"));
    let (_, sent) = take(&v, &buy, 500, "94.75", false, false).await;
    v.app.clock.set(tuesday_10am() + Duration::minutes(5));
    settles(&v, &sent[0], "TIMED_OUT").await;
    assert_eq!(notices(&v, &v.a).await[0], notice("MATCH_REQUEST_TIMED_OUT", "TIMED_OUT", "RESPONDER"));
    assert_eq!(notices(&v, &v.b).await[0], notice("MATCH_REQUEST_TIMED_OUT", "TIMED_OUT", "REQUESTER"));

    // Read and archived by their owner only; archived ones leave the active list.
    let (_, page) = v.app.get("/api/notifications", Some(&v.b)).await;
    let first = page["items"][0]["notification_id"].as_str().unwrap().to_owned();
    let path = format!("/api/notifications/{first}");
    assert_eq!(v.app.patch(&path, Some(&v.a), json!({"read": true})).await.0, StatusCode::NOT_FOUND);
    let (s, read) = v.app.patch(&path, Some(&v.b), json!({"read": true})).await;
    assert_eq!((s, read["read"].clone(), read["archived"].clone()), (StatusCode::OK, json!(true), json!(false)));
    let before = notices(&v, &v.b).await.len();
    assert_eq!(v.app.patch(&path, Some(&v.b), json!({"archived": true})).await.0, StatusCode::OK);
    assert_eq!(notices(&v, &v.b).await.len(), before - 1);
    let (_, archived) = v.app.get("/api/notifications?archived=true", Some(&v.b)).await;
    assert_eq!(archived["total_items"], 1);
    assert_balanced(&v).await;
    v.app.stop().await;
}

/// A's resting SELL of 1000 matched by B, accepted by A: (A's parent, B's parent, the request).
async fn matched(v: &Venue) -> (Value, Value, Value) {
    let (sell, _, buy) = rest_and_parent(v, 1000, "94.75", 1000).await;
    let (s, sent) = take(v, &buy, 1000, "94.75", false, false).await;
    assert_eq!(s, StatusCode::CREATED, "{sent}");
    let (s, accepted) = answer(v, &v.a, &sent[0], "ACCEPTED").await;
    assert_eq!(s, StatusCode::OK, "{accepted}");
    (sell, buy, sent[0].clone())
}

/// The order a trader's parent holds in `state` (its id).
async fn order_in(v: &Venue, token: &str, parent: &Value, state: &str) -> String {
    let pid = parent["parent_order_id"].as_str().unwrap();
    let (_, orders) = v.app.get(&format!("/api/orders?parent_order_id={pid}"), Some(token)).await;
    let o = orders.as_array().unwrap().iter().find(|o| o["state"] == state);
    o.unwrap_or_else(|| panic!("no {state} order in {orders}"))["order_id"].as_str().unwrap().to_owned()
}

async fn confirm(v: &Venue, order: &str, token: &str, body: Value) -> (StatusCode, Value) {
    v.app.patch(&format!("/api/orders/{order}?token={token}"), None, body).await
}

async fn link_page(v: &Venue, order: &str, token: &str, step: &str) -> (StatusCode, Value) {
    v.app.get(&format!("/api/orders/{order}/confirmation?token={token}&step={step}"), None).await
}

async fn brokers_accept_then_fill_by_link(b: Backend) {
    let v = venue(b).await;
    let (sell, buy, m) = matched(&v).await;
    let (a_order, b_order) = (order_in(&v, &v.a, &sell, "MATCHED").await, order_in(&v, &v.b, &buy, "MATCHED").await);
    let mails = v.app.mails_to(BROKER_DESK, 2).await;
    let links = broker_links(&mails, "/accept-order");
    let token_of = |links: &[(String, String)], order: &str| {
        links.iter().find(|(o, _)| o == order).unwrap_or_else(|| panic!("no link for {order}")).1.clone()
    };
    let (a_token, b_token) = (token_of(&links, &a_order), token_of(&links, &b_order));
    assert!(mails[0].contains("Counterparty broker: Baltic"), "{}", mails[0]);

    // Opening the link shows the trade and changes nothing.
    let matched_at = link_page(&v, &a_order, &a_token, "ACCEPT").await.1["matched_at"].clone();
    for _ in 0..2 {
        let (s, page) = link_page(&v, &a_order, &a_token, "ACCEPT").await;
        assert_eq!(s, StatusCode::OK, "{page}");
        assert_eq!(
            (page["state"].clone(), page["answer"].clone(), page["direction"].clone(), page["quantity"].clone()),
            (json!("MATCHED"), Value::Null, json!("SELL"), json!(1000))
        );
        assert_eq!((page["price"].clone(), page["client_name"].clone()), (json!(94.75), json!("Halyard")));
    }
    assert_eq!(request_state(&v, &v.b, &m).await, "ACCEPTED");

    // One broker accepts (minutes later): both sides PARTIAL_BROKER_ACCEPTED, seen by the
    // traders; the trade was still matched when it was.
    v.app.clock.advance(Duration::minutes(3));
    let (s, done) = confirm(&v, &a_order, &a_token, json!({"accepted": true})).await;
    assert_eq!(done["matched_at"], matched_at, "{done}");
    assert_eq!(
        (s, done["state"].clone(), done["answer"].clone()),
        (StatusCode::OK, json!("PARTIAL_BROKER_ACCEPTED"), json!(true))
    );
    assert_eq!(children(&v, &v.b, &buy).await, vec![("PARTIAL_BROKER_ACCEPTED".into(), 1000)]);
    assert_eq!(request_state(&v, &v.a, &m).await, "PARTIAL_BROKER_ACCEPTED");
    // A second click, either way, is told it was done.
    for again in [json!({"accepted": true}), json!({"accepted": false})] {
        let (s, e) = confirm(&v, &a_order, &a_token, again).await;
        assert_eq!((s, e["detail"].clone()), (StatusCode::CONFLICT, json!("Order already accepted")));
    }
    assert_eq!(link_page(&v, &a_order, &a_token, "ACCEPT").await.1["answer"], json!(true));

    // The other broker accepts (two clicks at once: one wins, the other is told it was
    // done): BROKER_ACCEPTED, and the fill links go out.
    let (one, two) = tokio::join!(
        confirm(&v, &b_order, &b_token, json!({"accepted": true})),
        confirm(&v, &b_order, &b_token, json!({"accepted": true}))
    );
    let (won, lost) = if one.0 == StatusCode::OK { (one, two) } else { (two, one) };
    assert_eq!((won.0, won.1["state"].clone()), (StatusCode::OK, json!("BROKER_ACCEPTED")), "{}", won.1);
    assert_eq!((lost.0, lost.1["detail"].clone()), (StatusCode::CONFLICT, json!("Order already accepted")));
    assert_eq!(children(&v, &v.a, &sell).await, vec![("BROKER_ACCEPTED".into(), 1000)]);
    assert_eq!(request_state(&v, &v.b, &m).await, "BROKER_ACCEPTED");
    let mails = v.app.mails_to(BROKER_DESK, 4).await;
    let fills = broker_links(&mails, "/fill-order");
    assert_eq!(fills.len(), 2);
    let (a_fill, b_fill) = (token_of(&fills, &a_order), token_of(&fills, &b_order));
    let at = chrono::DateTime::parse_from_rfc3339(matched_at.as_str().unwrap()).unwrap();
    let line = format!("Matched at: {}", at.format("%Y-%m-%d %H:%M:%S UTC"));
    assert!(mails.iter().all(|m| m.contains(&line)), "every e-mail says {line}: {mails:?}");
    assert_eq!(link_page(&v, &a_order, &a_fill, "FILL").await.1["matched_at"], matched_at);
    // The accept link cannot confirm the fill, nor the fill link another order.
    assert_eq!(confirm(&v, &a_order, &a_token, json!({"filled": true})).await.0, StatusCode::BAD_REQUEST);
    assert_eq!(confirm(&v, &a_order, &b_fill, json!({"filled": true})).await.0, StatusCode::BAD_REQUEST);

    let (s, done) = confirm(&v, &b_order, &b_fill, json!({"filled": true})).await;
    assert_eq!((s, done["state"].clone()), (StatusCode::OK, json!("PARTIAL_BROKER_FILLED")));
    let (s, done) = confirm(&v, &a_order, &a_fill, json!({"filled": true})).await;
    assert_eq!((s, done["state"].clone()), (StatusCode::OK, json!("BROKER_FILLED")));
    let (s, e) = confirm(&v, &a_order, &a_fill, json!({"filled": true})).await;
    assert_eq!((s, e["detail"].clone()), (StatusCode::CONFLICT, json!("Order already filled")));
    assert_eq!(children(&v, &v.a, &sell).await, vec![("BROKER_FILLED".into(), 1000)]);
    assert_eq!(children(&v, &v.b, &buy).await, vec![("BROKER_FILLED".into(), 1000)]);
    assert_eq!(request_state(&v, &v.a, &m).await, "BROKER_FILLED");
    let pid = buy["parent_order_id"].as_str().unwrap();
    assert_eq!(v.app.get(&format!("/api/parent-orders/{pid}"), Some(&v.b)).await.1["state"], "FILLED");
    // No more e-mails than the four; the venue admin lists them, their links hidden
    // outside the demo (with one the admin could answer for the broker), a trader may not.
    assert_eq!(read_mails(&v.app.mail_dir, BROKER_DESK).len(), 4);
    let admin = v.app.admin_token().await;
    let (s, outbox) = v.app.get("/api/admin/outbox?size=2", Some(&admin)).await;
    assert_eq!((s, outbox["total_items"].clone()), (StatusCode::OK, json!(4)), "{outbox}");
    let first = &outbox["items"][0];
    assert_eq!((first["kind"].clone(), first["to"].clone()), (json!("TRADE_FILL"), json!(BROKER_DESK)));
    assert_eq!((first["links"].clone(), first["links_hidden"].clone()), (json!([]), json!(true)), "{first}");
    assert!(!outbox.to_string().contains(&a_fill) && !outbox.to_string().contains("token="), "{outbox}");
    assert_eq!(v.app.get("/api/admin/outbox", Some(&v.a)).await.0, StatusCode::FORBIDDEN);
    assert_balanced(&v).await;
    v.app.stop().await;
}

async fn a_broker_declining_breaks_the_trade_down(b: Backend) {
    let v = venue(b).await;
    let (sell, buy, m) = matched(&v).await;
    let (a_order, b_order) = (order_in(&v, &v.a, &sell, "MATCHED").await, order_in(&v, &v.b, &buy, "MATCHED").await);
    let links = broker_links(&v.app.mails_to(BROKER_DESK, 2).await, "/accept-order");
    let token_of = |order: &str| links.iter().find(|(o, _)| o == order).unwrap().1.clone();

    let (s, done) = confirm(&v, &b_order, &token_of(&b_order), json!({"accepted": false})).await;
    assert_eq!(
        (s, done["state"].clone(), done["answer"].clone()),
        (StatusCode::OK, json!("BROKER_REJECTED"), json!(false))
    );
    assert_eq!(children(&v, &v.a, &sell).await, vec![("BROKER_REJECTED".into(), 1000)]);
    assert_eq!(request_state(&v, &v.a, &m).await, "BREAKDOWN");
    // Both traders are told, each on their side of the match request (issue 28.7).
    for (token, role, requestor) in [(&v.a, "RESPONDER", "COUNTERPARTY"), (&v.b, "REQUESTER", "YOU")] {
        let (_, told) = v.app.get("/api/notifications?archived=false&order_by=DESC", Some(token)).await;
        let first = &told["items"][0];
        assert_eq!(first["requestor"], json!({"party": requestor}), "{told}");
        assert_eq!(
            (&first["type"], &first["status"], &first["role"], &first["order_match_request_id"], &first["read"]),
            (
                &json!("MATCH_REQUEST_BROKER_REJECTED"),
                &json!("BREAKDOWN"),
                &json!(role),
                &m["order_match_request_id"],
                &json!(false)
            ),
            "{told}"
        );
    }
    // The quantities are back on both parents, and the filled one works again.
    assert_eq!(quantities(&v, &v.b, &buy).await, json!({"tradable": 1000, "working": 0, "matched": 0}));
    assert_eq!(quantities(&v, &v.a, &sell).await, json!({"tradable": 1000, "working": 0, "matched": 0}));
    let pid = buy["parent_order_id"].as_str().unwrap();
    assert_eq!(v.app.get(&format!("/api/parent-orders/{pid}"), Some(&v.b)).await.1["state"], "ACTIVE");
    // The other broker's link can no longer accept it.
    let (s, e) = confirm(&v, &a_order, &token_of(&a_order), json!({"accepted": true})).await;
    assert_eq!((s, e["detail"].clone()), (StatusCode::CONFLICT, json!("The trade was declined by a broker.")));
    // The other side's broker is told by e-mail, with no link; no fill links go out.
    let mails = v.app.mails_to(BROKER_DESK, 3).await;
    assert_eq!(mails.len(), 3, "the two accept links and the decline notice");
    let notice = mails.iter().find(|m| m.contains("Subject: Trade declined")).expect("a decline notice");
    assert!(notice.contains("instead of accepting it") && !notice.contains("token="), "{notice}");
    assert_balanced(&v).await;
    v.app.stop().await;
}

async fn broker_links_are_bound_and_expire(b: Backend) {
    let v = venue(b).await;
    let (sell, buy, _) = matched(&v).await;
    let (a_order, b_order) = (order_in(&v, &v.a, &sell, "MATCHED").await, order_in(&v, &v.b, &buy, "MATCHED").await);
    let links = broker_links(&v.app.mails_to(BROKER_DESK, 2).await, "/accept-order");
    let a_token = links.iter().find(|(o, _)| *o == a_order).unwrap().1.clone();

    // A wrong token, another order's id, the wrong step, a malformed body: refused.
    let wrong = "0".repeat(64);
    assert_eq!(link_page(&v, &a_order, &wrong, "ACCEPT").await.0, StatusCode::BAD_REQUEST);
    assert_eq!(link_page(&v, &b_order, &a_token, "ACCEPT").await.0, StatusCode::BAD_REQUEST);
    assert_eq!(link_page(&v, &a_order, &a_token, "FILL").await.0, StatusCode::BAD_REQUEST);
    let (s, e) = confirm(&v, &b_order, &a_token, json!({"accepted": true})).await;
    assert_eq!((s, e["detail"].clone()), (StatusCode::BAD_REQUEST, json!("This link is not valid or has expired.")));
    assert_eq!(confirm(&v, &a_order, &a_token, json!({})).await.0, StatusCode::BAD_REQUEST);
    assert_eq!(
        confirm(&v, &a_order, &a_token, json!({"accepted": true, "filled": true})).await.0,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(confirm(&v, &a_order, &a_token, json!({"quantity": 5})).await.0, StatusCode::BAD_REQUEST);
    // Without a token the PATCH is a trader's edit and needs a session.
    assert_eq!(
        v.app.patch(&format!("/api/orders/{a_order}"), None, json!({"accepted": true})).await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(children(&v, &v.a, &sell).await, vec![("MATCHED".into(), 1000)]);

    // Seven days on, the link has expired.
    v.app.clock.set(tuesday_10am() + Duration::days(7));
    assert_eq!(link_page(&v, &a_order, &a_token, "ACCEPT").await.0, StatusCode::BAD_REQUEST);
    assert_eq!(confirm(&v, &a_order, &a_token, json!({"accepted": true})).await.0, StatusCode::BAD_REQUEST);
    assert_eq!(children(&v, &v.a, &sell).await, vec![("MATCHED".into(), 1000)]);
    v.app.stop().await;
}

async fn a_residual_works_at_the_take_price(b: Backend) {
    let v = venue(b).await;
    let (_, _, buy) = rest_and_parent(&v, 1000, "94.74", 1000).await;
    let (_, sent) = take(&v, &buy, 1000, "94.78", false, true).await;
    assert_eq!(sent[0]["price"], json!(94.74));
    assert_eq!(answer(&v, &v.a, &sent[0], "REJECTED").await.0, StatusCode::OK);
    let pid = buy["parent_order_id"].as_str().unwrap();
    let (_, orders) = v.app.get(&format!("/api/orders?parent_order_id={pid}&state=WORKING"), Some(&v.b)).await;
    assert_eq!((orders[0]["price"].clone(), orders[0]["quantity"].clone()), (json!(94.78), json!(1000)));
    assert_balanced(&v).await;
    v.app.stop().await;
}

/// A third trading firm (Corvid) confirming through its own broker (Tern): (its trader's
/// token, Tern's id).
async fn corvid(v: &Venue) -> (String, String) {
    let admin = v.app.admin_token().await;
    let (s, tern) = v
        .app
        .post(
            "/api/admin/companies",
            Some(&admin),
            json!({"name": "Tern", "full_name": "Tern Brokers Ltd", "roles": ["broker"]}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{tern}");
    let brokers = json!([{"company_id": tern["company_id"]}]);
    let (s, c) = v
        .app
        .post(
            "/api/admin/companies",
            Some(&admin),
            json!({"name": "Corvid", "full_name": "Corvid LLP", "brokers": brokers, "default_broker": brokers[0]}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{c}");
    upstairs::app::bootstrap_user(&v.app.database_url, "c@corvid.test", PW, &["trader"], "Corvid").await.unwrap();
    (v.app.login_remembered("c@corvid.test", PW).await, tern["company_id"].as_str().unwrap().to_owned())
}

/// A child order of `parent` resting at `price` through `broker`, one second after the
/// last (so that "oldest first" has a meaning); its id.
async fn rest(v: &Venue, token: &str, parent: &Value, quantity: i64, price: &'static str, broker: &str) -> String {
    v.app.clock.advance(Duration::seconds(1));
    let (s, o) = v
        .app
        .post(
            "/api/orders",
            Some(token),
            json!({"parent_order_id": parent["parent_order_id"], "quantity": quantity, "limit_price": p(price).0,
                   "residual": true, "iceberg": false, "broker_id": broker, "instrument_id": v.instrument,
                   "direction": parent["direction"]}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{o}");
    o["order_id"].as_str().unwrap().to_owned()
}

/// (state, price, quantity) of one order.
async fn order_state(v: &Venue, token: &str, id: &str) -> (String, Value, i64) {
    let (s, o) = v.app.get(&format!("/api/orders/{id}"), Some(token)).await;
    assert_eq!(s, StatusCode::OK, "{o}");
    (o["state"].as_str().unwrap().to_owned(), o["price"].clone(), o["quantity"].as_i64().unwrap())
}

/// A take of 4300 up to 94.76 against two firms' orders on three levels, with the taker's
/// own firm resting better and a third firm's order beyond the price: hits best price
/// first, then oldest first within a price, whatever the firm; never the taker's firm;
/// nothing beyond the take price; the last 100 (below the minimum block of 500) is not
/// allocated, nor worked as a residual. The requests are the dry run's breakdown.
async fn a_take_sweeps_best_price_then_oldest_across_firms(b: Backend) {
    let v = venue(b).await;
    let (c, tern) = corvid(&v).await;
    let a_sell = v.parent(&v.a, "SELL", 5000).await;
    let c_sell = v.parent(&c, "SELL", 5000).await;
    let b_own = v.parent(&v.b, "SELL", 1000).await;
    let a1 = rest(&v, &v.a, &a_sell, 1000, "94.74", &v.broker).await;
    let c1 = rest(&v, &c, &c_sell, 1000, "94.75", &tern).await;
    let a2 = rest(&v, &v.a, &a_sell, 700, "94.75", &v.broker).await;
    let own = rest(&v, &v.b, &b_own, 1000, "94.73", &v.broker).await;
    let c2 = rest(&v, &c, &c_sell, 1000, "94.76", &tern).await;
    let c3 = rest(&v, &c, &c_sell, 500, "94.75", &tern).await;
    let a3 = rest(&v, &v.a, &a_sell, 1000, "94.77", &v.broker).await;
    let buy = v.parent(&v.b, "BUY", 5000).await;

    let hit = |price: f64, quantity: i64, broker: &str| json!({"price": price, "quantity": quantity, "responding_broker_name": broker, "responding_order_iceberg": false});
    let want = json!([
        hit(94.74, 1000, "Baltic"),
        hit(94.75, 1000, "Tern"),
        hit(94.75, 700, "Baltic"),
        hit(94.75, 500, "Tern"),
        hit(94.76, 1000, "Tern"),
    ]);
    let (s, dry) = take(&v, &buy, 4300, "94.76", true, true).await;
    assert_eq!((s, &dry), (StatusCode::OK, &want));
    assert_eq!(children(&v, &v.b, &buy).await, vec![], "a dry run writes nothing");

    let (s, sent) = take(&v, &buy, 4300, "94.76", false, true).await;
    assert_eq!(s, StatusCode::CREATED, "{sent}");
    let made: Vec<Value> = sent
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            json!({"price": m["price"], "quantity": m["quantity"], "role": m["role"], "direction": m["direction"],
                        "state": m["state"], "iceberg": m["iceberg"]})
        })
        .collect();
    let request = |price: f64, quantity: i64| {
        json!({"price": price, "quantity": quantity, "role": "REQUESTER", "direction": "BUY", "state": "PENDING",
               "iceberg": false})
    };
    assert_eq!(
        made,
        vec![
            request(94.74, 1000),
            request(94.75, 1000),
            request(94.75, 700),
            request(94.75, 500),
            request(94.76, 1000)
        ],
        "one request per order hit, in the dry run's order"
    );
    // Each hit order is locked whole; the taker's own firm's and the one beyond the
    // price still rest.
    for (token, id, quantity) in [(&v.a, &a1, 1000), (&c, &c1, 1000), (&v.a, &a2, 700), (&c, &c3, 500), (&c, &c2, 1000)]
    {
        assert_eq!(order_state(&v, token, id).await.0, "AWAITING_MATCH", "{id}");
        assert_eq!(order_state(&v, token, id).await.2, quantity, "{id}");
    }
    assert_eq!(order_state(&v, &v.b, &own).await, ("WORKING".into(), json!(94.73), 1000));
    assert_eq!(order_state(&v, &v.a, &a3).await, ("WORKING".into(), json!(94.77), 1000));
    // Each responder firm sees its own requests only: Halyard two, Corvid three.
    for (token, prices) in
        [(&v.a, vec![json!(94.74), json!(94.75)]), (&c, vec![json!(94.75), json!(94.75), json!(94.76)])]
    {
        let (_, theirs) = v.app.get("/api/order-match-requests?state=PENDING", Some(token)).await;
        let mut got: Vec<String> = theirs.as_array().unwrap().iter().map(|m| m["price"].to_string()).collect();
        got.sort();
        let want: Vec<String> = prices.iter().map(|p| p.to_string()).collect();
        assert_eq!(got, want, "{theirs}");
        assert!(theirs.as_array().unwrap().iter().all(|m| m["role"] == "RESPONDER" && m["direction"] == "SELL"));
    }
    // 4200 locked, the 100 left stays with the parent: no residual below a block.
    assert_eq!(
        children(&v, &v.b, &buy).await,
        vec![
            ("AWAITING_MATCH".into(), 500),
            ("AWAITING_MATCH".into(), 700),
            ("AWAITING_MATCH".into(), 1000),
            ("AWAITING_MATCH".into(), 1000),
            ("AWAITING_MATCH".into(), 1000)
        ]
    );
    assert_eq!(quantities(&v, &v.b, &buy).await, json!({"tradable": 800, "working": 4200, "matched": 0}));
    assert_eq!(quantities(&v, &v.a, &a_sell).await, json!({"tradable": 2300, "working": 2700, "matched": 0}));
    assert_eq!(quantities(&v, &c, &c_sell).await, json!({"tradable": 2500, "working": 2500, "matched": 0}));
    // The book keeps what was not hit.
    let (_, book) = v.app.get(&format!("/api/instruments/{}/book", v.instrument), Some(&v.b)).await;
    let sells: Vec<(Value, Value)> =
        book["levels"].as_array().unwrap().iter().map(|l| (l["price"].clone(), l["sell_quantity"].clone())).collect();
    assert_eq!(sells, vec![(json!(94.77), json!(1000)), (json!(94.73), json!(1000))], "{book}");
    assert_balanced_for(&v, &[&v.a, &v.b, &c]).await;
    v.app.stop().await;
}

/// An iceberg resting 3000 shows 500 in the book; a take reaches past what it shows: the
/// dry run flags the iceberg but shows no more than the book does (a free preview must
/// not reveal the hidden size), and the request locks what the take reaches (split off,
/// the rest still an iceberg showing 500).
async fn a_take_reaches_into_an_iceberg(b: Backend) {
    let v = venue(b).await;
    let sell = v.parent(&v.a, "SELL", 3000).await;
    let (s, iceberg) = v.child(&v.a, &sell, 3000, p("94.75"), true).await;
    assert_eq!(s, StatusCode::CREATED, "{iceberg}");
    let book_path = format!("/api/instruments/{}/book", v.instrument);
    assert_eq!(v.app.get(&book_path, Some(&v.b)).await.1["levels"][0]["sell_quantity"], json!(500));
    let buy = v.parent(&v.b, "BUY", 5000).await;

    let (s, dry) = take(&v, &buy, 2000, "94.75", true, false).await;
    assert_eq!(s, StatusCode::OK, "{dry}");
    assert_eq!(
        dry,
        json!([{"price": 94.75, "quantity": 500, "responding_broker_name": "Baltic", "responding_order_iceberg": true}])
    );
    let (s, sent) = take(&v, &buy, 2000, "94.75", false, false).await;
    assert_eq!(s, StatusCode::CREATED, "{sent}");
    assert_eq!((sent[0]["quantity"].clone(), sent[0]["iceberg"].clone()), (json!(2000), json!(true)));
    assert_eq!(children(&v, &v.a, &sell).await, vec![("AWAITING_MATCH".into(), 2000), ("WORKING".into(), 1000)]);
    let (_, rest) = v.app.get(&format!("/api/orders/{}", iceberg["order_id"].as_str().unwrap()), Some(&v.a)).await;
    assert_eq!(
        (rest["state"].clone(), rest["quantity"].clone(), rest["iceberg"].clone()),
        (json!("WORKING"), json!(1000), json!(true))
    );
    assert_eq!(v.app.get(&book_path, Some(&v.b)).await.1["levels"][0]["sell_quantity"], json!(500));
    assert_eq!(quantities(&v, &v.a, &sell).await, json!({"tradable": 0, "working": 3000, "matched": 0}));
    let (_, theirs) = v.app.get("/api/order-match-requests?state=PENDING", Some(&v.a)).await;
    assert_eq!((theirs[0]["iceberg"].clone(), theirs[0]["quantity"].clone()), (json!(true), json!(2000)));
    // A second take for more than is left gets all that is left, 1000.
    let (_, dry) = take(&v, &buy, 3000, "94.75", true, false).await;
    assert_eq!(
        dry,
        json!([{"price": 94.75, "quantity": 500, "responding_broker_name": "Baltic", "responding_order_iceberg": true}])
    );
    // Accepted: 2000 matched, the iceberg's 1000 still rests.
    assert_eq!(answer(&v, &v.a, &sent[0], "ACCEPTED").await.0, StatusCode::OK);
    assert_eq!(children(&v, &v.a, &sell).await, vec![("MATCHED".into(), 2000), ("WORKING".into(), 1000)]);
    assert_eq!(quantities(&v, &v.a, &sell).await, json!({"tradable": 0, "working": 1000, "matched": 2000}));
    assert_eq!(quantities(&v, &v.b, &buy).await, json!({"tradable": 3000, "working": 0, "matched": 2000}));
    v.app.stop().await;
}

/// Moves the instrument's band in the store only, as a crash between the band's commit and
/// the engine's sweep of pending requests leaves it.
async fn move_band_in_store(v: &Venue, lo: &str, hi: &str) {
    async fn go<S: upstairs_engine::Store>(s: S, id: &str, lo: &str, hi: &str) {
        use upstairs_engine::ports::{InstrumentRepo, Tx};
        let id = upstairs_domain::InstrumentId(id.parse().unwrap());
        let mut tx = s.write().await.unwrap();
        let mut i = tx.instrument(id).await.unwrap().unwrap();
        (i.min_tick_price, i.max_tick_price) = (lo.parse().unwrap(), hi.parse().unwrap());
        tx.update_instrument(&i).await.unwrap();
        tx.commit().await.unwrap();
    }
    let url = &v.app.database_url;
    if url.starts_with("sqlite:") {
        go(upstairs_store::SqliteStore::connect(url).await.unwrap(), &v.instrument, lo, hi).await;
    } else {
        go(upstairs_store::PgStore::connect(url).await.unwrap(), &v.instrument, lo, hi).await;
    }
}

/// The band moved away from a pending request's price and its sweep never ran: accepting
/// cancels the request as out of tick instead of trading outside the band.
async fn an_accept_after_an_unswept_band_move_cancels(b: Backend) {
    let v = venue(b).await;
    let (sell, _, buy) = rest_and_parent(&v, 1000, "94.75", 1000).await;
    let (s, sent) = take(&v, &buy, 1000, "94.75", false, false).await;
    assert_eq!(s, StatusCode::CREATED, "{sent}");
    move_band_in_store(&v, "94.76", "94.86").await;
    let (s, ended) = answer(&v, &v.a, &sent[0], "ACCEPTED").await;
    assert_eq!((s, ended["state"].clone()), (StatusCode::OK, json!("SYSTEM_CANCELLED_PRICE_OUT_OF_TICK")), "{ended}");
    // The responder's order is back in the book, the taker's quantity back with its parent.
    assert_eq!(children(&v, &v.a, &sell).await, vec![("WORKING".to_owned(), 1000)]);
    assert_eq!(quantities(&v, &v.b, &buy).await, json!({"tradable": 1000, "working": 0, "matched": 0}));
    assert_eq!(
        notices(&v, &v.b).await[0],
        notice("MATCH_REQUEST_SYSTEM_CANCELLED_OUT_OF_TICK_PRICE", "SYSTEM_CANCELLED_PRICE_OUT_OF_TICK", "REQUESTER")
    );
    v.app.stop().await;
}

/// A partial hit never leaves a resting order below the minimum block (500): it takes
/// less, leaving one block, or passes the order by when that would be less than a block.
async fn no_resting_order_is_left_below_a_block(b: Backend) {
    let v = venue(b).await;
    // 1200 resting, 1000 asked: 700 taken, 500 left.
    let (sell, _, buy) = rest_and_parent(&v, 1200, "94.75", 3000).await;
    let (s, dry) = take(&v, &buy, 1000, "94.75", true, false).await;
    assert_eq!(s, StatusCode::OK, "{dry}");
    assert_eq!(dry.as_array().unwrap().iter().map(|h| h["quantity"].clone()).collect::<Vec<_>>(), [json!(700)]);
    let (s, sent) = take(&v, &buy, 1000, "94.75", false, false).await;
    assert_eq!((s, sent[0]["quantity"].clone()), (StatusCode::CREATED, json!(700)), "{sent}");
    assert_eq!(children(&v, &v.a, &sell).await, vec![("AWAITING_MATCH".to_owned(), 700), ("WORKING".to_owned(), 500)]);
    // 800 resting, 500 asked: any hit would leave less than a block; a whole take is fine.
    let small = v.parent(&v.a, "SELL", 800).await;
    let (s, _) = v.child(&v.a, &small, 800, p("94.74"), false).await;
    assert_eq!(s, StatusCode::CREATED);
    let (s, dry) = take(&v, &buy, 500, "94.74", true, false).await;
    assert_eq!((s, dry), (StatusCode::OK, json!([])));
    let (s, dry) = take(&v, &buy, 800, "94.74", true, false).await;
    assert_eq!((s, dry[0]["quantity"].clone()), (StatusCode::OK, json!(800)), "{dry}");
    v.app.stop().await;
}

/// The review's finding (issue 26, ADR 0027): an iceberg of 5000 shows 500 at 94.75 and a
/// plain 2000 rests at 94.76; previews of 5000, 5500, 6000 and 7000 once showed 0, 500,
/// 1000 and 2000 at 94.76, so the hidden size was 5000. A preview now allocates against
/// what the book shows: every preview says the same, and no more than the book.
async fn no_sequence_of_previews_finds_a_hidden_size(b: Backend) {
    let v = venue(b).await;
    let sell = v.parent(&v.a, "SELL", 7000).await;
    let (s, o) = v.child(&v.a, &sell, 5000, p("94.75"), true).await;
    assert_eq!(s, StatusCode::CREATED, "{o}");
    let (s, o) = v.child(&v.a, &sell, 2000, p("94.76"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{o}");
    let (_, book) = v.app.get(&format!("/api/instruments/{}/book", v.instrument), Some(&v.b)).await;
    let shown: i64 = book["levels"].as_array().unwrap().iter().map(|l| l["sell_quantity"].as_i64().unwrap()).sum();
    assert_eq!(shown, 2500, "{book}");
    let buy = v.parent(&v.b, "BUY", 10_000).await;
    let mut previews = Vec::new();
    for quantity in [2500, 5000, 5500, 6000, 7000, 10_000] {
        let (s, dry) = take(&v, &buy, quantity, "94.76", true, false).await;
        assert_eq!(s, StatusCode::OK, "{dry}");
        let rows: Vec<(String, i64)> =
            dry.as_array().unwrap().iter().map(|r| (r["price"].to_string(), r["quantity"].as_i64().unwrap())).collect();
        previews.push(rows);
    }
    let expected = vec![("94.75".to_owned(), 500), ("94.76".to_owned(), 2000)];
    assert!(previews.iter().all(|r| *r == expected), "{previews:?}");
    // Smaller previews stop where the shown quantity does.
    let (_, dry) = take(&v, &buy, 1000, "94.76", true, false).await;
    assert_eq!(dry.as_array().unwrap().iter().map(|r| r["quantity"].as_i64().unwrap()).collect::<Vec<_>>(), [500, 500]);
    // The take itself reaches into the iceberg and says so in its requests.
    let (s, sent) = take(&v, &buy, 5500, "94.76", false, false).await;
    assert_eq!(s, StatusCode::CREATED, "{sent}");
    let reached: Vec<(i64, bool)> =
        sent.as_array().unwrap().iter().map(|m| (m["quantity"].as_i64().unwrap(), m["iceberg"] == true)).collect();
    assert_eq!(reached, [(5000, true), (500, false)]);
    v.app.stop().await;
}

/// Previews write nothing but read the book: throttled per user like writes (429 with
/// Retry-After), in a bucket of their own.
async fn previews_are_throttled_per_user(b: Backend) {
    let v = venue_with(b, |s| {
        s.rate_limits.write_burst = 3;
        s.rate_limits.writes_per_second = 1;
    })
    .await;
    let (_, _, buy) = rest_and_parent(&v, 1000, "94.75", 1000).await;
    for _ in 0..3 {
        let (s, dry) = take(&v, &buy, 500, "94.75", true, false).await;
        assert_eq!(s, StatusCode::OK, "{dry}");
    }
    let res = v
        .app
        .client
        .post(format!("{}/api/order-match-requests", v.app.base))
        .bearer_auth(&v.b)
        .json(&json!({"requesting_parent_order_id": buy["parent_order_id"], "quantity": 500, "price": p("94.75").0,
                      "requesting_broker_id": v.broker, "dry_run": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(res.headers()["retry-after"], "1");
    // Counted per firm in the metrics.
    let (_, me) = v.app.get("/api/users/me", Some(&v.b)).await;
    let firm = me["company_id"].as_str().unwrap();
    let metrics = v.app.client.get(v.app.metrics_url()).send().await.unwrap().text().await.unwrap();
    for (outcome, n) in [("answered", 3), ("throttled", 1)] {
        let line = format!("upstairs_take_previews_total{{company=\"{firm}\",outcome=\"{outcome}\"}} {n}");
        assert!(metrics.lines().any(|l| l == line), "{line} in\n{metrics}");
    }
    // The take itself has its own bucket; a second later previews go on.
    let (s, sent) = take(&v, &buy, 500, "94.75", false, false).await;
    assert_eq!(s, StatusCode::CREATED, "{sent}");
    v.app.clock.advance(Duration::seconds(1));
    let (s, dry) = take(&v, &buy, 500, "94.75", true, false).await;
    assert_eq!(s, StatusCode::OK, "{dry}");
    v.app.stop().await;
}

/// A child order of `parent` at `price` with a minimum execution size; (status, body).
async fn rest_with_mes(v: &Venue, token: &str, parent: &Value, quantity: i64, mes: Value) -> (StatusCode, Value) {
    v.app.clock.advance(Duration::seconds(1));
    v.app
        .post(
            "/api/orders",
            Some(token),
            json!({"parent_order_id": parent["parent_order_id"], "quantity": quantity, "limit_price": p("94.75").0,
                   "residual": true, "iceberg": false, "broker_id": v.broker, "min_execution": mes}),
        )
        .await
}

/// No key of `body`, however deep, names a minimum execution size.
fn names_no_mes(body: &Value) -> bool {
    match body {
        Value::Object(m) => m.iter().all(|(k, v)| k != "min_execution" && names_no_mes(v)),
        Value::Array(a) => a.iter().all(names_no_mes),
        _ => true,
    }
}

/// Issue 29 (ADR 0041): Halyard rests 3000 at 94.75 with a minimum execution size of 2000,
/// then a plain 1000 at the same price. The book shows 4000 either way. A take of 1500
/// passes the older order by, without a word, for the plain one; a take of 2000 fills it
/// at its size; the 1000 left, below its size, is filled whole or not at all. Nothing
/// Kestrel reads (book, previews, requests, notifications) names the size.
async fn a_minimum_execution_size_holds_in_takes_and_previews(b: Backend) {
    let v = venue(b).await;
    // Kestrel's socket on the book: what the pushes carry of Halyard's orders.
    let topic = format!("/topic/instruments/{}/book", v.instrument);
    let wait = std::time::Duration::from_secs(10);
    let mut peer = Peer::spawn("stomp_client.py", &["127.0.0.1".into(), v.app.port().to_string(), v.b.clone(), topic]);
    assert_eq!(peer.next_json(wait).await.unwrap()["event"], "connected");
    assert_eq!(peer.next_json(wait).await.unwrap()["event"], "subscribed");
    let sell = v.parent(&v.a, "SELL", 5000).await;
    let (s, big) = rest_with_mes(&v, &v.a, &sell, 3000, json!(2000)).await;
    assert_eq!((s, big["min_execution"].clone()), (StatusCode::CREATED, json!(2000)), "{big}");
    let big = big["order_id"].as_str().unwrap().to_owned();
    let plain = rest(&v, &v.a, &sell, 1000, "94.75", &v.broker).await;
    let book_path = format!("/api/instruments/{}/book", v.instrument);
    let (_, book) = v.app.get(&book_path, Some(&v.b)).await;
    assert_eq!(book["levels"][0]["sell_quantity"], json!(4000), "{book}");
    let buy = v.parent(&v.b, "BUY", 10_000).await;
    let mut seen = vec![book];

    // Too small for the older order: the preview and the take go to the plain one.
    let (s, dry) = take(&v, &buy, 1500, "94.75", true, false).await;
    assert_eq!(s, StatusCode::OK, "{dry}");
    assert_eq!(dry.as_array().unwrap().iter().map(|h| h["quantity"].as_i64().unwrap()).collect::<Vec<_>>(), [1000]);
    seen.push(dry);
    let (s, sent) = take(&v, &buy, 1500, "94.75", false, false).await;
    assert_eq!((s, sent.as_array().map(Vec::len)), (StatusCode::CREATED, Some(1)), "{sent}");
    assert_eq!(order_state(&v, &v.a, &plain).await.0, "AWAITING_MATCH");
    assert_eq!(order_state(&v, &v.a, &big).await, ("WORKING".into(), json!(94.75), 3000));
    seen.push(sent);

    // At its size it fills; the 1000 left keeps the size (a remainder below it).
    let (s, dry) = take(&v, &buy, 2000, "94.75", true, false).await;
    assert_eq!((s, dry[0]["quantity"].clone()), (StatusCode::OK, json!(2000)), "{dry}");
    seen.push(dry);
    let (s, sent) = take(&v, &buy, 2000, "94.75", false, false).await;
    assert_eq!((s, sent[0]["quantity"].clone()), (StatusCode::CREATED, json!(2000)), "{sent}");
    let (_, left) = v.app.get(&format!("/api/orders/{big}"), Some(&v.a)).await;
    assert_eq!((left["quantity"].clone(), left["min_execution"].clone()), (json!(1000), json!(2000)), "{left}");
    let id = sent[0]["order_match_request_id"].as_str().unwrap();
    seen.push(v.app.get(&format!("/api/order-match-requests/{id}"), Some(&v.b)).await.1);
    seen.push(sent);

    // The remainder is filled whole, never in part.
    let (s, dry) = take(&v, &buy, 500, "94.75", true, false).await;
    assert_eq!((s, dry.clone()), (StatusCode::OK, json!([])), "{dry}");
    let (s, none) = take(&v, &buy, 500, "94.75", false, false).await;
    assert_eq!(s, StatusCode::CONFLICT, "{none}");
    let (s, sent) = take(&v, &buy, 1000, "94.75", false, false).await;
    assert_eq!((s, sent[0]["quantity"].clone()), (StatusCode::CREATED, json!(1000)), "{sent}");
    seen.push(sent);
    seen.push(v.app.get("/api/order-match-requests", Some(&v.b)).await.1);
    seen.push(v.app.get("/api/notifications", Some(&v.b)).await.1);
    seen.push(v.app.get(&book_path, Some(&v.b)).await.1);
    // Every book frame up to the last change (the level emptied by the last take).
    loop {
        let frame = peer.next_json(wait).await.expect("a book frame");
        let empty = frame["body"]["levels"] == json!([]);
        seen.push(frame);
        if empty {
            break;
        }
    }
    drop(peer);
    assert!(seen.iter().all(names_no_mes), "{seen:?}");
    assert_balanced_for(&v, &[&v.a, &v.b]).await;
    v.app.stop().await;
}

/// A minimum execution size runs from the instrument's block (500) to the order's
/// quantity, on creating and editing; null removes it; a parent's size (an execution
/// system's MinQty) is its child orders' when they name none, up to their quantity; the
/// action log keeps it.
async fn a_minimum_execution_size_is_the_owners_to_set(b: Backend) {
    let v = venue(b).await;
    let sell = v.parent(&v.a, "SELL", 5000).await;
    for (mes, want) in [(json!(499), "Min block size: 500"), (json!(3001), "Must not exceed the quantity")] {
        let (s, e) = rest_with_mes(&v, &v.a, &sell, 3000, mes).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
        assert_eq!(
            (e["errors"][0]["field"].clone(), e["errors"][0]["message"].clone()),
            (json!("min_execution"), json!(want))
        );
    }
    // Out of a quantity's bounds: 400 on the field; not a whole number: 422, as for the quantity.
    for (mes, want) in [
        (json!(-1), StatusCode::BAD_REQUEST),
        (json!(i64::MAX), StatusCode::BAD_REQUEST),
        (json!(1.5), StatusCode::UNPROCESSABLE_ENTITY),
        (json!("1000"), StatusCode::UNPROCESSABLE_ENTITY),
    ] {
        let (s, e) = rest_with_mes(&v, &v.a, &sell, 3000, mes.clone()).await;
        assert_eq!(s, want, "{mes}: {e}");
    }
    let (s, o) = rest_with_mes(&v, &v.a, &sell, 3000, json!(null)).await;
    assert_eq!((s, o["min_execution"].clone()), (StatusCode::CREATED, json!(null)), "{o}");
    let (s, o) = rest_with_mes(&v, &v.a, &sell, 2000, json!(1500)).await;
    assert_eq!((s, o["min_execution"].clone()), (StatusCode::CREATED, json!(1500)), "{o}");
    let path = format!("/api/orders/{}", o["order_id"].as_str().unwrap());

    // Editing: the quantity may not go below the size kept; the size may change or go.
    let (s, e) = v.app.patch(&path, Some(&v.a), json!({"quantity": 1000})).await;
    assert_eq!((s, e["errors"][0]["field"].clone()), (StatusCode::BAD_REQUEST, json!("min_execution")), "{e}");
    let (s, e) = v.app.patch(&path, Some(&v.a), json!({"min_execution": 2001})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    let (s, o) = v.app.patch(&path, Some(&v.a), json!({"quantity": 1000, "min_execution": 1000})).await;
    assert_eq!(
        (s, o["quantity"].clone(), o["min_execution"].clone()),
        (StatusCode::OK, json!(1000), json!(1000)),
        "{o}"
    );
    let (s, o) = v.app.patch(&path, Some(&v.a), json!({"limit_price": 94.76})).await;
    assert_eq!((s, o["min_execution"].clone()), (StatusCode::OK, json!(1000)), "{o}");
    let (s, o) = v.app.patch(&path, Some(&v.a), json!({"min_execution": null})).await;
    assert_eq!((s, o["min_execution"].clone()), (StatusCode::OK, json!(null)), "{o}");
    // Another firm cannot touch it.
    let (s, _) = v.app.patch(&path, Some(&v.b), json!({"min_execution": 500})).await;
    assert_eq!(s, StatusCode::NOT_FOUND);

    // A parent's size.
    let (s, e) = v
        .app
        .post(
            "/api/parent-orders",
            Some(&v.b),
            json!({"direction": "BUY", "instrument_id": v.instrument, "quantity": 2000, "min_execution": 2500}),
        )
        .await;
    assert_eq!((s, e["errors"][0]["field"].clone()), (StatusCode::BAD_REQUEST, json!("min_execution")), "{e}");
    let (s, parent) = v
        .app
        .post(
            "/api/parent-orders",
            Some(&v.b),
            json!({"direction": "BUY", "instrument_id": v.instrument, "quantity": 5000, "min_execution": 1500}),
        )
        .await;
    assert_eq!((s, parent["min_execution"].clone()), (StatusCode::CREATED, json!(1500)), "{parent}");
    let (s, o) = rest_with_mes(&v, &v.b, &parent, 3000, json!(null)).await;
    assert_eq!((s, o["min_execution"].clone()), (StatusCode::CREATED, json!(1500)), "{o}");
    let (s, o) = rest_with_mes(&v, &v.b, &parent, 1000, json!(null)).await;
    assert_eq!((s, o["min_execution"].clone()), (StatusCode::CREATED, json!(1000)), "up to its quantity: {o}");
    let (s, o) = rest_with_mes(&v, &v.b, &parent, 1000, json!(500)).await;
    assert_eq!((s, o["min_execution"].clone()), (StatusCode::CREATED, json!(500)), "its own: {o}");

    // The action log keeps each size.
    let admin = v.app.admin_token().await;
    let (_, logs) = v.app.get("/api/admin/action-logs?entity=order&operation=create&size=100", Some(&admin)).await;
    let row = logs["items"].as_array().unwrap().iter().find(|l| l["entity_id"] == o["order_id"]).unwrap();
    assert_eq!(row["details"]["after"]["min_execution"], json!(500), "{row}");
    v.app.stop().await;
}

/// Halyard's company admin (token) and Halyard's and Kestrel's company ids.
async fn halyard_admin(v: &Venue) -> (String, String, String) {
    upstairs::app::bootstrap_user(&v.app.database_url, "boss@halyard.test", PW, &["company-admin"], "Halyard")
        .await
        .unwrap();
    let boss = v.app.login_remembered("boss@halyard.test", PW).await;
    let company = |token: String| async move {
        v.app.get("/api/users/me", Some(&token)).await.1["company_id"].as_str().unwrap().to_owned()
    };
    (boss.clone(), company(boss).await, company(v.b.clone()).await)
}

/// Issue 29 (ADR 0042): Halyard's firm filter blocks Kestrel. Kestrel's preview and take
/// find nothing, in the very words of an empty book, and Halyard's take of Kestrel's offer
/// finds nothing either; Kestrel cannot read Halyard's filter. A trader's own filter, and
/// a least reliability score (Kestrel rejected its one request: 0), screen the same way.
async fn counterparty_filters_hold_both_ways_unseen(b: Backend) {
    let v = venue(b).await;
    let (boss, halyard, kestrel) = halyard_admin(&v).await;
    let (_, _, buy) = rest_and_parent(&v, 1000, "94.75", 3000).await;
    let filter = format!("/api/companies/{halyard}/counterparty-filter");
    let (s, f) = v.app.put(&filter, Some(&boss), json!({"blocked_company_ids": [kestrel]})).await;
    assert_eq!((s, f["blocked_companies"][0]["name"].clone()), (StatusCode::OK, json!("Kestrel")), "{f}");

    // Kestrel: nothing to preview, nothing to take, as where nothing rests at all.
    assert_eq!(take(&v, &buy, 1000, "94.75", true, false).await, (StatusCode::OK, json!([])));
    let blocked = take(&v, &buy, 1000, "94.75", false, false).await;
    let empty = take(&v, &buy, 1000, "94.70", false, false).await;
    assert_eq!(blocked.0, StatusCode::CONFLICT, "{}", blocked.1);
    assert_eq!(blocked, empty);
    // The book still shows the level, to everyone.
    let (_, book) = v.app.get(&format!("/api/instruments/{}/book", v.instrument), Some(&v.b)).await;
    assert_eq!(book["levels"][0]["sell_quantity"], json!(1000), "{book}");
    // Kestrel cannot read the filter: as for a company that does not exist.
    let unknown = v
        .app
        .get(&format!("/api/companies/{}/counterparty-filter", upstairs_domain::CompanyId::new().0), Some(&v.b))
        .await;
    assert_eq!(v.app.get(&filter, Some(&v.b)).await, unknown);
    assert_eq!(unknown.0, StatusCode::NOT_FOUND);

    // The other way: Halyard's trader finds nothing of Kestrel's offer.
    let k_sell = v.parent(&v.b, "SELL", 1000).await;
    let (s, _) = v.child(&v.b, &k_sell, 1000, p("94.74"), false).await;
    assert_eq!(s, StatusCode::CREATED);
    let a_buy = v.parent(&v.a, "BUY", 1000).await;
    let a_take = |dry_run: bool| {
        json!({"requesting_parent_order_id": a_buy["parent_order_id"], "quantity": 1000, "price": p("94.74").0,
               "requesting_broker_id": v.broker, "dry_run": dry_run, "residual": false})
    };
    assert_eq!(v.app.post("/api/order-match-requests", Some(&v.a), a_take(true)).await, (StatusCode::OK, json!([])));

    // Lifted, the trade goes through; Kestrel rejects it, and its score falls to 0.
    let (s, _) = v.app.put(&filter, Some(&boss), json!({"blocked_company_ids": []})).await;
    assert_eq!(s, StatusCode::OK);
    let (s, sent) = v.app.post("/api/order-match-requests", Some(&v.a), a_take(false)).await;
    assert_eq!(s, StatusCode::CREATED, "{sent}");
    assert_eq!(answer(&v, &v.b, &sent[0], "REJECTED").await.0, StatusCode::OK);
    let k_sell = v.parent(&v.b, "SELL", 1000).await;
    let (s, _) = v.child(&v.b, &k_sell, 1000, p("94.74"), false).await;
    assert_eq!(s, StatusCode::CREATED);

    // A trader's own least score (50): Kestrel (0 now) is out of that trader's reach, and
    // that trader's orders out of Kestrel's, both ways as for a block.
    let (s, f) = v
        .app
        .put(
            "/api/users/me/counterparty-filter",
            Some(&v.a),
            json!({"blocked_company_ids": [], "min_reliability_score": 50}),
        )
        .await;
    assert_eq!((s, f["min_reliability_score"].clone()), (StatusCode::OK, json!(50)), "{f}");
    assert_eq!(v.app.post("/api/order-match-requests", Some(&v.a), a_take(true)).await, (StatusCode::OK, json!([])));
    assert_eq!(take(&v, &buy, 1000, "94.75", true, false).await, (StatusCode::OK, json!([])));
    // Another Halyard trader is not held by it.
    let (_, small_parent) = v
        .app
        .post(
            "/api/parent-orders",
            Some(&v.a_admin_limited),
            json!({"direction": "BUY", "instrument_id": v.instrument, "quantity": 1000}),
        )
        .await;
    let (s, dry) = v
        .app
        .post(
            "/api/order-match-requests",
            Some(&v.a_admin_limited),
            json!({"requesting_parent_order_id": small_parent["parent_order_id"], "quantity": 1000, "price": p("94.74").0,
                   "requesting_broker_id": v.broker, "dry_run": true, "residual": false}),
        )
        .await;
    assert_eq!((s, dry.as_array().map(Vec::len)), (StatusCode::OK, Some(1)), "{dry}");
    // Kestrel's trader blocks Halyard for itself: Halyard's order is out of its reach.
    let (s, _) = v.app.put("/api/users/me/counterparty-filter", Some(&v.a), json!({"blocked_company_ids": []})).await;
    assert_eq!(s, StatusCode::OK);
    let (s, _) =
        v.app.put("/api/users/me/counterparty-filter", Some(&v.b), json!({"blocked_company_ids": [halyard]})).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(take(&v, &buy, 1000, "94.75", true, false).await, (StatusCode::OK, json!([])));
    assert_balanced_for(&v, &[&v.a, &v.b]).await;
    v.app.stop().await;
}

/// A firm's filter is its company admin's (or a venue admin's) to set and its people's to
/// read; a trader sets its own; each change is in the action log; bad input is refused
/// field by field.
async fn counterparty_filters_are_set_by_their_owners(b: Backend) {
    let v = venue(b).await;
    let (boss, halyard, kestrel) = halyard_admin(&v).await;
    let filter = format!("/api/companies/{halyard}/counterparty-filter");
    // Empty until set; the firms to choose from leave out one's own firm, the broker and
    // the venue's own company (its staff's).
    assert_eq!(
        v.app.get(&filter, Some(&v.a)).await,
        (StatusCode::OK, json!({"blocked_companies": [], "min_reliability_score": null}))
    );
    let (_, firms) = v.app.get("/api/counterparty-firms", Some(&v.a)).await;
    let names: Vec<&str> = firms.as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"Kestrel") && !names.contains(&"Halyard") && !names.contains(&"Baltic"), "{names:?}");
    assert!(!names.contains(&"Upstairs"), "{names:?}");

    let body = json!({"blocked_company_ids": [kestrel], "min_reliability_score": 40});
    assert_eq!(v.app.put(&filter, Some(&v.a), body.clone()).await.0, StatusCode::FORBIDDEN, "a trader");
    assert_eq!(
        v.app.put(&format!("/api/companies/{kestrel}/counterparty-filter"), Some(&boss), body.clone()).await.0,
        StatusCode::NOT_FOUND
    );
    let (s, f) = v.app.put(&filter, Some(&boss), body).await;
    assert_eq!((s, f["min_reliability_score"].clone()), (StatusCode::OK, json!(40)), "{f}");
    assert_eq!(v.app.get(&filter, Some(&v.a)).await.1, f, "Halyard's trader reads it");
    let admin = v.app.admin_token().await;
    assert_eq!(v.app.get(&filter, Some(&admin)).await.1, f, "the operator reads it");
    // A company that does not exist is not found, even by the operator.
    let nowhere = format!("/api/companies/{}/counterparty-filter", upstairs_domain::CompanyId::new().0);
    assert_eq!(v.app.get(&nowhere, Some(&admin)).await.0, StatusCode::NOT_FOUND);
    assert_eq!(v.app.put(&nowhere, Some(&admin), json!({"blocked_company_ids": []})).await.0, StatusCode::NOT_FOUND);

    for (body, field, message) in [
        (
            json!({"blocked_company_ids": [], "min_reliability_score": 101}),
            "min_reliability_score",
            "Must be from 0 to 100",
        ),
        (
            json!({"blocked_company_ids": [], "min_reliability_score": -1}),
            "min_reliability_score",
            "Must be from 0 to 100",
        ),
        (json!({"blocked_company_ids": [halyard]}), "blocked_company_ids", "A firm cannot block itself"),
        (json!({"blocked_company_ids": [upstairs_domain::CompanyId::new().0]}), "blocked_company_ids", "Unknown firm"),
    ] {
        let (s, e) = v.app.put(&filter, Some(&boss), body.clone()).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}: {e}");
        assert_eq!(
            (e["errors"][0]["field"].as_str(), e["errors"][0]["message"].as_str()),
            (Some(field), Some(message)),
            "{e}"
        );
    }
    let many: Vec<String> = (0..201).map(|_| upstairs_domain::CompanyId::new().0.to_string()).collect();
    assert_eq!(v.app.put(&filter, Some(&boss), json!({"blocked_company_ids": many})).await.0, StatusCode::BAD_REQUEST);
    // A company admin has no trader's filter of its own; a trader has.
    assert_eq!(v.app.get("/api/users/me/counterparty-filter", Some(&boss)).await.0, StatusCode::FORBIDDEN);
    let (s, f) =
        v.app.put("/api/users/me/counterparty-filter", Some(&v.a), json!({"blocked_company_ids": [kestrel]})).await;
    assert_eq!((s, f["blocked_companies"][0]["name"].clone()), (StatusCode::OK, json!("Kestrel")), "{f}");
    assert_eq!(v.app.get("/api/users/me/counterparty-filter", Some(&v.a)).await.1, f);

    let (_, logs) = v.app.get("/api/admin/action-logs?entity=counterparty_filter&size=100", Some(&admin)).await;
    let owners: Vec<&str> =
        logs["items"].as_array().unwrap().iter().map(|l| l["entity_id"].as_str().unwrap()).collect();
    assert_eq!(owners.len(), 2, "{logs}");
    assert!(owners.contains(&halyard.as_str()), "{logs}");
    v.app.stop().await;
}

/// The number a gauge of `/metrics` shows.
async fn gauge(v: &Venue, name: &str) -> String {
    let metrics = v.app.client.get(v.app.metrics_url()).send().await.unwrap().text().await.unwrap();
    let line =
        metrics.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or_else(|| panic!("{name} in {metrics}"));
    line.rsplit(' ').next().unwrap().to_owned()
}

/// Issue 30, ADR 0048: an instrument without a price for longer than its limit is stale.
/// Takes (and their previews) and accepts are refused with the reason; orders rest and a
/// request waits; the sweep says so once (the instrument, the book, the action log, the
/// metric); the next price lets trading go on by itself. A feed's price that leaves the
/// band as it was keeps prices fresh without an audit row or a push.
async fn stale_prices_hold_trading_until_a_price_comes(b: Backend) {
    let v = venue(b).await;
    let admin = v.app.admin_token().await;
    let path = format!("/api/admin/instruments/{}", v.instrument);
    let read = format!("/api/instruments/{}", v.instrument);
    for (bad, status) in [
        (json!(0), StatusCode::BAD_REQUEST),
        (json!(86_401), StatusCode::BAD_REQUEST),
        (json!(-1), StatusCode::BAD_REQUEST),
        (json!(i64::MAX), StatusCode::BAD_REQUEST),
        (json!(1.5), StatusCode::UNPROCESSABLE_ENTITY),
    ] {
        let (s, e) = v.app.patch(&path, Some(&admin), json!({"prices_stale_after": bad})).await;
        assert_eq!(s, status, "{bad}: {e}");
    }
    let (s, i) = v.app.patch(&path, Some(&admin), json!({"prices_stale_after": 30})).await;
    assert_eq!((s, &i["prices_stale_after"], &i["prices_stale"]), (StatusCode::OK, &json!(30), &json!(false)), "{i}");
    let (_, _, buy) = rest_and_parent(&v, 3000, "94.75", 3000).await;
    let (s, pending) = take(&v, &buy, 500, "94.75", false, false).await;
    assert_eq!(s, StatusCode::CREATED, "{pending}");
    let id = upstairs_domain::InstrumentId(v.instrument.parse().unwrap());
    let running = v.app.running.as_ref().unwrap();
    let band = |lo: &str, hi: &str| (lo.parse().unwrap(), hi.parse().unwrap());

    // 29 s on, a price that leaves the band as it was: fresh for another 30 s, unaudited.
    v.app.clock.advance(Duration::seconds(29));
    let (lo, hi) = band("94.70", "94.80");
    running.feed_price(id, lo, hi).await.unwrap();
    v.app.clock.advance(Duration::seconds(29));
    run_timers(&v).await;
    let (s, dry) = take(&v, &buy, 500, "94.75", true, false).await;
    assert_eq!(s, StatusCode::OK, "{dry}");
    let (_, logs) = v.app.get("/api/admin/action-logs?entity=instrument&size=100", Some(&admin)).await;
    let ops: Vec<&str> = logs["items"].as_array().unwrap().iter().map(|l| l["operation"].as_str().unwrap()).collect();
    assert_eq!(ops, ["update", "create"], "{logs}");

    // 31 s after that price: stale before the sweep has run, and after.
    v.app.clock.advance(Duration::seconds(2));
    let refused = |what: &str, (s, e): (StatusCode, Value)| {
        assert_eq!(s, StatusCode::CONFLICT, "{what}: {e}");
        assert_eq!(
            e["detail"],
            "Prices for Euribor 3M Dec26-Mar27 are stale: no exchange price since 10:00:29 UTC. \
             Trading resumes when prices return.",
            "{what}"
        );
    };
    refused("preview", take(&v, &buy, 500, "94.75", true, false).await);
    assert_eq!(
        v.app.get(&format!("/api/instruments/{}/book", v.instrument), Some(&v.b)).await.1["prices_stale"],
        false
    );
    run_timers(&v).await;
    refused("take", take(&v, &buy, 500, "94.75", false, false).await);
    refused("accept", answer(&v, &v.a, &pending[0], "ACCEPTED").await);
    assert_eq!(request_state(&v, &v.b, &pending[0]).await, "PENDING");
    let (_, i) = v.app.get(&read, Some(&v.b)).await;
    assert_eq!(i["prices_stale"], true, "{i}");
    for what in ["book", "market-data"] {
        let (_, body) = v.app.get(&format!("/api/instruments/{}/{what}", v.instrument), Some(&v.b)).await;
        assert_eq!(body["prices_stale"], true, "{what}: {body}");
    }
    assert_eq!(gauge(&v, "upstairs_instruments_stale").await, "1");
    let (_, logs) = v.app.get("/api/admin/action-logs?entity=instrument&operation=prices_stale", Some(&admin)).await;
    assert_eq!(logs["total_items"], 1, "{logs}");
    // Orders rest meanwhile, and new ones may be placed; rejecting and withdrawing go on.
    let (sell2, _, _) = rest_and_parent(&v, 500, "94.74", 500).await;
    assert_eq!(children(&v, &v.a, &sell2).await, [("WORKING".to_owned(), 500)]);

    // The next price (here, the band as it was) clears it: the accept goes through.
    running.feed_price(id, lo, hi).await.unwrap();
    let (_, i) = v.app.get(&read, Some(&v.b)).await;
    assert_eq!(i["prices_stale"], false, "{i}");
    assert_eq!(gauge(&v, "upstairs_instruments_stale").await, "0");
    let (s, accepted) = answer(&v, &v.a, &pending[0], "ACCEPTED").await;
    assert_eq!((s, &accepted["state"]), (StatusCode::OK, &json!("ACCEPTED")), "{accepted}");
    // The sweep was scheduled again from that price: 30 s on it trips once more.
    v.app.clock.advance(Duration::seconds(30));
    run_timers(&v).await;
    assert_eq!(v.app.get(&read, Some(&v.b)).await.1["prices_stale"], true);
    // Without a guard nothing is ever stale.
    let (s, i) = v.app.patch(&path, Some(&admin), json!({"prices_stale_after": null})).await;
    assert_eq!((s, &i["prices_stale_after"]), (StatusCode::OK, &Value::Null), "{i}");
    v.app.clock.advance(Duration::hours(1));
    let (s, dry) = take(&v, &buy, 500, "94.75", true, false).await;
    assert_eq!(s, StatusCode::OK, "{dry}");
    assert_balanced(&v).await;
    v.app.stop().await;
}
