#![allow(clippy::unwrap_used)]
//! Allocations and give-ups over HTTP on both backends (issue 29, ADR 0045): a venue
//! admin opens a firm's accounts; the trader of a matched order splits it across them
//! and names a give-up broker, before or after the broker accepts and until the fill is
//! confirmed; the broker's e-mails carry it, billing shows it, and no other firm reads
//! or names a firm's accounts or allocations.
mod support;

use reqwest::StatusCode;
use serde_json::{Value, json};
use support::venue::*;
use support::*;

on_both_backends!(a_trader_allocates_a_trade_across_the_firms_accounts, accounts_are_the_firms_and_the_venues);

/// A SELL of Halyard's (A) rested and taken by Kestrel (B), accepted: A's order.
async fn a_trade(v: &Venue) -> (String, String) {
    let sell = v.parent(&v.a, "SELL", 1000).await;
    let (s, resting) = v.child(&v.a, &sell, 1000, p("94.75"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{resting}");
    let buy = v.parent(&v.b, "BUY", 1000).await;
    let (s, sent) = v
        .app
        .post(
            "/api/order-match-requests",
            Some(&v.b),
            json!({"requesting_parent_order_id": buy["parent_order_id"], "quantity": 1000, "price": 94.75,
                   "requesting_broker_id": v.broker, "dry_run": false, "residual": false}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{sent}");
    let path = format!("/api/order-match-requests/{}", sent[0]["order_match_request_id"].as_str().unwrap());
    let (s, m) = v.app.patch(&path, Some(&v.a), json!({"state": "ACCEPTED"})).await;
    assert_eq!(s, StatusCode::OK, "{m}");
    let order_of = |token: String, parent: Value| async move {
        let pid = parent["parent_order_id"].as_str().unwrap().to_owned();
        let (_, orders) = v.app.get(&format!("/api/orders?parent_order_id={pid}"), Some(&token)).await;
        orders[0]["order_id"].as_str().unwrap().to_owned()
    };
    (order_of(v.a.clone(), sell).await, order_of(v.b.clone(), buy).await)
}

async fn company_of(v: &Venue, token: &str) -> String {
    v.app.get("/api/users/me", Some(token)).await.1["company_id"].as_str().unwrap().to_owned()
}

async fn open_account(v: &Venue, admin: &str, company: &str, code: &str) -> String {
    let (s, a) = v
        .app
        .post(
            &format!("/api/admin/companies/{company}/accounts"),
            Some(admin),
            json!({"code": code, "name": format!("{code} book")}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{a}");
    assert_eq!((a["code"].clone(), a["active"].clone()), (json!(code), json!(true)));
    a["account_id"].as_str().unwrap().to_owned()
}

async fn a_trader_allocates_a_trade_across_the_firms_accounts(b: Backend) {
    let v = venue(b).await;
    let admin = v.app.admin_token().await;
    let (halyard, kestrel) = (company_of(&v, &v.a).await, company_of(&v, &v.b).await);
    // Northgate becomes Halyard's second broker, to give trades up to.
    let northgate = v.second_broker(&admin, &halyard).await;
    let (macro_, rates, closed) = (
        open_account(&v, &admin, &halyard, "HAL-MACRO").await,
        open_account(&v, &admin, &halyard, "HAL-RATES").await,
        open_account(&v, &admin, &halyard, "HAL-OLD").await,
    );
    let kestrel_book = open_account(&v, &admin, &kestrel, "KES-MAIN").await;
    let (s, _) = v
        .app
        .patch(&format!("/api/admin/companies/{halyard}/accounts/{closed}"), Some(&admin), json!({"active": false}))
        .await;
    assert_eq!(s, StatusCode::OK);
    // The firm's trader lists its open accounts, by code; the venue's staff every one.
    let (s, listed) = v.app.get(&format!("/api/companies/{halyard}/accounts"), Some(&v.a)).await;
    assert_eq!(s, StatusCode::OK, "{listed}");
    let codes =
        |l: &Value| l.as_array().unwrap().iter().map(|a| a["code"].as_str().unwrap().to_owned()).collect::<Vec<_>>();
    assert_eq!(codes(&listed), ["HAL-MACRO", "HAL-RATES"]);
    assert_eq!(codes(&v.app.get(&format!("/api/companies/{halyard}/accounts"), Some(&admin)).await.1).len(), 3);

    let (order, other) = a_trade(&v).await;
    let path = format!("/api/orders/{order}/allocation");
    assert_eq!(v.app.get(&path, Some(&v.a)).await.0, StatusCode::NOT_FOUND, "nothing allocated yet");
    let line = |account: &str, quantity: i64| json!({"account_id": account, "quantity": quantity});

    // What is refused, and why, each at its field.
    let refused = [
        (json!({"lines": []}), "lines"),
        (json!({"lines": [line(&macro_, 600), line(&rates, 300)]}), "lines"),
        (json!({"lines": [line(&macro_, 600), line(&kestrel_book, 400)]}), "lines[1].account_id"),
        (json!({"lines": [line(&macro_, 600), line(&closed, 400)]}), "lines[1].account_id"),
        (json!({"lines": [line(&macro_, 500), line(&macro_, 500)]}), "lines[1].account_id"),
        (json!({"lines": [line(&macro_, 1000), line(&rates, 0)]}), "lines[1].quantity"),
        (json!({"lines": [line(&macro_, 1000)], "give_up_broker_id": v.broker}), "give_up_broker_id"),
        (json!({"lines": [line(&macro_, 1000)], "give_up_broker_id": kestrel}), "give_up_broker_id"),
    ];
    for (body, field) in refused {
        let (s, e) = v.app.put(&path, Some(&v.a), body.clone()).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}: {e}");
        assert!(e["errors"].as_array().unwrap().iter().any(|x| x["field"] == field), "{body}: {e}");
    }
    let (s, e) =
        v.app.put(&path, Some(&v.a), json!({"lines": [line(&macro_, i64::MAX), line(&rates, i64::MAX)]})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "no overflow: {e}");

    // Split 600/400, given up to Northgate.
    let body = json!({"lines": [line(&macro_, 600), line(&rates, 400)], "give_up_broker_id": northgate});
    let (s, a) = v.app.put(&path, Some(&v.a), body.clone()).await;
    assert_eq!(s, StatusCode::OK, "{a}");
    assert_eq!((a["version"].clone(), a["broker_ack"].clone()), (json!(1), json!("PENDING")));
    assert_eq!(a["give_up_broker"], json!({"company_id": northgate, "name": "Northgate"}));
    assert_eq!(
        a["lines"][0],
        json!({"account_id": macro_, "code": "HAL-MACRO", "name": "HAL-MACRO book", "quantity": 600})
    );
    assert_eq!(v.app.get(&path, Some(&v.a)).await.1, a);
    // The broker is told by e-mail (after its two accept links).
    let mails = v.app.mails_to(BROKER_DESK, 3).await;
    let told = mails.iter().find(|m| header(m, "Subject").is_some_and(|s| s.starts_with("Trade allocated"))).unwrap();
    for l in [
        "Account HAL-MACRO: 600 (HAL-MACRO book)",
        "Account HAL-RATES: 400 (HAL-RATES book)",
        "Give-up broker: Northgate",
    ] {
        assert!(told.lines().any(|x| x.trim() == l), "{l} in {told}");
    }
    assert!(!told.contains("Kestrel"), "the broker's e-mail never names the other firm");

    // Kestrel reads nothing of it, nor Halyard's accounts, and cannot allocate Halyard's
    // order or its own to Halyard's accounts; what it is told is what nothing would tell.
    for p in [path.clone(), format!("/api/companies/{halyard}/accounts")] {
        let (s, e) = v.app.get(&p, Some(&v.b)).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{p}: {e}");
    }
    assert_eq!(v.app.put(&path, Some(&v.b), body.clone()).await.0, StatusCode::NOT_FOUND);
    let (s, e) = v
        .app
        .put(&format!("/api/orders/{other}/allocation"), Some(&v.b), json!({"lines": [line(&macro_, 1000)]}))
        .await;
    assert_eq!((s, e["errors"][0]["message"].clone()), (StatusCode::BAD_REQUEST, json!("Not an account of your firm")));

    // After the brokers accept, a second version: all to one account, no give-up; the
    // fill e-mails carry it.
    let accepts = broker_links(&v.app.mails_to(BROKER_DESK, 3).await, "/accept-order");
    for (o, t) in &accepts {
        let (s, e) = v.app.patch(&format!("/api/orders/{o}?token={t}"), None, json!({"accepted": true})).await;
        assert_eq!(s, StatusCode::OK, "{e}");
    }
    let (s, again) =
        v.app.put(&path, Some(&v.a), json!({"lines": [line(&rates, 1000)], "give_up_broker_id": null})).await;
    assert_eq!((s, again["version"].clone(), again["give_up_broker"].clone()), (StatusCode::OK, json!(2), Value::Null));
    let mails = v.app.mails_to(BROKER_DESK, 6).await;
    let fill = mails
        .iter()
        .find(|m| m.contains(&format!("/fill-order?order_id={order}")))
        .unwrap_or_else(|| panic!("A's fill e-mail in {mails:?}"));
    assert!(fill.lines().any(|x| x.trim() == "Account HAL-MACRO: 600 (HAL-MACRO book)"), "as allocated then: {fill}");

    // Billing shows each side's allocation.
    let (_, billing) = v.app.get("/api/billing", Some(&admin)).await;
    let side = |id: &str| billing["items"].as_array().unwrap().iter().find(|i| i["order_id"] == id).unwrap().clone();
    let mine = side(&order);
    assert_eq!(
        mine["allocations"],
        json!([{"account_id": rates, "code": "HAL-RATES", "name": "HAL-RATES book", "quantity": 1000}])
    );
    assert_eq!(mine["give_up_broker_name"], Value::Null);
    assert_eq!(
        (side(&other)["allocations"].clone(), side(&other)["give_up_broker_name"].clone()),
        (json!([]), Value::Null)
    );

    // Once its own broker confirmed the fill (it booked the trade), the allocation stands,
    // though the other side's is still to come (both orders PARTIAL_BROKER_FILLED).
    let fills = broker_links(&mails, "/fill-order");
    let (mine_first, theirs_then): (Vec<_>, Vec<_>) = fills.into_iter().partition(|(o, _)| *o == order);
    for (o, t) in mine_first.into_iter().chain(theirs_then) {
        let (s, e) = v.app.patch(&format!("/api/orders/{o}?token={t}"), None, json!({"filled": true})).await;
        assert_eq!(s, StatusCode::OK, "{e}");
        if o == order {
            assert_eq!(e["state"], "PARTIAL_BROKER_FILLED", "{e}");
            let (s, e) = v.app.put(&path, Some(&v.a), json!({"lines": [line(&macro_, 1000)]})).await;
            assert_eq!(
                (s, e["detail"].clone()),
                (StatusCode::CONFLICT, json!("This trade can no longer be allocated."))
            );
        }
    }
    let (s, e) = v.app.put(&path, Some(&v.a), json!({"lines": [line(&macro_, 1000)]})).await;
    assert_eq!((s, e["detail"].clone()), (StatusCode::CONFLICT, json!("This trade can no longer be allocated.")));
    assert_eq!(v.app.get(&path, Some(&v.a)).await.1["version"], 2);

    // Each version is in the action log, with what it replaced.
    let (_, logs) = v.app.get("/api/admin/action-logs?size=50&operation=allocate", Some(&admin)).await;
    let rows = logs["items"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{logs}");
    assert_eq!(rows[0]["details"]["before"]["version"], 1, "{}", rows[0]);
    v.app.stop().await;
}

async fn accounts_are_the_firms_and_the_venues(b: Backend) {
    let v = venue(b).await;
    let admin = v.app.admin_token().await;
    let halyard = company_of(&v, &v.a).await;
    let accounts = format!("/api/admin/companies/{halyard}/accounts");
    open_account(&v, &admin, &halyard, "HAL-1").await;
    // One code per firm; codes and names within their bounds.
    let (s, e) = v.app.post(&accounts, Some(&admin), json!({"code": "HAL-1", "name": "Again"})).await;
    assert_eq!(
        (s, e["detail"].clone()),
        (StatusCode::CONFLICT, json!("This company already has an account with this code"))
    );
    for body in [
        json!({"code": "", "name": "Book"}),
        json!({"code": "HAL 2", "name": "Book"}),
        json!({"code": "X".repeat(33), "name": "Book"}),
        json!({"code": "HAL-2", "name": " "}),
        json!({"code": "HAL-2", "name": "n".repeat(101)}),
    ] {
        let (s, e) = v.app.post(&accounts, Some(&admin), body.clone()).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}: {e}");
    }
    // Only a venue admin opens or changes one; an unknown company or account is not found.
    for token in [&v.a, &v.a_admin_limited] {
        let (s, _) = v.app.post(&accounts, Some(token), json!({"code": "HAL-3", "name": "Book"})).await;
        assert_eq!(s, StatusCode::FORBIDDEN);
    }
    let nobody = "00000000-0000-0000-0000-000000000000";
    let (s, _) = v
        .app
        .post(&format!("/api/admin/companies/{nobody}/accounts"), Some(&admin), json!({"code": "X", "name": "Y"}))
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, _) = v.app.patch(&format!("{accounts}/{nobody}"), Some(&admin), json!({"active": false})).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    // An order of no trade, or of nobody, has no allocation to read or write.
    let (s, _) = v.app.get(&format!("/api/orders/{nobody}/allocation"), Some(&v.a)).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    v.app.stop().await;
}
