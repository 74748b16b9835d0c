#![allow(clippy::unwrap_used)]
//! The real `upstairs` binary killed with SIGKILL while trade reports, their acks, orders
//! and their execution reports flow both ways over FIX, then restarted. A real QuickFIX
//! broker and execution system stay connected (reconnecting by themselves): afterwards
//! every trade report reached the broker exactly once, every ack took effect, every
//! ClOrdID made exactly one parent order answered once, and the sequence numbers on both
//! sides agree (no gap, no duplicate).

mod support;

use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;
use support::fix::*;
use support::venue::*;
use support::*;
use upstairs_engine::fix::FIX_HOLD;
use upstairs_fix::FixSettings;

on_both_backends!(fix_survives_sigkill);

/// Issue 30 (ADR 0049): the node holding the market-data session is SIGKILLed. Another
/// node takes the session within the lease and subscribes again; meanwhile the
/// instrument, with no price past its limit, is not traded (PostgreSQL: several nodes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_market_data_session_survives_sigkill() {
    balanced_after(market_data_survives_sigkill()).await
}

const BROKER_PW: &str = "Baltic-FIX-pass";
const FIRM_PW: &str = "Halyard-FIX-pass";
const MATCHES: usize = 12;

async fn serve(database_url: &str, port: u16, fix_port: u16, mail_dir: &std::path::Path) -> tokio::process::Child {
    let fix_bind = format!("127.0.0.1:{fix_port}");
    let envs: [(&str, &std::ffi::OsStr); 3] = [
        ("UPSTAIRS_MAIL_DIR", mail_dir.as_os_str()),
        ("UPSTAIRS_ALWAYS_OPEN", "true".as_ref()),
        ("UPSTAIRS_WRITES_PER_SECOND", "0".as_ref()),
    ];
    serve_binary(database_url, port, &["--fix-bind", &fix_bind], &envs).await
}

