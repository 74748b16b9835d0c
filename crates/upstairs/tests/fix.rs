#![allow(clippy::unwrap_used)]
//! The FIX gateway against a real QuickFIX initiator (`tests/peers/fix_peer.py`) on both
//! backends: a broker receives TradeCaptureReports and confirms by
//! TradeCaptureReportAck (beside the e-mail links); an execution system creates and
//! cancels parent orders and hears of their fills; sequence gaps both ways are recovered
//! by resend; malformed frames are answered or dropped, never fatal; the sessions screen's
//! call; Logons with an unknown CompID or a wrong password, refused alike, and failed
//! Logons counted per source address.
mod support;

use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::Duration;
use support::fix::*;
use support::venue::*;
use support::*;
use upstairs_fix::FixSettings;

on_both_backends!(
    a_broker_confirms_by_fix,
    an_execution_system_sends_parent_orders,
    sequence_gaps_are_filled_by_resend,
    malformed_messages_are_rejected_not_fatal,
    logons_are_authenticated,
    sessions_over_tls,
    a_broker_declines_and_a_late_ack_is_told,
    a_decline_by_link_cancels_every_report_sent_over_fix,
    logon_rules,
    failed_logons_lock_out_their_address_only,
    refused_logons_look_alike,
    a_dropped_session_pulls_the_orders_of_its_parents,
    a_broker_acknowledges_allocations_by_fix,
    exchange_prices_come_over_a_market_data_session,
    the_execution_system_is_pulled,
    market_data_over_tls,
);

/// Issue 30 (ADR 0049): one node at a time holds the market-data session; when it stops,
/// another takes it over, logs on and subscribes again (PostgreSQL: several nodes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_market_data_session_moves_to_another_node() {
    balanced_after(market_data_across_nodes()).await
}

/// Several nodes share one PostgreSQL; SQLite is one node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_company_is_logged_on_at_one_node_at_a_time() {
    balanced_after(one_session_across_nodes()).await
}

/// A report queued on one node reaches the session another node holds when it is told.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_reaches_the_session_another_node_holds() {
    balanced_after(report_across_nodes()).await
}

const BROKER_PW: &str = "Baltic-FIX-pass";
const FIRM_PW: &str = "Halyard-FIX-pass";

/// The venue with its FIX gateway on a free port; Baltic (the broker) has the CompID
/// BALTIC, Halyard (A's firm) HALYARD, and A is its EMS trader `T1`.
async fn fix_venue(b: Backend) -> (Venue, u16) {
    fix_venue_with(b, None).await
}

/// [`fix_venue`], with TLS on the FIX port when given a certificate and its key.
async fn fix_venue_with(b: Backend, tls: Option<(std::path::PathBuf, std::path::PathBuf)>) -> (Venue, u16) {
    let v = venue_with(b, |s| {
        s.fix = Some(FixSettings {
            bind: "127.0.0.1:0".into(),
            comp_id: "UPSTAIRS".into(),
            tls,
            outbox_poll: upstairs_fix::OUTBOX_POLL,
        });
    })
    .await;
    let admin = v.app.admin_token().await;
    let set = |id: String, body: Value| {
        let (app, admin) = (&v.app, admin.clone());
        async move {
            let (s, c) = app.patch(&format!("/api/admin/companies/{id}"), Some(&admin), body).await;
            assert_eq!(s, StatusCode::OK, "{c}");
            c
        }
    };
    let c = set(v.broker.clone(), json!({"fix_comp_id": "BALTIC", "fix_password": BROKER_PW})).await;
    assert_eq!((c["fix_comp_id"].clone(), c["fix_password_set"].clone()), (json!("BALTIC"), json!(true)));
    assert!(c.get("fix_password").is_none() && !c.to_string().contains(BROKER_PW), "{c}");
    let (_, me) = v.app.get("/api/users/me", Some(&v.a)).await;
    let (s, halyard) = v.app.get(&format!("/api/companies/{}", me["company_id"].as_str().unwrap()), Some(&v.a)).await;
    assert_eq!(s, StatusCode::OK, "{halyard}");
    set(halyard["company_id"].as_str().unwrap().into(), json!({"fix_comp_id": "HALYARD", "fix_password": FIRM_PW}))
        .await;
    let (s, u) = v
        .app
        .patch(
            &format!("/api/users/{}", me["user_id"].as_str().unwrap()),
            Some(&admin),
            json!({"ems_trader_id": "T1", "fix_integration": true}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{u}");
    let port = v.app.running.as_ref().unwrap().fix.as_ref().unwrap().local_addr().port();
    (v, port)
}

/// An execution system's ExecutionReport answering the venue's OrderMassStatusRequest
/// `request`: its order `cl_ord_id` for `trader`, in OrdStatus `status`, with `leaves`
/// of `quantity` still to work; the `n`th of `total`.
fn order_status(
    request: &str,
    (n, total): (usize, usize),
    cl_ord_id: &str,
    status: &str,
    side: &str,
    (quantity, leaves): (i64, i64),
    trader: &str,
) -> (Value, Value) {
    let fields = json!([
        [37, format!("EMS-{cl_ord_id}")],
        [11, cl_ord_id],
        [584, request],
        [911, total.to_string()],
        [912, if n == total { "Y" } else { "N" }],
        [17, format!("X-{request}-{cl_ord_id}")],
        [150, "I"],
        [39, status],
        [55, "Euribor 3M Dec26-Mar27"],
        [54, side],
        [38, quantity.to_string()],
        [151, leaves.to_string()],
        [14, (quantity - leaves).to_string()],
        [6, "0"]
    ]);
    let groups = json!([{"count": 453, "delim": 448, "entries": [[[448, trader], [447, "D"], [452, "11"]]]}]);
    (fields, groups)
}

/// Issue 30 (ADR 0050): 'Load from your execution system' asks the firm's live EMS
/// session for its working orders (OrderMassStatusRequest); the ExecutionReports that
/// answer become parent orders of the traders they name, or cancel those it no longer
/// works.
async fn the_execution_system_is_pulled(b: Backend) {
    let (v, port) = fix_venue(b).await;
    const PULL: &str = "/api/parent-orders/execution-system-pulls";
    // Without a live session the button says so; a firm without a CompID is told it has
    // none; an account that cannot trade cannot ask.
    let (s, e) = v.app.post(PULL, Some(&v.a), json!({})).await;
    let not_on = "Your execution system is not connected: its FIX session is not logged on. Try again once it is.";
    assert_eq!((s, e["detail"].clone()), (StatusCode::CONFLICT, json!(not_on)));
    let (s, e) = v.app.post(PULL, Some(&v.b), json!({})).await;
    let none = "Your firm has no execution system connected to the venue by FIX.";
    assert_eq!((s, e["detail"].clone()), (StatusCode::CONFLICT, json!(none)));
    let admin = v.app.admin_token().await;
    assert_eq!(v.app.post(PULL, Some(&admin), json!({})).await.0, StatusCode::FORBIDDEN);
    // No market-data session ever ran here.
    assert_eq!(v.app.get("/api/admin/fix-sessions", Some(&admin)).await.1["market_data"], Value::Null);

    let dir = temp_dir();
    let mut ems = FixPeer::spawn(port, "HALYARD", FIRM_PW, dir.path(), &[]);
    ems.logon().await;
    session_becomes(&v.app, &admin, "HALYARD", "LOGGED_ON").await;
    let (s, asked) = v.app.post(PULL, Some(&v.a), json!({})).await;
    assert_eq!(s, StatusCode::ACCEPTED, "{asked}");
    let request = asked["request_id"].as_str().unwrap().to_owned();
    // Audited, under the firm, by the trader who asked.
    let (_, logs) =
        v.app.get("/api/admin/action-logs?entity=company&operation=ems_orders_requested", Some(&admin)).await;
    assert_eq!(logs["total_items"], 1, "{logs}");
    assert_eq!(logs["items"][0]["details"]["request_id"], json!(request), "{logs}");
    let af = ems.expect("an OrderMassStatusRequest", WITHIN, |e| is_app(e, "AF")).await;
    assert_eq!((field(&af, 584), field(&af, 585).as_deref()), (Some(request.clone()), Some("7")), "{af}");

    // The answer: W1 new, W2 partly filled (its leaves are the parent's quantity), W3 for
    // a trader the venue does not know, D1 filled already (never a parent here).
    let answer = [
        ("W1", "0", "2", (1000, 1000), "T1"),
        ("W2", "1", "1", (2000, 1500), "T1"),
        ("W3", "0", "1", (1000, 1000), "NOBODY"),
        ("D1", "2", "2", (1000, 0), "T1"),
    ];
    for (n, (id, status, side, qty, trader)) in answer.iter().enumerate() {
        let (f, g) = order_status(&request, (n + 1, answer.len()), id, status, side, *qty, trader);
        ems.send("8", f, g).await;
    }
    let report = |id: &'static str| move |e: &Value| is_app(e, "8") && field(e, 11).as_deref() == Some(id);
    for id in ["W1", "W2"] {
        let new = ems.expect("ExecutionReport New", WITHIN, report(id)).await;
        assert_eq!((field(&new, 150).as_deref(), field(&new, 39).as_deref()), (Some("0"), Some("0")), "{new}");
    }
    let refused = ems.expect("ExecutionReport Rejected", WITHIN, report("W3")).await;
    assert_eq!(
        (field(&refused, 150).as_deref(), field(&refused, 58).as_deref()),
        (Some("8"), Some("Unknown trader NOBODY"))
    );
    let (_, listed) = v.app.get("/api/parent-orders", Some(&v.a)).await;
    let mut parents: Vec<(String, i64)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["direction"].as_str().unwrap().to_owned(), p["quantity"].as_i64().unwrap()))
        .collect();
    parents.sort();
    assert_eq!(parents, [("BUY".to_owned(), 1500), ("SELL".to_owned(), 1000)], "{listed}");
    assert!(ems.received("3").is_empty() && ems.received("j").is_empty(), "{}", ems.transcript());

    // Pulled again: W1 cancelled at the execution system is cancelled here; W2 and W3 as
    // before change nothing (no second New, no second rejection).
    let (s, again) = v.app.post(PULL, Some(&v.a), json!({})).await;
    assert_eq!(s, StatusCode::ACCEPTED, "{again}");
    let request = again["request_id"].as_str().unwrap().to_owned();
    ems.expect("a second OrderMassStatusRequest", WITHIN, |e| {
        is_app(e, "AF") && field(e, 584) == Some(request.clone())
    })
    .await;
    let answer = [("W1", "4", "2", (1000, 0), "T1"), answer[1], answer[2]];
    for (n, (id, status, side, qty, trader)) in answer.iter().enumerate() {
        let (f, g) = order_status(&request, (n + 1, answer.len()), id, status, side, *qty, trader);
        ems.send("8", f, g).await;
    }
    let cancelled = ems.expect("ExecutionReport Cancelled", WITHIN, report("W1")).await;
    assert_eq!(field(&cancelled, 150).as_deref(), Some("4"), "{cancelled}");
    // An empty answer names no order.
    let empty = json!([
        [37, "NONE"],
        [584, request],
        [911, "0"],
        [912, "Y"],
        [17, "X-none"],
        [150, "I"],
        [39, "0"],
        [54, "1"],
        [151, "0"],
        [14, "0"],
        [6, "0"]
    ]);
    ems.send("8", empty, json!([])).await;
    ems.drain(Duration::from_millis(500)).await;
    let by_id = |id: &str, exec: &str| {
        ems.received("8")
            .iter()
            .filter(|e| field(e, 11).as_deref() == Some(id) && field(e, 150).as_deref() == Some(exec))
            .count()
    };
    assert_eq!((by_id("W2", "0"), by_id("W3", "8"), by_id("D1", "0")), (1, 1, 0), "{}", ems.transcript());
    assert!(ems.received("3").is_empty() && ems.received("j").is_empty(), "{}", ems.transcript());
    let (_, listed) = v.app.get("/api/parent-orders?state=CANCELLED", Some(&v.a)).await;
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    ems.stop().await;
}

