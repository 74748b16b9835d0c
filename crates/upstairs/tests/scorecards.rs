#![allow(clippy::unwrap_used)]
//! Scorecards over HTTP on both backends (issue 29): each firm's figures from its own side
//! and nothing of the other's, the venue's for its staff, and who may read which.
mod support;

use chrono::Duration;
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::venue::*;
use support::*;
use upstairs_engine::Clock;

on_both_backends!(a_firm_sees_its_own_figures_and_the_venue_all, scorecards_are_read_by_whom_they_concern);

/// Halyard (A) rests a SELL; Kestrel (B) takes it with a match request for all of it.
async fn request_on(v: &Venue, sell: &Value, price: &'static str) -> String {
    let (s, o) = v.child(&v.a, sell, 1000, p(price), false).await;
    assert_eq!(s, StatusCode::CREATED, "{o}");
    let buy = v.parent(&v.b, "BUY", 1000).await;
    let (s, sent) = v
        .app
        .post(
            "/api/order-match-requests",
            Some(&v.b),
            json!({"requesting_parent_order_id": buy["parent_order_id"], "quantity": 1000, "price": p(price).0,
                   "requesting_broker_id": v.broker, "dry_run": false, "residual": false}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{sent}");
    sent[0]["order_match_request_id"].as_str().unwrap().to_owned()
}

async fn answer(v: &Venue, id: &str, state: &str) {
    let (s, m) = v.app.patch(&format!("/api/order-match-requests/{id}"), Some(&v.a), json!({"state": state})).await;
    assert_eq!(s, StatusCode::OK, "{m}");
}

/// Tuesday 10:00 to 12:00.
fn period() -> String {
    let from = tuesday_10am().to_rfc3339().replace('+', "%2B");
    let to = (tuesday_10am() + Duration::hours(2)).to_rfc3339().replace('+', "%2B");
    format!("from={from}&to={to}")
}

/// Three requests on Halyard's resting orders: one accepted after 3 s at 94.78 (the band
/// 94.70–94.80, mid 94.75: 3 ticks better than the mid for the seller), one rejected after
/// 10 s, one left to time out. A minute after the trade the band moves to 94.74–94.80 (mid
/// 94.77): one tick the seller's way, at 1, 5 and 30 minutes. Each firm sees its side of
/// it; Kestrel nothing of Halyard's answers; the venue every request, priced from the
/// resting side.
async fn a_firm_sees_its_own_figures_and_the_venue_all(b: Backend) {
    let v = venue(b).await;
    let sell = v.parent(&v.a, "SELL", 3000).await;
    let traded = request_on(&v, &sell, "94.78").await;
    v.app.clock.advance(Duration::seconds(3));
    answer(&v, &traded, "ACCEPTED").await;
    let declined = request_on(&v, &sell, "94.72").await;
    v.app.clock.advance(Duration::seconds(10));
    answer(&v, &declined, "REJECTED").await;
    v.app.clock.advance(Duration::seconds(47));
    let admin = v.app.admin_token().await;
    let (s, _) = v
        .app
        .post(
            &format!("/api/admin/instruments/{}/band", v.instrument),
            Some(&admin),
            json!({"min_tick_price": 94.74, "max_tick_price": 94.80}),
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    let lapsing = request_on(&v, &sell, "94.76").await;
    v.app.clock.advance(Duration::minutes(31));
    v.app.running.as_ref().unwrap().run_due_timers().await;
    let (_, m) = v.app.get(&format!("/api/order-match-requests/{lapsing}"), Some(&v.b)).await;
    assert_eq!(m["state"], "TIMED_OUT", "{m}");

    let q = period();
    let (s, halyard) = v.app.get(&format!("/api/scorecard?{q}"), Some(&v.a)).await;
    assert_eq!(s, StatusCode::OK, "{halyard}");
    let outcomes = |total: i64, accepted: i64, rejected: i64, timed_out: i64| {
        json!({"total": total, "pending": 0, "accepted": accepted, "rejected": rejected, "timed_out": timed_out,
               "withdrawn": 0, "cancelled_by_venue": 0})
    };
    let none = outcomes(0, 0, 0, 0);
    assert_eq!(halyard["sent"], none, "{halyard}");
    assert_eq!(halyard["received"], outcomes(3, 1, 1, 1));
    assert_eq!(halyard["response_times"], json!({"count": 2, "p50_ms": 3000, "p90_ms": 10000}));
    assert_eq!(halyard["trades"], json!(1));
    assert_eq!(halyard["price_improvement"], json!({"trades": 1, "ticks": 3}));
    let markouts = |ticks: i64| {
        json!([{"minutes": 1, "trades": 1, "ticks": ticks}, {"minutes": 5, "trades": 1, "ticks": ticks},
               {"minutes": 30, "trades": 1, "ticks": ticks}])
    };
    assert_eq!(halyard["markouts"], markouts(1));
    assert_eq!(halyard["broker_accept_times"], json!({"count": 0, "p50_ms": null, "p90_ms": null}));
    // It rested three blocks of 1,000; one traded.
    assert_eq!(halyard["resting"], json!({"rested_quantity": 3000, "filled_quantity": 1000}));

    // Kestrel: its own side; none of Halyard's answers.
    let (_, kestrel) = v.app.get(&format!("/api/scorecard?{q}"), Some(&v.b)).await;
    assert_eq!(kestrel["sent"], outcomes(3, 1, 1, 1), "{kestrel}");
    assert_eq!(kestrel["received"], none);
    assert_eq!(kestrel["response_times"], json!({"count": 0, "p50_ms": null, "p90_ms": null}));
    assert_eq!(kestrel["price_improvement"], json!({"trades": 1, "ticks": -3}));
    assert_eq!(kestrel["markouts"], markouts(-1));
    assert_ne!(kestrel["company_id"], halyard["company_id"]);
    // Its orders were takes, not resting interest.
    assert_eq!(kestrel["resting"], json!({"rested_quantity": 0, "filled_quantity": 0}));

    // The venue: every request, from the resting side; one firm's when asked.
    let (s, venue) = v.app.get(&format!("/api/admin/scorecard?{q}"), Some(&admin)).await;
    assert_eq!(s, StatusCode::OK, "{venue}");
    assert_eq!((venue["company_id"].clone(), venue["sent"].clone()), (Value::Null, outcomes(3, 1, 1, 1)));
    assert_eq!(venue["response_times"]["count"], json!(2));
    assert_eq!(venue["price_improvement"]["ticks"], json!(3));
    assert_eq!(venue["resting"], halyard["resting"]);
    let firm = halyard["company_id"].as_str().unwrap();
    let (_, one) = v.app.get(&format!("/api/admin/scorecard?{q}&company_id={firm}"), Some(&admin)).await;
    assert_eq!(one, halyard);

    // Before the trade's horizon: its markouts are left out, not guessed.
    let early = format!("from={}", tuesday_10am().to_rfc3339().replace('+', "%2B"));
    v.app.clock.set(tuesday_10am() + Duration::minutes(3));
    let (_, soon) = v.app.get(&format!("/api/scorecard?{early}"), Some(&v.a)).await;
    assert_eq!(soon["markouts"][0], json!({"minutes": 1, "trades": 1, "ticks": 1}), "{soon}");
    assert_eq!(soon["markouts"][1], json!({"minutes": 5, "trades": 0, "ticks": null}));
    v.app.stop().await;
}

/// A firm's traders read its scorecard; the venue's staff any firm's and the venue's;
/// nobody else. A period must run forwards and for at most 366 days.
async fn scorecards_are_read_by_whom_they_concern(b: Backend) {
    let v = venue(b).await;
    let admin = v.app.admin_token().await;
    let q = period();
    assert_eq!(v.app.get(&format!("/api/admin/scorecard?{q}"), Some(&v.a)).await.0, StatusCode::FORBIDDEN);
    // The venue admin's own company (the venue's) trades nothing: an empty scorecard.
    let (s, own) = v.app.get(&format!("/api/scorecard?{q}"), Some(&admin)).await;
    assert_eq!((s, own["trades"].clone(), own["sent"]["total"].clone()), (StatusCode::OK, json!(0), json!(0)), "{own}");
    assert_eq!(v.app.get(&format!("/api/scorecard?{q}"), None).await.0, StatusCode::UNAUTHORIZED);
    let nobody = upstairs_domain::CompanyId::new().0;
    let (s, body) = v.app.get(&format!("/api/admin/scorecard?{q}&company_id={nobody}"), Some(&admin)).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{body}");
    let at = |h: i64| (tuesday_10am() + Duration::hours(h)).to_rfc3339().replace('+', "%2B");
    let (s, body) = v.app.get(&format!("/api/scorecard?from={}&to={}", at(2), at(1)), Some(&v.a)).await;
    assert_eq!(
        (s, body["errors"][0]["message"].clone()),
        (StatusCode::BAD_REQUEST, json!("Must be after from")),
        "{body}"
    );
    let (s, body) = v.app.get(&format!("/api/scorecard?from={}&to={}", at(-24 * 400), at(0)), Some(&v.a)).await;
    assert_eq!(
        (s, body["errors"][0]["message"].clone()),
        (StatusCode::BAD_REQUEST, json!("At most 366 days")),
        "{body}"
    );
    for bad in ["-262143-01-01T00:00:00Z", "+262142-12-31T23:59:59Z", "0001-01-01T00:00:00Z"] {
        let (s, body) = v.app.get(&format!("/api/scorecard?to={}", bad.replace('+', "%2B")), Some(&v.a)).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    // The default period: the 30 days to now.
    let (s, body) = v.app.get("/api/scorecard", Some(&v.b)).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let to: chrono::DateTime<chrono::Utc> = body["to"].as_str().unwrap().parse().unwrap();
    assert_eq!(to, v.app.clock.now(), "{body}");
    v.app.stop().await;
}