/// A's SELL resting at 94.75, taken by B, accepted by A: (A's parent, B's parent).
async fn a_match(v: &Venue, a: &str, b: &str) -> (Value, Value) {
    let sell = v.parent(a, "SELL", 500).await;
    let (s, resting) = v.child(a, &sell, 500, p("94.75"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{resting}");
    let buy = v.parent(b, "BUY", 500).await;
    let (s, sent) = v
        .app
        .post(
            "/api/order-match-requests",
            Some(b),
            json!({"requesting_parent_order_id": buy["parent_order_id"], "quantity": 500, "price": p("94.75").0,
                   "requesting_broker_id": v.broker, "dry_run": false, "residual": false}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{sent}");
    let id = sent[0]["order_match_request_id"].as_str().unwrap();
    let (s, m) = v.app.patch(&format!("/api/order-match-requests/{id}"), Some(a), json!({"state": "ACCEPTED"})).await;
    assert_eq!(s, StatusCode::OK, "{m}");
    (sell, buy)
}

/// How long the instrument of [`market_data_survives_sigkill`] trades without a price.
const STALE_AFTER: u64 = 2;

async fn market_data_survives_sigkill() {
    // The data set, made in-process: A's SELL rests at 94.75, B has a BUY parent; the
    // instrument is the provider's ERZ6 and goes stale after two seconds without a price.
    let mut v = venue_with(Backend::Postgres, |_| {}).await;
    let admin = v.app.admin_token().await;
    let body = json!({"exchange_instrument_id": "ERZ6", "prices_stale_after": STALE_AFTER});
    let path = format!("/api/admin/instruments/{}", v.instrument);
    assert_eq!(v.app.patch(&path, Some(&admin), body).await.0, StatusCode::OK);
    let sell = v.parent(&v.a, "SELL", 1000).await;
    let (s, resting) = v.child(&v.a, &sell, 1000, p("94.75"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{resting}");
    let buy = v.parent(&v.b, "BUY", 1000).await;
    v.app.running.take().unwrap().stop().await;

    // Two nodes with the same market-data settings: the first holds the session.
    let mut provider = MdProvider::start("md-pass").await;
    let md_port = provider.port;
    let md = format!("127.0.0.1:{md_port}");
    let args = ["--md-connect", md.as_str(), "--md-password", "md-pass"];
    let mail_dir = v.app.dir.path().join("binary-mail");
    let envs: [(&str, &std::ffi::OsStr); 2] =
        [("UPSTAIRS_MAIL_DIR", mail_dir.as_os_str()), ("UPSTAIRS_ALWAYS_OPEN", "true".as_ref())];
    let (first_port, second_port) = (free_port(), free_port());
    let mut first = serve_binary(&v.app.database_url, first_port, &args, &envs).await;
    provider.expect("logon", |_| true).await;
    provider.expect("subscribed", |e| e["symbols"] == json!(["ERZ6"])).await;
    let mut second = serve_binary(&v.app.database_url, second_port, &args, &envs).await;
    v.app.base = format!("http://127.0.0.1:{second_port}");
    let b = v.app.login("b@kestrel.test", PW).await;
    let take = |dry_run: bool| {
        let body = json!({"requesting_parent_order_id": buy["parent_order_id"], "quantity": 1000,
                          "price": p("94.75").0, "requesting_broker_id": v.broker, "dry_run": dry_run,
                          "residual": false});
        let (app, b) = (&v.app, b.clone());
        async move { app.post("/api/order-match-requests", Some(&b), body).await }
    };
    let stale = |(s, e): &(StatusCode, Value)| {
        *s == StatusCode::CONFLICT && e["detail"].as_str().is_some_and(|d| d.contains("are stale"))
    };

    // No price since the data set was made: stale. The provider's price, through the
    // first node, opens the instrument on the second.
    let refused = take(true).await;
    assert!(stale(&refused), "{refused:?}");
    provider.command(json!({"cmd": "price", "symbol": "ERZ6", "bid": "94.70", "offer": "94.80"})).await;
    until("a preview on a live price", || async { take(true).await.0 == StatusCode::OK }).await;
    let admin = v.app.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
    let screen = || async { v.app.get("/api/admin/fix-sessions", Some(&admin)).await.1["market_data"].clone() };
    let before = screen().await;
    assert_eq!(before["state"], "LOGGED_ON", "{before}");

    // SIGKILL the holder: no logout, the lease is left to lapse. Prices stop: within
    // the limit the instrument is stale, and neither a preview nor a take goes through.
    first.kill().await.unwrap();
    let killed = std::time::Instant::now();
    until("stale prices", || async { stale(&take(true).await) }).await;
    let refused = take(false).await;
    assert!(stale(&refused), "{refused:?}");

    // The second node takes the session when the lease lapses (its next renewal after
    // that), logs on and subscribes again.
    let within = upstairs_fix::market_data::HOLD.to_std().unwrap() + Duration::from_secs(25);
    provider.expect_within("logon", within, |_| true).await;
    let taken_over = killed.elapsed();
    provider.expect("subscribed", |e| e["symbols"] == json!(["ERZ6"])).await;
    eprintln!("the market-data session moved to the second node {taken_over:?} after the SIGKILL");
    // The FIX sessions screen names the second node.
    until("the second node on the screen", || async {
        let now = screen().await;
        now["state"] == "LOGGED_ON" && now["node_id"] != before["node_id"]
    })
    .await;
    let (_, requests) = v.app.get("/api/order-match-requests", Some(&b)).await;
    assert_eq!(requests.as_array().map(Vec::len), Some(0), "nothing traded while stale: {requests}");

    // The subscription's snapshot, then a new price, open the instrument again: B's take
    // goes through.
    provider.command(json!({"cmd": "price", "symbol": "ERZ6", "bid": "94.71", "offer": "94.81"})).await;
    until("a take on a live price", || async { take(true).await.0 == StatusCode::OK }).await;
    let (s, sent) = take(false).await;
    assert_eq!(s, StatusCode::CREATED, "{sent}");
    provider.command(json!({"cmd": "stop"})).await;
    second.kill().await.unwrap();
}

/// Polls `ok` until it holds, within 15 s.
async fn until<F: std::future::Future<Output = bool>>(what: &str, ok: impl Fn() -> F) {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while !ok().await {
        assert!(std::time::Instant::now() < deadline, "no {what} within 15 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn fix_survives_sigkill(backend: Backend) {
    // The data set, made in-process (companies, users, an instrument), then served by
    // the binary on the same database.
    let mut v = venue_with(backend, |s| {
        s.fix = Some(FixSettings {
            bind: "127.0.0.1:0".into(),
            comp_id: "UPSTAIRS".into(),
            tls: None,
            outbox_poll: upstairs_fix::OUTBOX_POLL,
        });
    })
    .await;
    let admin = v.app.admin_token().await;
    let (s, c) = v
        .app
        .patch(
            &format!("/api/admin/companies/{}", v.broker),
            Some(&admin),
            json!({"fix_comp_id": "BALTIC", "fix_password": BROKER_PW}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{c}");
    let (_, me) = v.app.get("/api/users/me", Some(&v.a)).await;
    let firm = me["company_id"].as_str().unwrap().to_owned();
    let (s, c) = v
        .app
        .patch(
            &format!("/api/admin/companies/{firm}"),
            Some(&admin),
            json!({"fix_comp_id": "HALYARD", "fix_password": FIRM_PW}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{c}");
    let user = me["user_id"].as_str().unwrap();
    let body = json!({"ems_trader_id": "T1", "fix_integration": true});
    assert_eq!(v.app.patch(&format!("/api/users/{user}"), Some(&admin), body).await.0, StatusCode::OK);
    v.app.running.take().unwrap().stop().await;

    let (port, fix_port) = (free_port(), free_port());
    let mail_dir = v.app.dir.path().join("binary-mail");
    let mut server = serve(&v.app.database_url, port, fix_port, &mail_dir).await;
    v.app.base = format!("http://127.0.0.1:{port}");
    let a = v.app.login("a@halyard.test", PW).await;
    let b = v.app.login("b@kestrel.test", PW).await;
    let (dir1, dir2) = (temp_dir(), temp_dir());
    let mut broker = FixPeer::spawn(fix_port, "BALTIC", BROKER_PW, dir1.path(), &["--auto-ack", "accept"]);
    let mut ems = FixPeer::spawn(fix_port, "HALYARD", FIRM_PW, dir2.path(), &[]);
    broker.logon().await;
    ems.logon().await;

    let mut parents = Vec::new();
    for i in 0..MATCHES {
        let (f, g) = new_order(&format!("K{i}"), "1", 500, "Euribor 3M Dec26-Mar27", "T1");
        ems.send("D", f, g).await;
        parents.push(a_match(&v, &a, &b).await);
        // Twice, right after a match committed (its reports about to go out, acks and
        // execution reports in flight): SIGKILL, and start again.
        if i == MATCHES / 3 || i == 2 * MATCHES / 3 {
            server.kill().await.unwrap();
            server = serve(&v.app.database_url, port, fix_port, &mail_dir).await;
            // On SQLite the new process frees the sessions at once (no other node can
            // hold them); on PostgreSQL the killed node's hold must lapse first.
            let within = WITHIN + FIX_HOLD.to_std().unwrap();
            broker.logon_within(within).await;
            ems.logon_within(within).await;
        }
    }

    // Every trade confirmed by FIX, both steps, for every order.
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        let mut states = Vec::new();
        for (sell, buy) in &parents {
            states.extend(children(&v, &a, sell).await.into_iter().map(|(s, _)| s));
            states.extend(children(&v, &b, buy).await.into_iter().map(|(s, _)| s));
        }
        if states.iter().all(|s| s == "BROKER_FILLED") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{states:?}\n{}", broker.transcript());
        broker.drain(Duration::from_millis(100)).await;
    }
    // Every ClOrdID made one parent order, and its New was heard once.
    for i in 0..MATCHES {
        let id = format!("K{i}");
        ems.expect("New", WITHIN, |e| {
            is_app(e, "8") && field(e, 11) == Some(id.clone()) && field(e, 150).as_deref() == Some("0")
        })
        .await;
    }
    broker.drain(Duration::from_millis(500)).await;
    ems.drain(Duration::from_millis(500)).await;

    let recovered = |p: &FixPeer| {
        let resend_requests = p.events.iter().filter(|e| e["msg_type"] == "2").count();
        let poss_dups = p.events.iter().filter(|e| e["poss_dup"] == true).count();
        let logons = p.events.iter().filter(|e| e["event"] == "logon").count();
        (logons, resend_requests, poss_dups)
    };
    eprintln!("broker (logons, resend requests, PossDup): {:?}; EMS: {:?}", recovered(&broker), recovered(&ems));

    // Exactly one report per order and step: nothing lost, nothing sent twice.
    let mut seen: HashMap<String, usize> = HashMap::new();
    for r in broker.received("AE") {
        *seen.entry(field(&r, 571).unwrap()).or_default() += 1;
    }
    assert_eq!(seen.len(), MATCHES * 2 * 2, "{seen:?}");
    assert!(seen.values().all(|n| *n == 1), "reports delivered more than once: {seen:?}");
    let mut news: HashMap<String, usize> = HashMap::new();
    for r in ems.received("8").iter().filter(|r| field(r, 150).as_deref() == Some("0")) {
        *news.entry(field(r, 11).unwrap()).or_default() += 1;
    }
    assert_eq!(news.len(), MATCHES, "{news:?}");
    assert!(news.values().all(|n| *n == 1), "New sent twice: {news:?}");
    let (_, listed) = v.app.get("/api/parent-orders", Some(&a)).await;
    let from_ems = listed.as_array().unwrap().iter().filter(|p| p["direction"] == "BUY").count();
    assert_eq!(from_ems, MATCHES, "one parent per ClOrdID");

    // Both sides agree on the numbers: no gap left open either way. (A heartbeat may
    // pass between the two reads: ask again until they agree, within a deadline.)
    let admin = v.app.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
    seqs_agree(&v.app, &admin, "BALTIC", &mut broker).await;
    seqs_agree(&v.app, &admin, "HALYARD", &mut ems).await;
    broker.stop().await;
    ems.stop().await;
    server.kill().await.unwrap();
}