/// A's resting SELL of 1000 at 94.75 taken by B and accepted by A.
async fn a_match(v: &Venue) -> (Value, Value) {
    let sell = v.parent(&v.a, "SELL", 1000).await;
    let buy = rest_and_take(v, &sell, 1000).await;
    (sell, buy)
}

/// A rests 1000 of its SELL parent `sell` at 94.75; B takes `quantity` of it with a new
/// BUY parent of 1000 (returned), and A accepts.
async fn rest_and_take(v: &Venue, sell: &Value, quantity: i64) -> Value {
    let (s, resting) = v.child(&v.a, sell, 1000, p("94.75"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{resting}");
    let buy = v.parent(&v.b, "BUY", 1000).await;
    let (s, sent) = v
        .app
        .post(
            "/api/order-match-requests",
            Some(&v.b),
            json!({"requesting_parent_order_id": buy["parent_order_id"], "quantity": quantity, "price": p("94.75").0,
                   "requesting_broker_id": v.broker, "dry_run": false, "residual": false}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{sent}");
    let id = sent[0]["order_match_request_id"].as_str().unwrap();
    let (s, m) =
        v.app.patch(&format!("/api/order-match-requests/{id}"), Some(&v.a), json!({"state": "ACCEPTED"})).await;
    assert_eq!(s, StatusCode::OK, "{m}");
    buy
}

async fn child_states(v: &Venue, token: &str, parent: &Value) -> Vec<String> {
    children(v, token, parent).await.into_iter().map(|(s, _)| s).collect()
}

/// Polls until every child order of both parents is in `state`.
async fn both_in(v: &Venue, sell: &Value, buy: &Value, state: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (a, b) = (child_states(v, &v.a, sell).await, child_states(v, &v.b, buy).await);
        if a == [state] && b == [state] {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "A {a:?}, B {b:?}, want {state}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn a_broker_confirms_by_fix(b: Backend) {
    let (v, port) = fix_venue(b).await;
    let dir = temp_dir();
    let mut broker = FixPeer::spawn(port, "BALTIC", BROKER_PW, dir.path(), &["--auto-ack", "accept"]);
    broker.logon().await;
    let (sell, buy) = a_match(&v).await;

    // Both sides' orders went through Baltic: two reports, each acknowledged.
    let mut reports = Vec::new();
    for _ in 0..2 {
        reports.push(broker.expect("a trade report", WITHIN, |e| is_app(e, "AE")).await);
    }
    let ids: Vec<String> = reports.iter().map(|r| field(r, 571).unwrap()).collect();
    assert!(ids.iter().all(|id| id.ends_with("-A")), "{ids:?}");
    let sides: Vec<String> = reports.iter().map(|r| field(r, 54).unwrap()).collect();
    assert_eq!(sides.iter().filter(|s| *s == "1").count(), 1, "one buy, one sell: {sides:?}");
    for r in &reports {
        assert_eq!(field(r, 32).as_deref(), Some("1000"));
        assert_eq!(field(r, 31).as_deref(), Some("94.75"));
        assert_eq!(field(r, 55).as_deref(), Some("Euribor 3M Dec26-Mar27"));
        assert_eq!(field(r, 207).as_deref(), Some("I"));
        assert_eq!(field(r, 487).as_deref(), Some("0"));
        assert_eq!(fields(r, 452), ["1", "17", "3"], "executing firm, contra firm, client");
        assert_eq!(fields(r, 448)[..2], ["BALTIC".to_owned(), "Baltic".to_owned()]);
        assert_eq!(r["poss_dup"], false);
    }

    // Both accepted (BROKER_ACCEPTED): then the fill reports, acknowledged too, and the
    // trade is done.
    for _ in 0..2 {
        let r = broker
            .expect("a fill report", WITHIN, |e| is_app(e, "AE") && field(e, 571).is_some_and(|i| i.ends_with("-F")))
            .await;
        assert_eq!(field(&r, 487).as_deref(), Some("2"));
        assert!(field(&r, 572).is_some_and(|id| id.ends_with("-A")));
    }
    both_in(&v, &sell, &buy, "BROKER_FILLED").await;

    // The e-mail link, answered after FIX: told it was done.
    let mails = v.app.mails_to(BROKER_DESK, 2).await;
    let at = mails[0].find("/accept-order?order_id=").unwrap();
    let link: String = mails[0][at..].chars().take_while(|c| !c.is_whitespace() && *c != '"').collect();
    let query = link.split_once('?').unwrap().1;
    let param = |k: &str| query.split('&').find_map(|kv| kv.strip_prefix(&format!("{k}="))).unwrap().to_owned();
    let (s, e) = v
        .app
        .patch(&format!("/api/orders/{}?token={}", param("order_id"), param("token")), None, json!({"accepted": true}))
        .await;
    assert_eq!((s, e["detail"].clone()), (StatusCode::CONFLICT, json!("Order already accepted")));

    // Exactly four reports, none resent; the screen shows the session logged on.
    broker.drain(Duration::from_millis(300)).await;
    assert_eq!(broker.received("AE").len(), 4, "{}", broker.transcript());
    let admin = v.app.admin_token().await;
    let baltic = seqs_agree(&v.app, &admin, "BALTIC", &mut broker).await;
    assert_eq!((baltic["state"].clone(), baltic["company_name"].clone()), (json!("LOGGED_ON"), json!("Baltic")));
    assert!(baltic["last_message_at"].is_string(), "{baltic}");
    assert_eq!(v.app.get("/api/admin/fix-sessions", Some(&v.a)).await.0, StatusCode::FORBIDDEN);
    broker.stop().await;
    logged_off(&v.app, &admin, "BALTIC").await;
    // The logon and the logoff are in the action log, beside the broker's answers.
    let (_, logs) = v.app.get("/api/admin/action-logs?size=200", Some(&admin)).await;
    let ops: Vec<(String, String)> = logs["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["entity"].as_str().unwrap().to_owned(), l["operation"].as_str().unwrap().to_owned()))
        .collect();
    for want in
        [("fix_session", "logon"), ("fix_session", "logoff"), ("order", "broker_accepted"), ("order", "broker_filled")]
    {
        assert!(ops.contains(&(want.0.to_owned(), want.1.to_owned())), "no {want:?} in {ops:?}");
    }
    v.app.stop().await;
}

async fn an_execution_system_sends_parent_orders(b: Backend) {
    let (v, port) = fix_venue(b).await;
    let dir = temp_dir();
    let mut ems = FixPeer::spawn(port, "HALYARD", FIRM_PW, dir.path(), &[]);
    ems.logon().await;
    let symbol = "Euribor 3M Dec26-Mar27";

    // A parent order for trader T1, on A's dashboard at once.
    let (f, g) = new_order("C1", "2", 1000, symbol, "T1");
    ems.send("D", f.clone(), g.clone()).await;
    let new =
        ems.expect("ExecutionReport New", WITHIN, |e| is_app(e, "8") && field(e, 11).as_deref() == Some("C1")).await;
    assert_eq!((field(&new, 150).as_deref(), field(&new, 39).as_deref()), (Some("0"), Some("0")), "{new}");
    let parent_id = field(&new, 37).unwrap();
    let (s, parent) = v.app.get(&format!("/api/parent-orders/{parent_id}"), Some(&v.a)).await;
    assert_eq!(s, StatusCode::OK, "{parent}");
    assert_eq!((parent["direction"].clone(), parent["quantity"].clone()), (json!("SELL"), json!(1000)));

    // The same ClOrdID again makes nothing new: its state is reported again.
    ems.send("D", f, g).await;
    let again =
        ems.expect("the state again", WITHIN, |e| is_app(e, "8") && field(e, 150).as_deref() == Some("I")).await;
    assert_eq!(field(&again, 37), Some(parent_id.clone()));
    let (_, listed) = v.app.get("/api/parent-orders", Some(&v.a)).await;
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");

    // Refusals, each with the reason.
    for (id, trader, qty, why) in
        [("C2", "NOBODY", 1000, "Unknown trader NOBODY"), ("C3", "T1", 100, "The minimum block size is 500")]
    {
        let (f, g) = new_order(id, "1", qty, symbol, trader);
        ems.send("D", f, g).await;
        let r = ems.expect("a rejection", WITHIN, |e| is_app(e, "8") && field(e, 11).as_deref() == Some(id)).await;
        assert_eq!((field(&r, 150).as_deref(), field(&r, 39).as_deref()), (Some("8"), Some("8")), "{r}");
        assert_eq!(field(&r, 58).as_deref(), Some(why));
    }
    // A refused ClOrdID stays refused, even sent again with what would now pass.
    let (f, g) = new_order("C3", "1", 1000, symbol, "T1");
    ems.send("D", f, g).await;
    let r = ems.expect("the same rejection", WITHIN, |e| is_app(e, "8") && field(e, 11).as_deref() == Some("C3")).await;
    assert_eq!(field(&r, 58).as_deref(), Some("The minimum block size is 500"), "{r}");
    // MinQty (110): the parent's minimum execution size (ADR 0041), within its rules.
    let with_min_qty = |id: &str, min_qty: &str| {
        let (mut f, g) = new_order(id, "1", 1000, symbol, "T1");
        f.as_array_mut().unwrap().push(json!([110, min_qty]));
        (f, g)
    };
    let (f, g) = with_min_qty("C7", "600");
    ems.send("D", f, g).await;
    let new = ems.expect("New", WITHIN, |e| is_app(e, "8") && field(e, 11).as_deref() == Some("C7")).await;
    assert_eq!(field(&new, 39).as_deref(), Some("0"), "{new}");
    let (_, p7) = v.app.get(&format!("/api/parent-orders/{}", field(&new, 37).unwrap()), Some(&v.a)).await;
    assert_eq!(p7["min_execution"], json!(600), "{p7}");
    for (id, min_qty, why) in [
        ("C8", "1500", "MinQty (110): Must not exceed the quantity"),
        ("C9", "400", "MinQty (110): Min block size: 500"),
        ("C10", "600.5", "MinQty (110) must be a whole number of lots above 0"),
    ] {
        let (f, g) = with_min_qty(id, min_qty);
        ems.send("D", f, g).await;
        let r = ems.expect("a rejection", WITHIN, |e| is_app(e, "8") && field(e, 11).as_deref() == Some(id)).await;
        assert_eq!((field(&r, 39).as_deref(), field(&r, 58).as_deref()), (Some("8"), Some(why)), "{r}");
    }
    let (f, g) = new_order("C4", "1", 1000, "NO SUCH THING", "T1");
    ems.send("D", f, g).await;
    let r = ems.expect("a rejection", WITHIN, |e| is_app(e, "8") && field(e, 11).as_deref() == Some("C4")).await;
    assert_eq!(field(&r, 58).as_deref(), Some("Unknown instrument"));

    // Matched: the EMS hears of the fill; a cancel is then refused.
    rest_and_take(&v, &parent, 500).await;
    let fill = ems.expect("a fill", WITHIN, |e| is_app(e, "8") && field(e, 150).as_deref() == Some("F")).await;
    assert_eq!(field(&fill, 6).as_deref(), Some("94.75"), "AvgPx: {fill}");
    assert_eq!(
        (field(&fill, 39), field(&fill, 14), field(&fill, 151), field(&fill, 32), field(&fill, 31)),
        (Some("1".into()), Some("500".into()), Some("500".into()), Some("500".into()), Some("94.75".into()))
    );
    ems.send("F", json!([[41, "C1"], [11, "X1"], [54, "2"], [55, symbol], [60, "20260303-10:00:00.000"]]), json!([]))
        .await;
    let no = ems.expect("a cancel reject", WITHIN, |e| is_app(e, "9")).await;
    assert_eq!((field(&no, 102).as_deref(), field(&no, 39).as_deref()), (Some("0"), Some("1")), "{no}");
    assert_eq!(field(&no, 58).as_deref(), Some("A parent order with matched quantity cannot be cancelled."));
    ems.send("F", json!([[41, "NOPE"], [11, "X2"], [54, "2"], [55, symbol], [60, "20260303-10:00:00.000"]]), json!([]))
        .await;
    let no = ems.expect("a cancel reject", WITHIN, |e| is_app(e, "9")).await;
    assert_eq!((field(&no, 102).as_deref(), field(&no, 58).as_deref()), (Some("1"), Some("Unknown order")));

    // A parent with nothing matched is cancelled: the EMS hears it, the trader sees it.
    let (f, g) = new_order("C5", "1", 500, symbol, "T1");
    ems.send("D", f, g).await;
    let new = ems.expect("New", WITHIN, |e| is_app(e, "8") && field(e, 11).as_deref() == Some("C5")).await;
    let second = field(&new, 37).unwrap();
    ems.send("F", json!([[41, "C5"], [11, "X3"], [54, "1"], [55, symbol], [60, "20260303-10:00:00.000"]]), json!([]))
        .await;
    let gone = ems.expect("Canceled", WITHIN, |e| is_app(e, "8") && field(e, 150).as_deref() == Some("4")).await;
    assert_eq!(
        (field(&gone, 11), field(&gone, 41), field(&gone, 39)),
        (Some("X3".into()), Some("C5".into()), Some("4".into()))
    );
    let (_, p2) = v.app.get(&format!("/api/parent-orders/{second}"), Some(&v.a)).await;
    assert_eq!(p2["state"], "CANCELLED", "{p2}");
    // Cancelled again (a resend): the order's state, not a reject.
    ems.send("F", json!([[41, "C5"], [11, "X4"], [54, "1"], [55, symbol], [60, "20260303-10:00:00.000"]]), json!([]))
        .await;
    let state = ems
        .expect("the state", WITHIN, |e| {
            is_app(e, "8") && field(e, 150).as_deref() == Some("I") && field(e, 37) == Some(second.clone())
        })
        .await;
    assert_eq!(field(&state, 39).as_deref(), Some("4"), "{state}");
    // A parent cancelled on screen: the execution system hears it too.
    let (f, g) = new_order("C6", "2", 500, symbol, "T1");
    ems.send("D", f, g).await;
    let new = ems.expect("New", WITHIN, |e| is_app(e, "8") && field(e, 11).as_deref() == Some("C6")).await;
    let third = field(&new, 37).unwrap();
    assert_eq!(v.app.delete(&format!("/api/parent-orders/{third}"), Some(&v.a)).await.0, StatusCode::NO_CONTENT);
    let gone = ems
        .expect("Canceled", WITHIN, |e| {
            is_app(e, "8") && field(e, 150).as_deref() == Some("4") && field(e, 37) == Some(third.clone())
        })
        .await;
    assert_eq!(field(&gone, 11).as_deref(), Some("C6"), "{gone}");
    // No session-level Reject was ever needed.
    assert!(ems.events.iter().all(|e| e["msg_type"] != "3"), "{}", ems.transcript());
    ems.stop().await;
    v.app.stop().await;
}

async fn sequence_gaps_are_filled_by_resend(b: Backend) {
    let (v, port) = fix_venue(b).await;
    let dir = temp_dir();
    let mut ems = FixPeer::spawn(port, "HALYARD", FIRM_PW, dir.path(), &[]);
    ems.logon().await;
    let symbol = "Euribor 3M Dec26-Mar27";
    let (f, g) = new_order("G1", "1", 500, symbol, "T1");
    ems.send("D", f, g).await;
    ems.expect("New", WITHIN, |e| is_app(e, "8") && field(e, 11).as_deref() == Some("G1")).await;

    // The peer skips five numbers: the venue asks for them and the peer fills the gap.
    let (out, _) = ems.seq().await;
    ems.command(json!({"cmd": "set_next_sender", "seq": out + 5})).await;
    let (f, g) = new_order("G2", "1", 500, symbol, "T1");
    ems.send("D", f, g).await;
    let asked = ems.expect("a ResendRequest", WITHIN, |e| e["event"] == "admin" && e["msg_type"] == "2").await;
    assert_eq!(field(&asked, 7), Some(out.to_string()), "{asked}");
    ems.expect("a gap fill", WITHIN, |e| e["event"] == "sent" && e["msg_type"] == "4").await;
    ems.expect("New", WITHIN, |e| is_app(e, "8") && field(e, 11).as_deref() == Some("G2")).await;

    // The peer forgets what the venue sent: it asks again, and the venue resends the
    // reports from its database with PossDup.
    let (_, expected) = ems.seq().await;
    ems.command(json!({"cmd": "set_next_target", "seq": expected - 2})).await;
    let (f, g) = new_order("G3", "1", 500, symbol, "T1");
    ems.send("D", f, g).await;
    ems.expect("our ResendRequest", WITHIN, |e| e["event"] == "sent" && e["msg_type"] == "2").await;
    let resent = ems.expect("a resent report", WITHIN, |e| is_app(e, "8") && e["poss_dup"] == true).await;
    // (Which one depends on what else was numbered meanwhile, heartbeats included.)
    assert!(matches!(field(&resent, 11).as_deref(), Some("G1" | "G2")), "{resent}");
    ems.expect("New", WITHIN, |e| is_app(e, "8") && field(e, 11).as_deref() == Some("G3")).await;
    let (_, listed) = v.app.get("/api/parent-orders", Some(&v.a)).await;
    assert_eq!(listed.as_array().unwrap().len(), 3, "one parent per ClOrdID: {listed}");
    ems.stop().await;
    v.app.stop().await;
}

async fn malformed_messages_are_rejected_not_fatal(b: Backend) {
    let (v, port) = fix_venue(b).await;
    let within = Duration::from_secs(10);
    let mut c = RawFix::connect(port, "HALYARD").await;
    c.send("A", &[(98, "0"), (108, "30"), (554, FIRM_PW)]).await;
    c.expect("A", within).await;

    // Application messages that cannot be read: a session Reject naming the problem.
    c.send("D", &[(54, "1"), (38, "500"), (40, "1"), (55, "X"), (60, "20260303-10:00:00")]).await;
    let r = c.expect("3", within).await;
    assert_eq!((tag(&r, 371).as_deref(), tag(&r, 373).as_deref()), (Some("11"), Some("1")), "{r:?}");
    c.send("AR", &[(571, "not-a-report"), (939, "0")]).await;
    let r = c.expect("3", within).await;
    assert_eq!(tag(&r, 371).as_deref(), Some("571"), "{r:?}");
    c.send("AR", &[(571, "x-A"), (939, "7")]).await;
    let r = c.expect("3", within).await;
    assert_eq!((tag(&r, 371).as_deref(), tag(&r, 373).as_deref()), (Some("939"), Some("5")), "{r:?}");
    c.send("ZZ", &[(58, "what is this")]).await;
    let r = c.expect("3", within).await;
    assert_eq!(tag(&r, 373).as_deref(), Some("11"), "{r:?}");

    // A NewOrderSingle the data dictionary refuses never reaches the engine: a malformed
    // quantity, an unknown tag, a HandlInst out of range. The same order, sound, makes
    // the one parent.
    let order = |qty: &'static str, extra: &[(u32, &'static str)]| {
        let mut f = vec![(11, "M1"), (54, "1"), (38, qty), (40, "1"), (55, "Euribor 3M Dec26-Mar27")];
        f.extend_from_slice(&[(60, "20260303-10:00:00.000"), (453, "1"), (448, "T1"), (447, "D"), (452, "11")]);
        f.extend_from_slice(extra);
        f
    };
    for (body, ref_tag, reason) in [
        (order("+200.00", &[]), "38", "6"),
        (order("1000", &[(999, "x")]), "999", "0"),
        (order("1000", &[(21, "4")]), "21", "5"),
    ] {
        c.send("D", &body).await;
        let r = c.expect("3", within).await;
        assert_eq!((tag(&r, 371).as_deref(), tag(&r, 373).as_deref()), (Some(ref_tag), Some(reason)), "{r:?}");
    }
    let (_, listed) = v.app.get("/api/parent-orders", Some(&v.a)).await;
    assert_eq!(listed.as_array().unwrap().len(), 0, "{listed}");
    c.send("D", &order("1000", &[])).await;
    let new = c.expect("8", within).await;
    assert_eq!((tag(&new, 11).as_deref(), tag(&new, 150).as_deref()), (Some("M1"), Some("0")), "{new:?}");
    let (_, listed) = v.app.get("/api/parent-orders", Some(&v.a)).await;
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");

    // Garbage and a frame with a wrong checksum are dropped; the session goes on.
    c.write(b"this is not FIX at all\x01").await;
    let mut bad = frame(&[(35, "0"), (34, "99"), (49, "HALYARD"), (52, "20260303-10:00:00"), (56, "UPSTAIRS")]);
    let n = bad.len();
    bad[n - 2] = if bad[n - 2] == b'0' { b'1' } else { b'0' };
    c.write(&bad).await;
    c.send("1", &[(112, "still-there")]).await;
    let hb = c.expect("0", within).await;
    assert_eq!(tag(&hb, 112).as_deref(), Some("still-there"), "{hb:?}");
    // The venue still serves HTTP, and the session is still the one logged on.
    assert_eq!(v.app.get("/readyz", None).await.0, StatusCode::OK);
    v.app.stop().await;
}

async fn logons_are_authenticated(b: Backend) {
    let (v, port) = fix_venue(b).await;
    let within = Duration::from_secs(10);
    // An unknown CompID and a wrong password: nothing is said to someone who cannot prove
    // who they are (`refused_logons_look_alike`).
    let mut c = RawFix::connect(port, "STRANGER").await;
    c.send("A", &[(98, "0"), (108, "30"), (554, "whatever-pass")]).await;
    assert!(c.next(within).await.is_none(), "closed without a reply");
    let mut c = RawFix::connect(port, "BALTIC").await;
    c.send("A", &[(98, "0"), (108, "30"), (554, "wrong-password")]).await;
    assert!(c.next(within).await.is_none(), "closed without a reply");
    // The right one logs on.
    let mut c = RawFix::connect(port, "BALTIC").await;
    c.send("A", &[(98, "0"), (108, "30"), (554, BROKER_PW)]).await;
    let ack = c.expect("A", within).await;
    assert_eq!((tag(&ack, 49).as_deref(), tag(&ack, 56).as_deref()), (Some("UPSTAIRS"), Some("BALTIC")));
    // A company's CompID must be plain and unique; its password at least 8 characters.
    let admin = v.app.admin_token().await;
    for (body, field_name) in
        [(json!({"fix_comp_id": "A B"}), "fix_comp_id"), (json!({"fix_password": "short"}), "fix_password")]
    {
        let (s, e) = v.app.patch(&format!("/api/admin/companies/{}", v.broker), Some(&admin), body).await;
        assert_eq!((s, e["errors"][0]["field"].clone()), (StatusCode::BAD_REQUEST, json!(field_name)), "{e}");
    }
    let (_, me) = v.app.get("/api/users/me", Some(&v.b)).await;
    let (s, e) = v
        .app
        .patch(
            &format!("/api/admin/companies/{}", me["company_id"].as_str().unwrap()),
            Some(&admin),
            json!({"fix_comp_id": "BALTIC"}),
        )
        .await;
    assert_eq!((s, e["errors"][0]["field"].clone()), (StatusCode::CONFLICT, json!("fix_comp_id")), "{e}");
    v.app.stop().await;
}

/// An authority (RSA, as QuickFIX 1.15's TLS takes no other) and a certificate it signs
/// for 127.0.0.1 and localhost, made by openssl in `dir`: (authority, certificate, key).
fn authority_and_leaf(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let at = |f: &str| dir.join(f);
    let ext = at("leaf.ext");
    std::fs::write(&ext, "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n").unwrap();
    let openssl = |args: &[&std::ffi::OsStr]| {
        let ok = std::process::Command::new("openssl")
            .args(args)
            .stderr(std::process::Stdio::null())
            .status()
            .expect("openssl")
            .success();
        assert!(ok, "openssl {args:?}");
    };
    let s = |v: &'static str| std::ffi::OsStr::new(v);
    let (ca, ca_key, leaf, key, csr) = (at("ca.pem"), at("ca.key"), at("leaf.pem"), at("leaf.key"), at("leaf.csr"));
    openssl(&[
        s("req"),
        s("-x509"),
        s("-newkey"),
        s("rsa:2048"),
        s("-nodes"),
        s("-days"),
        s("2"),
        s("-subj"),
        s("/CN=Test market-data CA"),
        s("-keyout"),
        ca_key.as_os_str(),
        s("-out"),
        ca.as_os_str(),
    ]);
    openssl(&[
        s("req"),
        s("-newkey"),
        s("rsa:2048"),
        s("-nodes"),
        s("-subj"),
        s("/CN=127.0.0.1"),
        s("-keyout"),
        key.as_os_str(),
        s("-out"),
        csr.as_os_str(),
    ]);
    openssl(&[
        s("x509"),
        s("-req"),
        s("-in"),
        csr.as_os_str(),
        s("-CA"),
        ca.as_os_str(),
        s("-CAkey"),
        ca_key.as_os_str(),
        s("-CAcreateserial"),
        s("-days"),
        s("2"),
        s("-extfile"),
        ext.as_os_str(),
        s("-out"),
        leaf.as_os_str(),
    ]);
    (ca, leaf, key)
}

/// Issue 30 (ADR 0049): the market-data session over TLS to a QuickFIX provider that
/// speaks only TLS; a provider whose certificate the venue does not trust is never
/// logged on to.
async fn market_data_over_tls(b: Backend) {
    let pki = temp_dir();
    let (ca, cert, key) = authority_and_leaf(pki.path());
    let (c, k) = (cert.to_string_lossy().into_owned(), key.to_string_lossy().into_owned());
    let mut provider = MdProvider::start_with("md-pass", &["--tls", "--cert", &c, "--key", &k]).await;
    let port = provider.port;
    let tls = |ca: std::path::PathBuf| upstairs_fix::market_data::MarketDataTls { ca, server_name: None };
    let v = venue_with(b, |s| {
        let mut m = md_settings(port);
        m.tls = Some(tls(ca.clone()));
        s.market_data = Some(m);
    })
    .await;
    provider.expect("logon", |_| true).await;
    let admin = v.app.admin_token().await;
    let path = format!("/api/admin/instruments/{}", v.instrument);
    assert_eq!(v.app.patch(&path, Some(&admin), json!({"exchange_instrument_id": "ERZ6"})).await.0, StatusCode::OK);
    provider.expect("subscribed", |e| e["symbols"] == json!(["ERZ6"])).await;
    provider.command(json!({"cmd": "price", "symbol": "ERZ6", "bid": "94.71", "offer": "94.81"})).await;
    band_becomes(&v, (94.71, 94.81)).await;
    v.app.stop().await;

    // Another authority: the handshake fails, the venue never logs on, and says why.
    let other = temp_dir();
    let (stranger, _, _) = authority_and_leaf(other.path());
    let v = venue_with(b, |s| {
        let mut m = md_settings(port);
        m.tls = Some(tls(stranger.clone()));
        s.market_data = Some(m);
    })
    .await;
    // Several attempts (the backoff starts at half a second) within three seconds.
    let until = tokio::time::Instant::now() + Duration::from_secs(3);
    while let Some(e) = provider.peer.next_json(until.saturating_duration_since(tokio::time::Instant::now())).await {
        assert_ne!(e["event"], "logon", "{e}");
    }
    let admin = v.app.admin_token().await;
    let (_, list) = v.app.get("/api/admin/fix-sessions", Some(&admin)).await;
    assert_eq!(list["market_data"], Value::Null, "never logged on: {list}");
    provider.command(json!({"cmd": "stop"})).await;
    v.app.stop().await;
}

async fn sessions_over_tls(b: Backend) {
    // A self-signed P-256 certificate for 127.0.0.1, made by openssl.
    let pki = temp_dir();
    let (cert, key) = (pki.path().join("cert.pem"), pki.path().join("key.pem"));
    let made = std::process::Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"])
        .args(["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("openssl");
    assert!(made.success());
    let (v, port) = fix_venue_with(b, Some((cert.clone(), key))).await;
    let dir = temp_dir();
    let ca = cert.to_string_lossy().into_owned();
    let mut ems = FixPeer::spawn(port, "HALYARD", FIRM_PW, dir.path(), &["--tls", "--ca", &ca]);
    ems.logon().await;
    let (f, g) = new_order("T1-1", "1", 500, "Euribor 3M Dec26-Mar27", "T1");
    ems.send("D", f, g).await;
    let new = ems.expect("New", WITHIN, |e| is_app(e, "8") && field(e, 11).as_deref() == Some("T1-1")).await;
    assert_eq!(field(&new, 150).as_deref(), Some("0"), "{new}");
    ems.stop().await;
    // In clear text, the TLS port says nothing and hangs up.
    let mut c = RawFix::connect(port, "BALTIC").await;
    c.send("A", &[(98, "0"), (108, "30"), (554, BROKER_PW)]).await;
    assert!(c.next(Duration::from_secs(10)).await.is_none());
    v.app.stop().await;
}

/// A broker declining by FIX breaks the trade down, and the execution system that sent the
/// parent hears it (Trade Cancel, its quantity back); an ack after the e-mail link answered
/// is told why it changed nothing.
async fn a_broker_declines_and_a_late_ack_is_told(b: Backend) {
    let (v, port) = fix_venue(b).await;
    let (d1, d2) = (temp_dir(), temp_dir());
    let mut ems = FixPeer::spawn(port, "HALYARD", FIRM_PW, d1.path(), &[]);
    let mut broker = FixPeer::spawn(port, "BALTIC", BROKER_PW, d2.path(), &[]);
    ems.logon().await;
    broker.logon().await;
    let symbol = "Euribor 3M Dec26-Mar27";

    // A's parent from the EMS rests and is taken in full.
    let (f, g) = new_order("D1", "2", 1000, symbol, "T1");
    ems.send("D", f, g).await;
    let new = ems.expect("New", WITHIN, |e| is_app(e, "8") && field(e, 11).as_deref() == Some("D1")).await;
    let (_, sell) = v.app.get(&format!("/api/parent-orders/{}", field(&new, 37).unwrap()), Some(&v.a)).await;
    let buy = rest_and_take(&v, &sell, 1000).await;
    let fill = ems.expect("the fill", WITHIN, |e| is_app(e, "8") && field(e, 150).as_deref() == Some("F")).await;
    assert_eq!(
        (field(&fill, 39), field(&fill, 14), field(&fill, 151)),
        (Some("2".into()), Some("1000".into()), Some("0".into()))
    );

    // B's side: accepted by e-mail link first. Then the broker's FIX ack for it changes
    // nothing and says why.
    let reports = [
        broker.expect("a report", WITHIN, |e| is_app(e, "AE")).await,
        broker.expect("a report", WITHIN, |e| is_app(e, "AE")).await,
    ];
    let buy_report = reports.iter().find(|r| field(r, 54).as_deref() == Some("1")).unwrap();
    let sell_report = reports.iter().find(|r| field(r, 54).as_deref() == Some("2")).unwrap();
    let mails = v.app.mails_to(BROKER_DESK, 2).await;
    let b_order = field(buy_report, 37).unwrap();
    let mail = mails.iter().find(|m| m.contains(&format!("order_id={b_order}"))).unwrap();
    let at = mail.find("token=").unwrap() + "token=".len();
    let token: String =
        mail[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').collect();
    let (s, _) = v.app.patch(&format!("/api/orders/{b_order}?token={token}"), None, json!({"accepted": true})).await;
    assert_eq!(s, StatusCode::OK);
    let ack = |report: &Value, status: &str| {
        json!([[571, field(report, 571).unwrap()], [939, status], [150, "F"], [55, symbol]])
    };
    broker.send("AR", ack(buy_report, "0"), json!([])).await;
    let told = broker.expect("a business reject", WITHIN, |e| is_app(e, "j")).await;
    assert_eq!(
        (field(&told, 372).as_deref(), field(&told, 58).as_deref()),
        (Some("AR"), Some("Order already accepted")),
        "{told}"
    );

    // The broker declines A's side by FIX: the trade breaks down, and the EMS hears that
    // its parent works again.
    broker.send("AR", ack(sell_report, "1"), json!([])).await;
    let undone =
        ems.expect("a trade cancel", WITHIN, |e| is_app(e, "8") && field(e, 150).as_deref() == Some("H")).await;
    assert_eq!(
        (field(&undone, 39), field(&undone, 14), field(&undone, 151), field(&undone, 6)),
        (Some("0".into()), Some("0".into()), Some("1000".into()), Some("0".into())),
        "{undone}"
    );
    let (_, now) = v.app.get(&format!("/api/parent-orders/{}", field(&new, 37).unwrap()), Some(&v.a)).await;
    assert_eq!(now["state"], "ACTIVE", "{now}");
    assert_eq!(children(&v, &v.b, &buy).await, vec![("BROKER_REJECTED".to_owned(), 1000)]);
    // The other side's report (B's, accepted before) is cancelled: the trade does not go
    // ahead (TradeReportTransType 1, naming the report it cancels).
    let cancel = broker.expect("a cancel", WITHIN, |e| is_app(e, "AE") && field(e, 487).as_deref() == Some("1")).await;
    let b_report = field(buy_report, 571).unwrap();
    assert_eq!(
        (field(&cancel, 571), field(&cancel, 572), field(&cancel, 54), field(&cancel, 32)),
        (Some(format!("{b_report}-C")), Some(b_report), Some("1".into()), Some("1000".into())),
        "{cancel}"
    );
    // Its ack changes nothing and is not refused: the next thing the broker hears is the
    // answer to a late ack of the declined report.
    broker.send("AR", ack(&cancel, "0"), json!([])).await;
    broker.send("AR", ack(sell_report, "0"), json!([])).await;
    let sell_id = field(sell_report, 571);
    broker.expect("the late ack's reject", WITHIN, |e| is_app(e, "j") && field(e, 379) == sell_id).await;
    let cancel_id = field(&cancel, 571);
    let refused: Vec<&Value> = broker
        .events
        .iter()
        .filter(|e| (e["event"] == "admin" && e["msg_type"] == "3") || (is_app(e, "j") && field(e, 379) == cancel_id))
        .collect();
    assert!(refused.is_empty(), "the cancel's ack was refused: {refused:?}");
    ems.stop().await;
    broker.stop().await;
    v.app.stop().await;
}

/// A broker on FIX that declines by its e-mail link instead: both sides' reports it was
/// sent are cancelled, its own included (it holds both, being both sides' broker).
async fn a_decline_by_link_cancels_every_report_sent_over_fix(b: Backend) {
    let (v, port) = fix_venue(b).await;
    let dir = temp_dir();
    let mut broker = FixPeer::spawn(port, "BALTIC", BROKER_PW, dir.path(), &[]);
    broker.logon().await;
    let sell = v.parent(&v.a, "SELL", 1000).await;
    rest_and_take(&v, &sell, 1000).await;
    let reports = [
        broker.expect("a report", WITHIN, |e| is_app(e, "AE")).await,
        broker.expect("a report", WITHIN, |e| is_app(e, "AE")).await,
    ];
    let mails = v.app.mails_to(BROKER_DESK, 2).await;
    let a_order = field(reports.iter().find(|r| field(r, 54).as_deref() == Some("2")).unwrap(), 37).unwrap();
    let mail = mails.iter().find(|m| m.contains(&format!("order_id={a_order}"))).unwrap();
    let at = mail.find("token=").unwrap() + "token=".len();
    let token: String =
        mail[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').collect();
    let (s, _) = v.app.patch(&format!("/api/orders/{a_order}?token={token}"), None, json!({"accepted": false})).await;
    assert_eq!(s, StatusCode::OK);
    let mut cancelled = Vec::new();
    for _ in 0..2 {
        let c = broker.expect("a cancel", WITHIN, |e| is_app(e, "AE") && field(e, 487).as_deref() == Some("1")).await;
        assert_eq!(field(&c, 571), field(&c, 572).map(|r| format!("{r}-C")), "{c}");
        cancelled.push(field(&c, 572).unwrap());
    }
    cancelled.sort();
    let mut sent: Vec<String> = reports.iter().map(|r| field(r, 571).unwrap()).collect();
    sent.sort();
    assert_eq!(cancelled, sent, "both reports are cancelled");
    broker.stop().await;
    v.app.stop().await;
}

/// A Logon's ResetSeqNumFlag is honoured only where the company allows it; one company
/// has one session; five wrong passwords make its Logons from that address wait a minute
/// unheard.
async fn logon_rules(b: Backend) {
    let (v, port) = fix_venue(b).await;
    let within = Duration::from_secs(10);
    let logon = |reset: bool, pw: &'static str| {
        let mut f = vec![(98, "0"), (108, "30"), (554, pw)];
        if reset {
            f.push((141, "Y"));
        }
        f
    };
    let mut c = RawFix::connect(port, "BALTIC").await;
    c.send("A", &logon(true, BROKER_PW)).await;
    assert!(c.next(within).await.is_none(), "a reset is not allowed for Baltic");
    let admin = v.app.admin_token().await;
    let (s, _) = v
        .app
        .patch(&format!("/api/admin/companies/{}", v.broker), Some(&admin), json!({"fix_reset_on_logon": true}))
        .await;
    assert_eq!(s, StatusCode::OK);
    let mut c = RawFix::connect(port, "BALTIC").await;
    c.send("A", &logon(true, BROKER_PW)).await;
    let ack = c.expect("A", within).await;
    assert_eq!((tag(&ack, 141).as_deref(), tag(&ack, 34).as_deref()), (Some("Y"), Some("1")), "{ack:?}");
    // The same company under a second CompID cannot log on beside it.
    let (_, me) = v.app.get("/api/users/me", Some(&v.a)).await;
    let firm = me["company_id"].as_str().unwrap().to_owned();
    let mut ems = RawFix::connect(port, "HALYARD").await;
    ems.send("A", &logon(false, FIRM_PW)).await;
    ems.expect("A", within).await;
    let (s, _) =
        v.app.patch(&format!("/api/admin/companies/{firm}"), Some(&admin), json!({"fix_comp_id": "HALYARD2"})).await;
    assert_eq!(s, StatusCode::OK);
    let mut second = RawFix::connect(port, "HALYARD2").await;
    second.send("A", &logon(false, FIRM_PW)).await;
    assert!(second.next(within).await.is_none(), "one session per company");
    // Five wrong passwords: the right one is not even heard for a while.
    for _ in 0..5 {
        let mut c = RawFix::connect(port, "HALYARD2").await;
        c.send("A", &logon(false, "wrong-password")).await;
        assert!(c.next(within).await.is_none());
    }
    ems.send("5", &[]).await;
    ems.expect("5", within).await;
    let mut c = RawFix::connect(port, "HALYARD2").await;
    c.send("A", &logon(false, FIRM_PW)).await;
    assert!(c.next(within).await.is_none(), "locked out for a minute");
    v.app.stop().await;
}

/// A Logon for `sender` with `password` from the source address `source`: how the venue
/// ended the connection (within a deadline).
async fn refused_from(port: u16, sender: &str, password: &str, source: &str) -> Closed {
    let mut c = RawFix::connect_from(port, sender, source).await;
    c.send("A", &[(98, "0"), (108, "30"), (554, password)]).await;
    c.until_closed(Duration::from_secs(10)).await.unwrap_or_else(|| panic!("{sender} from {source}: still open"))
}

/// Failed Logons count against the address they come from: six wrong passwords for
/// BALTIC from 127.0.0.2 leave even the right one unheard there, while the broker logs
/// on from 127.0.0.1; the lockout ends a minute later on the venue's clock.
async fn failed_logons_lock_out_their_address_only(b: Backend) {
    let (v, port) = fix_venue(b).await;
    let attacker = "127.0.0.2";
    let silent = Closed { said: String::new(), error: None };
    for _ in 0..6 {
        assert_eq!(refused_from(port, "BALTIC", "wrong-password", attacker).await, silent);
    }
    assert_eq!(refused_from(port, "BALTIC", BROKER_PW, attacker).await, silent, "locked out");

    // The broker, a real QuickFIX initiator from 127.0.0.1, logs on all the same.
    let dir = temp_dir();
    let mut broker = FixPeer::spawn(port, "BALTIC", BROKER_PW, dir.path(), &[]);
    broker.logon().await;
    let (out, _) = broker.seq().await;
    broker.stop().await;
    // The venue ended its session (one per company) before anyone logs on again.
    logged_off(&v.app, &v.app.admin_token().await, "BALTIC").await;
    // Its Logon did not lift the attacker's lockout.
    assert_eq!(refused_from(port, "BALTIC", BROKER_PW, attacker).await, silent, "still locked out");

    // A minute later by the venue's clock the address is heard again.
    v.app.clock.advance(chrono::Duration::seconds(61));
    let mut c = RawFix::connect_from(port, "BALTIC", attacker).await;
    // Past the broker's numbers (its Logout took `out`): a gap is resent, a number too
    // low would be refused.
    c.seq = out + 5;
    c.send("A", &[(98, "0"), (108, "30"), (554, BROKER_PW)]).await;
    let ack = c.expect("A", Duration::from_secs(10)).await;
    assert_eq!(tag(&ack, 56).as_deref(), Some("BALTIC"), "{ack:?}");
    v.app.stop().await;
}

/// A refused Logon tells nobody whether its CompID exists: an unknown CompID, a known one
/// with a wrong password and an address locked out all see the connection closed the
/// same way, with nothing said.
async fn refused_logons_look_alike(b: Backend) {
    let (v, port) = fix_venue(b).await;
    let unknown = refused_from(port, "STRANGER", "wrong-password", "127.0.0.1").await;
    let wrong = refused_from(port, "BALTIC", "wrong-password", "127.0.0.1").await;
    assert_eq!(unknown, wrong, "an unknown CompID against a wrong password");
    assert_eq!(wrong, Closed { said: String::new(), error: None }, "nothing said");
    for _ in 0..5 {
        assert_eq!(refused_from(port, "BALTIC", "wrong-password", "127.0.0.3").await, wrong);
    }
    let locked = refused_from(port, "BALTIC", BROKER_PW, "127.0.0.3").await;
    assert_eq!(locked, wrong, "locked out against a wrong password");
    v.app.stop().await;
}

/// A second node on the venue's database with a FIX port of its own, whose sessions look
/// at their outbox unrung every `outbox_poll`; and that port.
async fn fix_node(v: &Venue, outbox_poll: Duration) -> (TestApp, u16) {
    let node = v
        .app
        .spawn_node_with(|s| {
            s.fix = Some(FixSettings { bind: "127.0.0.1:0".into(), comp_id: "UPSTAIRS".into(), tls: None, outbox_poll })
        })
        .await;
    let port = node.running.as_ref().unwrap().fix.as_ref().unwrap().local_addr().port();
    (node, port)
}

/// Two nodes with a FIX port each: a company logged on at node 1 cannot log on at node 2
/// as well; once it logs out there, it logs on at node 2 and its numbers go on.
async fn one_session_across_nodes() {
    let (v, one) = fix_venue(Backend::Postgres).await;
    let (node, two) = fix_node(&v, upstairs_fix::OUTBOX_POLL).await;
    let within = Duration::from_secs(10);
    let logon = [(98, "0"), (108, "30"), (554, BROKER_PW)];
    let mut first = RawFix::connect(one, "BALTIC").await;
    first.send("A", &logon).await;
    first.expect("A", within).await;
    let mut second = RawFix::connect(two, "BALTIC").await;
    second.send("A", &logon).await;
    assert!(second.next(within).await.is_none(), "one session per company, on any node");

    first.send("5", &[]).await;
    first.expect("5", within).await;
    let mut moved = RawFix::connect(two, "BALTIC").await;
    moved.seq = first.seq;
    moved.send("A", &logon).await;
    let ack = moved.expect("A", within).await;
    assert_eq!(tag(&ack, 34).as_deref(), Some("3"), "the venue's numbers go on: {ack:?}");
    // Node 1's sessions screen shows it logged on (at node 2).
    let admin = v.app.admin_token().await;
    let deadline = std::time::Instant::now() + within;
    loop {
        let (_, sessions) = v.app.get("/api/admin/fix-sessions", Some(&admin)).await;
        let baltic = sessions["items"].as_array().unwrap().iter().find(|s| s["fix_comp_id"] == "BALTIC").cloned();
        if baltic.as_ref().is_some_and(|b| b["state"] == "LOGGED_ON") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{sessions}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    node.stop().await;
    v.app.stop().await;
}

/// Baltic's session is held at node 2, whose sessions look at their outbox unrung once an
/// hour; the match is made at node 1. Its trade reports reach Baltic because node 1's
/// commit rang node 2 (an announcement), not by node 2's poll.
async fn report_across_nodes() {
    let (v, _) = fix_venue(Backend::Postgres).await;
    let (node, two) = fix_node(&v, Duration::from_secs(3600)).await;
    let mut baltic = RawFix::connect(two, "BALTIC").await;
    baltic.send("A", &[(98, "0"), (108, "30"), (554, BROKER_PW)]).await;
    baltic.expect("A", WITHIN).await;
    a_match(&v).await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let report = baltic.expect("AE", WITHIN).await;
        ids.push(tag(&report, 571).expect("a TradeReportID"));
    }
    ids.dedup();
    assert_eq!(ids.len(), 2, "both sides' reports, once each: {ids:?}");
    node.stop().await;
    v.app.stop().await;
}

/// Runs the presence pass and the due timers until `want` says so, within a deadline (the
/// gateway notices a closed session when its read ends).
async fn until(v: &Venue, what: &str, want: impl AsyncFn() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while !want().await {
        assert!(std::time::Instant::now() < deadline, "{what}");
        v.app.running.as_ref().unwrap().run_due_timers().await;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Cancel on disconnect for FIX (issue 29, ADR 0043), on by default: Halyard's execution
/// system sends a parent order, and A works a child order of it and one of a parent made
/// on screen. The FIX session drops: after the grace period the child order of the FIX
/// parent is cancelled, told and audited, the other works on. With the company's setting
/// off, a second drop pulls nothing.
async fn a_dropped_session_pulls_the_orders_of_its_parents(b: Backend) {
    use chrono::Duration as Span;
    use upstairs_engine::Clock;
    use upstairs_engine::model::Holder;
    let (v, port) = fix_venue(b).await;
    let admin = v.app.admin_token().await;
    let (_, me) = v.app.get("/api/users/me", Some(&v.a)).await;
    let halyard = me["company_id"].as_str().unwrap().to_owned();
    let (_, company) = v.app.get(&format!("/api/companies/{halyard}"), Some(&v.a)).await;
    assert_eq!(company["fix_cancel_on_disconnect"], json!(true), "on by default: {company}");
    let fix_holder = Holder::Fix(upstairs_domain::CompanyId(halyard.parse().unwrap()));
    let dir = temp_dir();
    let mut ems = FixPeer::spawn(port, "HALYARD", FIRM_PW, dir.path(), &[]);
    ems.logon().await;
    let (f, g) = new_order("D1", "2", 3000, "Euribor 3M Dec26-Mar27", "T1");
    ems.send("D", f, g).await;
    let new = ems.expect("New", WITHIN, |e| is_app(e, "8") && field(e, 11).as_deref() == Some("D1")).await;
    let (_, by_fix) = v.app.get(&format!("/api/parent-orders/{}", field(&new, 37).unwrap()), Some(&v.a)).await;
    let on_screen = v.parent(&v.a, "SELL", 3000).await;
    let (_, pulled) = v.child(&v.a, &by_fix, 1000, p("94.75"), false).await;
    let (_, kept) = v.child(&v.a, &on_screen, 1000, p("94.75"), false).await;
    let state = |id: Value| {
        let v = &v;
        async move { v.app.get(&format!("/api/orders/{}", id.as_str().unwrap()), Some(&v.a)).await.1["state"].clone() }
    };
    let db = v.app.database_url.clone();
    until(&v, "the session's lease", async || present(&db, fix_holder, v.app.clock.now()).await).await;

    drop(ems);
    let cancels = async || pending_timers(&db).await.iter().any(|t| t.kind == "disconnect.cancel");
    until(&v, "a cancel on disconnect scheduled", cancels).await;
    v.app.clock.advance(Span::seconds(9));
    v.app.running.as_ref().unwrap().run_due_timers().await;
    assert_eq!(state(pulled["order_id"].clone()).await, "WORKING", "within the grace period");
    v.app.clock.advance(Span::seconds(2));
    v.app.running.as_ref().unwrap().run_due_timers().await;
    assert_eq!(state(pulled["order_id"].clone()).await, "CANCELLED");
    assert_eq!(state(kept["order_id"].clone()).await, "WORKING", "not sent by FIX");
    let (_, page) = v.app.get("/api/notifications", Some(&v.a)).await;
    let told: Vec<_> =
        page["items"].as_array().unwrap().iter().filter(|n| n["type"] == "ORDER_CANCELLED_ON_DISCONNECT").collect();
    assert_eq!(told.len(), 1, "{page}");
    assert_eq!(told[0]["order_id"], pulled["order_id"]);
    let (_, logs) =
        v.app.get("/api/admin/action-logs?entity=order&operation=cancel_on_disconnect&size=10", Some(&admin)).await;
    assert_eq!(logs["items"][0]["details"]["reason"], "The firm's FIX session dropped.", "{logs}");

    // Turned off: a second drop pulls nothing.
    let (s, c) = v
        .app
        .patch(&format!("/api/admin/companies/{halyard}"), Some(&admin), json!({"fix_cancel_on_disconnect": false}))
        .await;
    assert_eq!((s, c["fix_cancel_on_disconnect"].clone()), (StatusCode::OK, json!(false)), "{c}");
    let (_, again) = v.child(&v.a, &by_fix, 1000, p("94.75"), false).await;
    let mut ems = FixPeer::spawn(port, "HALYARD", FIRM_PW, dir.path(), &[]);
    ems.logon().await;
    until(&v, "the session's lease again", async || present(&db, fix_holder, v.app.clock.now()).await).await;
    drop(ems);
    until(&v, "the lease ended", async || !present(&db, fix_holder, v.app.clock.now()).await).await;
    v.app.clock.advance(Span::seconds(30));
    v.app.running.as_ref().unwrap().run_due_timers().await;
    assert!(!cancels().await);
    assert_eq!(state(again["order_id"].clone()).await, "WORKING");
    v.app.stop().await;
}

/// Issue 29 (ADR 0045): Halyard's trader allocates its side of a trade across two
/// accounts, given up to another broker. Baltic's QuickFIX session gets an
/// AllocationInstruction that QuickFIX's FIX44.xml accepts, and acknowledges it (35=P);
/// a new version replaces it (71=1, 72 the old AllocID), an ack of the old one changes
/// nothing, a reject is kept with its text. The fill's TradeCaptureReport carries the
/// accounts (NoAllocs) and the give-up firm.
async fn a_broker_acknowledges_allocations_by_fix(b: Backend) {
    let (v, port) = fix_venue(b).await;
    let admin = v.app.admin_token().await;
    let dir = temp_dir();
    let mut broker = FixPeer::spawn(port, "BALTIC", BROKER_PW, dir.path(), &["--auto-ack", "none"]);
    broker.logon().await;
    let (sell, buy) = a_match(&v).await;
    for _ in 0..2 {
        broker.expect("a trade report", WITHIN, |e| is_app(e, "AE")).await;
    }
    // Halyard's trader's screens hear of each version and of the broker's answers.
    let mut screen = Peer::spawn(
        "stomp_client.py",
        &["127.0.0.1".into(), v.app.port().to_string(), v.a.clone(), "/user/topic/orders".into()],
    );
    assert_eq!(screen.next_json(WITHIN).await.unwrap()["event"], "connected");
    assert_eq!(screen.next_json(WITHIN).await, Some(json!({"event": "subscribed"})));
    let mut pushed = async |version: i64, ack: &str| loop {
        let m = screen.next_json(WITHIN).await.unwrap_or_else(|| panic!("no allocation v{version} {ack} pushed"));
        let body = &m["body"];
        if body["type"] == "ALLOCATION_UPDATED" && body["version"] == version && body["broker_ack"] == ack {
            return body.clone();
        }
    };
    // Northgate becomes Halyard's second broker; Halyard gets two accounts.
    let halyard = v.app.get("/api/users/me", Some(&v.a)).await.1["company_id"].as_str().unwrap().to_owned();
    let northgate = v.second_broker(&admin, &halyard).await;
    let mut accounts = Vec::new();
    for code in ["HAL-1", "HAL-2"] {
        let (s, a) = v
            .app
            .post(
                &format!("/api/admin/companies/{halyard}/accounts"),
                Some(&admin),
                json!({"code": code, "name": code}),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{a}");
        accounts.push(a["account_id"].as_str().unwrap().to_owned());
    }
    let pid = sell["parent_order_id"].as_str().unwrap();
    let (_, orders) = v.app.get(&format!("/api/orders?parent_order_id={pid}"), Some(&v.a)).await;
    let order = orders[0]["order_id"].as_str().unwrap().to_owned();
    let allocate = |first: i64, give_up: Value| {
        let body = json!({"lines": [{"account_id": accounts[0], "quantity": first},
                                    {"account_id": accounts[1], "quantity": 1000 - first}],
                          "give_up_broker_id": give_up});
        let (app, path, token) = (&v.app, format!("/api/orders/{order}/allocation"), v.a.clone());
        async move { app.put(&path, Some(&token), body).await }
    };
    let (s, first) = allocate(600, json!(northgate)).await;
    assert_eq!(
        (s, first["version"].clone(), first["broker_ack"].clone()),
        (StatusCode::OK, json!(1), json!("PENDING"))
    );

    let j = broker.expect("an allocation instruction", WITHIN, |e| is_app(e, "J")).await;
    let first_id = field(&j, 70).unwrap();
    assert_eq!(first_id, format!("{order}-L1"));
    assert_eq!((field(&j, 71).as_deref(), field(&j, 626).as_deref()), (Some("0"), Some("5")));
    assert_eq!(
        (field(&j, 54).as_deref(), field(&j, 53).as_deref(), field(&j, 6).as_deref()),
        (Some("2"), Some("1000"), Some("94.75"))
    );
    assert_eq!((field(&j, 37), field(&j, 72)), (Some(order.clone()), None));
    assert_eq!(fields(&j, 79), ["HAL-1", "HAL-2"]);
    assert_eq!(fields(&j, 80), ["600", "400"]);
    assert_eq!(fields(&j, 452), ["1", "3", "14"], "executing firm, client, give-up firm");
    assert_eq!(fields(&j, 448), ["BALTIC", "Halyard", "Northgate"]);
    let ack = |id: &str, status: &str, text: Option<&str>| {
        let mut f = vec![json!([70, id]), json!([60, "20261124-10:00:00"]), json!([87, status])];
        f.extend(text.map(|t| json!([58, t])));
        json!(f)
    };
    let status = |want: &'static str| {
        let (app, path, token) = (&v.app, format!("/api/orders/{order}/allocation"), v.a.clone());
        async move {
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            loop {
                let (_, a) = app.get(&path, Some(&token)).await;
                if a["broker_ack"] == want {
                    return a;
                }
                assert!(std::time::Instant::now() < deadline, "want {want}: {a}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    let frame = pushed(1, "PENDING").await;
    assert_eq!((&frame["order_id"], &frame["give_up_broker"]["name"]), (&json!(order), &json!("Northgate")));
    broker.send("P", ack(&first_id, "0", None), json!([])).await;
    status("ACCEPTED").await;
    pushed(1, "ACCEPTED").await;
    // Listed with the trader's other allocations; another firm's trader has none of it.
    let (_, listed) = v.app.get("/api/allocations", Some(&v.a)).await;
    assert_eq!((listed[0]["order_id"].as_str(), &listed[0]["broker_ack"]), (Some(order.as_str()), &json!("ACCEPTED")));
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(v.app.get("/api/allocations", Some(&v.b)).await.1, json!([]));

    // A second version replaces it; the broker's late answer to the first changes nothing,
    // its reject of the second is kept with why.
    let (s, second) = allocate(700, Value::Null).await;
    assert_eq!(
        (s, second["version"].clone(), second["broker_ack"].clone()),
        (StatusCode::OK, json!(2), json!("PENDING"))
    );
    let j = broker.expect("the replacing instruction", WITHIN, |e| is_app(e, "J")).await;
    assert_eq!(
        (field(&j, 70), field(&j, 71).as_deref(), field(&j, 72), field(&j, 796).as_deref()),
        (Some(format!("{order}-L2")), Some("1"), Some(first_id.clone()), Some("1"))
    );
    assert_eq!(
        (fields(&j, 80), fields(&j, 452)),
        (vec!["700".to_owned(), "300".to_owned()], vec!["1".to_owned(), "3".to_owned()])
    );
    broker.send("P", ack(&first_id, "0", None), json!([])).await;
    // An account-level reject names the account in its AllocAckGrp.
    let account = json!([{"count": 78, "delim": 79, "entries": [[[79, "HAL-2"], [161, "Unknown account"]]]}]);
    broker.send("P", ack(&format!("{order}-L2"), "2", Some("Unknown account HAL-2")), account).await;
    let rejected = status("REJECTED").await;
    assert_eq!(rejected["broker_ack_text"], "Unknown account HAL-2");
    assert_eq!(pushed(2, "REJECTED").await["broker_ack_text"], "Unknown account HAL-2");
    // An AllocID of no allocation of this broker's: a session Reject naming tag 70.
    broker.send("P", ack("00000000-0000-0000-0000-000000000000-L1", "0", None), json!([])).await;
    let r = broker.expect("a reject of an unknown AllocID", WITHIN, |e| e["msg_type"] == "3").await;
    assert_eq!(field(&r, 371).as_deref(), Some("70"), "{r}");

    // Both brokers accept by their links: the fill reports carry the allocation.
    for (o, t) in broker_links(&v.app.mails_to(BROKER_DESK, 2).await, "/accept-order") {
        let (s, e) = v.app.patch(&format!("/api/orders/{o}?token={t}"), None, json!({"accepted": true})).await;
        assert_eq!(s, StatusCode::OK, "{e}");
    }
    both_in(&v, &sell, &buy, "BROKER_ACCEPTED").await;
    let fill = broker
        .expect("Halyard's fill report", WITHIN, |e| {
            is_app(e, "AE") && field(e, 571).is_some_and(|i| i == format!("{order}-F"))
        })
        .await;
    assert_eq!(
        (fields(&fill, 79), fields(&fill, 80)),
        (vec!["HAL-1".to_owned(), "HAL-2".to_owned()], vec!["700".to_owned(), "300".to_owned()])
    );
    assert_eq!(fields(&fill, 452), ["1", "17", "3"], "no give-up in the second version");

    // The broker declines Halyard's fill by FIX: the trade breaks down, and the
    // instruction in force is cancelled (AllocTransType 2 naming it), whose ack is taken.
    let symbol = field(&fill, 55).unwrap();
    let decline = json!([[571, format!("{order}-F")], [939, "1"], [150, "F"], [55, symbol]]);
    broker.send("AR", decline, json!([])).await;
    let cancel = broker.expect("the allocation's cancel", WITHIN, |e| is_app(e, "J")).await;
    assert_eq!(
        (field(&cancel, 70), field(&cancel, 71).as_deref(), field(&cancel, 72), field(&cancel, 796).as_deref()),
        (Some(format!("{order}-L2-C")), Some("2"), Some(format!("{order}-L2")), Some("2")),
        "{cancel}"
    );
    assert_eq!(fields(&cancel, 79), ["HAL-1", "HAL-2"]);
    broker.send("P", ack(&format!("{order}-L2-C"), "0", None), json!([])).await;
    // The next thing refused is an unknown AllocID's ack, not the cancel's.
    broker.send("P", ack(&format!("{order}-L9-C"), "0", None), json!([])).await;
    let r = broker.expect("a reject of the unknown cancel", WITHIN, |e| e["msg_type"] == "3").await;
    assert!(field(&r, 58).is_some_and(|t| t.contains("-L9-C")), "{r}");
    let refused = broker.events.iter().filter(|e| e["msg_type"] == "3").count();
    assert_eq!(refused, 2, "only the two unknown AllocIDs were refused");
    assert_eq!(children(&v, &v.a, &sell).await, vec![("BROKER_REJECTED".to_owned(), 1000)]);
    broker.stop().await;
}

/// The band of the instrument as a trader reads it, once it is `want` (within 15 s).
async fn band_becomes(v: &Venue, want: (f64, f64)) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let (_, i) = v.app.get(&format!("/api/instruments/{}", v.instrument), Some(&v.b)).await;
        if (i["min_tick_price"].as_f64(), i["max_tick_price"].as_f64()) == (Some(want.0), Some(want.1)) {
            return i;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "band {} {}, want {want:?}",
            i["min_tick_price"],
            i["max_tick_price"]
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Issue 30 (ADR 0049): the venue logs on to the provider with its password, subscribes to
/// the instruments with an exchange instrument id (its Symbol), and moves each band from
/// the snapshot and the incremental refreshes; a price the band cannot take moves
/// nothing; when the provider goes silent the stale-price guard trips and the next price
/// clears it; when the provider drops the session the venue logs on again, subscribes
/// again and goes on.
async fn exchange_prices_come_over_a_market_data_session(b: Backend) {
    let mut provider = MdProvider::start("md-pass").await;
    let port = provider.port;
    let v = venue_with(b, |s| s.market_data = Some(md_settings(port))).await;
    provider.expect("logon", |_| true).await;
    // Nothing to subscribe to until an instrument names its symbol.
    let admin = v.app.admin_token().await;
    let path = format!("/api/admin/instruments/{}", v.instrument);
    let body = json!({"exchange_instrument_id": "ERZ6", "prices_stale_after": 30});
    assert_eq!(v.app.patch(&path, Some(&admin), body).await.0, StatusCode::OK);
    let sub = provider.expect("subscribed", |_| true).await;
    assert_eq!(sub["symbols"], json!(["ERZ6"]), "{sub}");
    assert_eq!(sub["request_type"], "1", "{sub}");

    provider.command(json!({"cmd": "price", "symbol": "ERZ6", "bid": "94.71", "offer": "94.81"})).await;
    provider.expect("sent", |e| e["msg_type"] == "W").await;
    band_becomes(&v, (94.71, 94.81)).await;
    provider.command(json!({"cmd": "price", "symbol": "ERZ6", "bid": "94.72", "offer": "94.82"})).await;
    provider.expect("sent", |e| e["msg_type"] == "X").await;
    let i = band_becomes(&v, (94.72, 94.82)).await;
    assert_eq!(i["prices_stale"], false, "{i}");
    // Off the tick: not taken; the band stays.
    provider.command(json!({"cmd": "price", "symbol": "ERZ6", "bid": "94.725", "offer": "94.825"})).await;
    provider.expect("sent", |e| e["msg_type"] == "X").await;
    provider.command(json!({"cmd": "price", "symbol": "ERZ6", "bid": "94.73", "offer": "94.83"})).await;
    band_becomes(&v, (94.73, 94.83)).await;
    // Three moves, by the venue itself (prices come in order: the one off the tick came
    // before the last and was not taken).
    let (_, moves) = v.app.get("/api/admin/action-logs?entity=instrument&operation=band", Some(&admin)).await;
    assert_eq!(moves["total_items"], 3, "{moves}");
    assert!(moves["items"].as_array().unwrap().iter().all(|m| m["user"].is_null()), "{moves}");

    // The provider goes silent past the limit: stale; its next price clears it.
    v.app.clock.advance(chrono::Duration::seconds(31));
    run_timers(&v).await;
    let (_, i) = v.app.get(&format!("/api/instruments/{}", v.instrument), Some(&v.b)).await;
    assert_eq!(i["prices_stale"], true, "{i}");
    // The FIX sessions screen: the session logged on, its symbol, its last price, the
    // instrument stale.
    // (The holder writes it at each refresh: the prices' time comes with the next one.)
    let md = md_screen(&v, &admin, |m| {
        m["state"] == "LOGGED_ON" && m["symbols"] == 1 && m["stale_instruments"] == 1 && m["last_price_at"].is_string()
    })
    .await;
    assert_eq!(
        (&md["provider"], &md["sender_comp_id"], &md["target_comp_id"]),
        (&json!(format!("127.0.0.1:{port}")), &json!("UPSTAIRS-MD"), &json!("PROVIDER"))
    );
    assert!(md["node_id"].is_string(), "{md}");
    provider.command(json!({"cmd": "price", "symbol": "ERZ6", "bid": "94.73", "offer": "94.83"})).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let (_, i) = v.app.get(&format!("/api/instruments/{}", v.instrument), Some(&v.b)).await;
        if i["prices_stale"] == false {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still stale: {i}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Dropped: the venue logs on again, subscribes again, and the next price moves the band.
    provider.command(json!({"cmd": "drop"})).await;
    provider.expect("logon", |_| true).await;
    let again = provider.expect("subscribed", |_| true).await;
    assert_eq!(again["symbols"], json!(["ERZ6"]), "{again}");
    provider.command(json!({"cmd": "price", "symbol": "ERZ6", "bid": "94.74", "offer": "94.84"})).await;
    band_becomes(&v, (94.74, 94.84)).await;
    // In the band's history (moves at one instant of the test's clock keep its last band).
    let (_, history) = v.app.get(&format!("/api/instruments/{}/band-history", v.instrument), Some(&v.b)).await;
    let last = history.as_array().unwrap().last().unwrap().clone();
    assert_eq!((&last["min_tick_price"], &last["max_tick_price"]), (&json!(94.74), &json!(94.84)), "{history}");
    // The provider goes away: the screen says the session is logged off.
    provider.command(json!({"cmd": "stop"})).await;
    md_screen(&v, &admin, |m| m["state"] == "LOGGED_OFF" && m["stale_instruments"] == 0).await;
    v.app.stop().await;
}

/// The market-data session on the FIX sessions screen, once `ok` says so (within 15 s).
async fn md_screen(v: &Venue, admin: &str, ok: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let (s, list) = v.app.get("/api/admin/fix-sessions", Some(admin)).await;
        assert_eq!(s, StatusCode::OK, "{list}");
        if ok(&list["market_data"]) {
            return list["market_data"].clone();
        }
        assert!(std::time::Instant::now() < deadline, "{}", list["market_data"]);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn md_settings(port: u16) -> upstairs_fix::market_data::MarketDataSettings {
    let mut m = upstairs_fix::market_data::MarketDataSettings::new(
        format!("127.0.0.1:{port}"),
        "UPSTAIRS-MD".into(),
        "PROVIDER".into(),
    );
    m.password = Some("md-pass".into());
    m.refresh = Duration::from_millis(100);
    m
}

async fn market_data_across_nodes() {
    let mut provider = MdProvider::start("md-pass").await;
    let port = provider.port;
    let v = venue_with(Backend::Postgres, |s| s.market_data = Some(md_settings(port))).await;
    provider.expect("logon", |_| true).await;
    let admin = v.app.admin_token().await;
    let path = format!("/api/admin/instruments/{}", v.instrument);
    assert_eq!(v.app.patch(&path, Some(&admin), json!({"exchange_instrument_id": "ERZ6"})).await.0, StatusCode::OK);
    provider.expect("subscribed", |_| true).await;
    // A second node with the same settings waits: the first holds the session.
    let node = v.app.spawn_node_with(|s| s.market_data = Some(md_settings(port))).await;
    provider.command(json!({"cmd": "price", "symbol": "ERZ6", "bid": "94.71", "offer": "94.81"})).await;
    band_becomes(&v, (94.71, 94.81)).await;
    // The first stops (letting the lease go): the second logs on and subscribes.
    let Venue { app, a, b, a_admin_limited, instrument, broker } = v;
    app.stop().await;
    provider.expect("logout", |_| true).await;
    provider.expect("logon", |_| true).await;
    provider.expect("subscribed", |e| e["symbols"] == json!(["ERZ6"])).await;
    let v = Venue { app: node, a, b, a_admin_limited, instrument, broker };
    provider.command(json!({"cmd": "price", "symbol": "ERZ6", "bid": "94.72", "offer": "94.82"})).await;
    band_becomes(&v, (94.72, 94.82)).await;
    provider.command(json!({"cmd": "stop"})).await;
    v.app.stop().await;
}
