#![allow(clippy::unwrap_used)]
//! The real `upstairs` binary: bootstrap with `upstairs user create`, then SIGKILL the
//! server after a user was created but before its e-mail went out. After a restart the
//! e-mail is delivered with the Message-ID of the first attempt. And SIGKILL in the middle
//! of a cancel on disconnect: every order is working, or cancelled with its notification
//! and its action-log row, never in between; after a restart the cancel ends the rest.

mod support;

use reqwest::StatusCode;
use serde_json::json;
use std::time::Duration;
use support::venue::*;
use support::*;
use upstairs_engine::model::{ChildOrder, Holder, Notification, OrderFilter};

on_both_backends!(email_survives_sigkill, a_cancel_on_disconnect_survives_sigkill);

async fn serve(database_url: &str, port: u16, smtp_url: &str, mail_dir: &std::path::Path) -> tokio::process::Child {
    let public_url = format!("http://127.0.0.1:{port}");
    let envs: [(&str, &std::ffi::OsStr); 3] = [
        ("UPSTAIRS_SMTP_URL", smtp_url.as_ref()),
        ("UPSTAIRS_MAIL_DIR", mail_dir.as_os_str()),
        ("UPSTAIRS_PUBLIC_URL", public_url.as_ref()),
    ];
    serve_binary(database_url, port, &[], &envs).await
}

async fn email_survives_sigkill(b: Backend) {
    let dir = temp_dir();
    let db = fresh_database_url(b, dir.path()).await;
    let status = upstairs_binary(&db)
        .args([
            "user",
            "create",
            "--email",
            ADMIN_EMAIL,
            "--password",
            ADMIN_PASSWORD,
            "--role",
            "upstairs-admin",
            "--company",
            "Upstairs",
            "--first-name",
            "Ada",
            "--last-name",
            "Admin",
        ])
        .status()
        .await
        .unwrap();
    assert!(status.success());

    // 1. The mail server is failing: the first attempt is refused (451).
    let failing = SmtpSink::start(&dir.path().join("failing"), 1000).await;
    let port = free_port();
    let mut server = serve(&db, port, &failing.url(), &dir.path().join("mail")).await;
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    admin_creates_trader(&base, "crash@halyard.test", "Cora", "Crash").await;
    let refused = failing.wait_for("rejected", 1, None).await;
    let message_id = header(&refused[0], "Message-ID").unwrap().to_owned();
    // Wait until the server has recorded the failure (and the retry, in the same
    // transaction); a kill during the attempt itself is retried once its claim lapses.
    let mut recorded = false;
    for _ in 0..500 {
        let (_, outbox) = audit_and_outbox(&db).await;
        if outbox.first().is_some_and(|m| m.last_error.is_some()) {
            recorded = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(recorded, "the server recorded the refused attempt");

    // 2. SIGKILL: no shutdown, no flush.
    server.kill().await.unwrap();
    drop(failing);

    // 3. Restart against a working mail server: the e-mail goes out at once.
    let working = SmtpSink::start(&dir.path().join("working"), 0).await;
    let port = free_port();
    let mut server = serve(&db, port, &working.url(), &dir.path().join("mail")).await;
    let delivered = working.wait_for("msg", 1, None).await;
    assert_eq!(header(&delivered[0], "Message-ID"), Some(message_id.as_str()), "same Message-ID after the crash");
    assert_eq!(header(&delivered[0], "X-Sink-Rcpt-To"), Some("crash@halyard.test"));
    let hash = link_token(&delivered[0], "/account-activate");
    let check = client.get(format!("http://127.0.0.1:{port}/api/users/password-reset/{hash}")).send().await.unwrap();
    assert_eq!(check.status(), StatusCode::OK, "the link from the delivered e-mail works");
    assert_eq!(working.received("msg").len(), 1, "sent once");
    server.kill().await.unwrap();
}

const ORDERS: usize = 60;

/// Whether `f` comes true within `within`, asked every 20 ms.
async fn eventually<F: std::future::Future<Output = bool>>(within: Duration, mut f: impl FnMut() -> F) -> bool {
    let end = std::time::Instant::now() + within;
    loop {
        if f().await {
            return true;
        }
        if std::time::Instant::now() >= end {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A's orders, their cancel-on-disconnect notices and action-log rows, read straight from
/// the database.
async fn read_pulled<S: upstairs_engine::Store>(
    s: S,
    a: upstairs_domain::UserId,
) -> (Vec<ChildOrder>, Vec<Notification>, Vec<upstairs_engine::model::ActionLog>) {
    use upstairs_engine::ports::{AuditRepo, NotificationRepo, OrderRepo};
    let mut tx = s.read().await.unwrap();
    let orders = tx.orders(&OrderFilter { created_by: Some(a), ..Default::default() }).await.unwrap();
    let told = tx.notifications_of_user(a, None, true, 0, 1000).await.unwrap().items;
    let logs = tx.action_logs(10_000).await.unwrap();
    (orders, told, logs.into_iter().filter(|l| l.operation == "cancel_on_disconnect").collect())
}

/// Every order of A working, or cancelled with exactly one notice and one action-log row;
/// how many are cancelled.
async fn each_working_or_cancelled_and_told(database_url: &str, a: upstairs_domain::UserId) -> usize {
    // One snapshot: the three reads are three statements, and a commit the killed server
    // had sent may still land on PostgreSQL between them; in a repeatable-read transaction
    // each of its transactions is seen whole or not at all.
    let (orders, told, logs) = if database_url.starts_with("sqlite:") {
        read_pulled(upstairs_store::SqliteStore::connect(database_url).await.unwrap(), a).await
    } else {
        let snapshot = format!("{database_url}&options%5Bdefault_transaction_isolation%5D=repeatable%20read");
        read_pulled(upstairs_store::PgStore::connect(&snapshot).await.unwrap(), a).await
    };
    assert_eq!(orders.len(), ORDERS);
    let mut cancelled = 0;
    for o in &orders {
        let notices = told.iter().filter(|n| n.subject == upstairs_engine::model::Subject::Order(o.order_id)).count();
        let rows = logs.iter().filter(|l| l.entity_id == Some(o.order_id.0)).count();
        match o.state {
            upstairs_domain::order::OrderState::Working => assert_eq!((notices, rows), (0, 0), "{o:?}"),
            upstairs_domain::order::OrderState::Cancelled => {
                assert_eq!((notices, rows), (1, 1), "{o:?}");
                cancelled += 1;
            }
            other => panic!("an order {other:?}"),
        }
    }
    cancelled
}

/// A chose cancel on disconnect and works 60 orders (made in-process). The binary serves
/// the venue on a frozen clock (a file); A's socket closes, the clock moves past the
/// grace period, and the server is SIGKILLed as soon as the first order is cancelled.
/// What is in the database then is whole per order. Restarted, with the clock moved past
/// the killed run's claim, the cancel ends every order, each told and logged once.
async fn a_cancel_on_disconnect_survives_sigkill(b: Backend) {
    let mut v = venue(b).await;
    let (_, me) = v.app.get("/api/users/me", Some(&v.a)).await;
    let a = upstairs_domain::UserId(me["user_id"].as_str().unwrap().parse().unwrap());
    let body = json!({"cancel_on_disconnect": true});
    assert_eq!(v.app.patch(&format!("/api/users/{}", a.0), Some(&v.a), body).await.0, StatusCode::OK);
    let sell = v.parent(&v.a, "SELL", 1000 * ORDERS as i64).await;
    for _ in 0..ORDERS {
        let (s, o) = v.child(&v.a, &sell, 1000, p("94.75"), false).await;
        assert_eq!(s, StatusCode::CREATED, "{o}");
    }
    v.app.running.take().unwrap().stop().await;

    let clock = v.app.dir.path().join("clock");
    let mut at = tuesday_10am() + chrono::Duration::hours(1);
    std::fs::write(&clock, at.to_rfc3339()).unwrap();
    let port = free_port();
    let envs: [(&str, &std::ffi::OsStr); 3] = [
        ("UPSTAIRS_CLOCK_FILE", clock.as_os_str()),
        ("UPSTAIRS_ALWAYS_OPEN", "true".as_ref()),
        ("UPSTAIRS_WRITES_PER_SECOND", "0".as_ref()),
    ];
    let mut server = serve_binary(&v.app.database_url, port, &[], &envs).await;
    v.app.base = format!("http://127.0.0.1:{port}");
    let token = v.app.login("a@halyard.test", PW).await;
    let db = v.app.database_url.clone();
    let wait = Duration::from_secs(15);
    {
        let args = ["127.0.0.1".into(), port.to_string(), token.clone(), "/user/topic/notifications".into()];
        let mut peer = Peer::spawn("stomp_client.py", &args);
        assert_eq!(peer.next_json(wait).await.unwrap()["event"], "connected");
        assert!(eventually(wait, || async { present(&db, Holder::User(a), at).await }).await, "A present");
    }
    let pending = || async { pending_timers(&db).await.iter().any(|t| t.kind == "disconnect.cancel") };
    assert!(eventually(wait, pending).await, "a cancel on disconnect scheduled");

    // Past the grace period: killed as soon as one order is cancelled.
    at += chrono::Duration::seconds(11);
    std::fs::write(&clock, at.to_rfc3339()).unwrap();
    let path = format!("/api/orders?parent_order_id={}", sell["parent_order_id"].as_str().unwrap());
    let deadline = std::time::Instant::now() + wait;
    loop {
        let (_, orders) = v.app.get(&path, Some(&token)).await;
        if orders.as_array().is_some_and(|o| o.iter().any(|o| o["state"] == "CANCELLED")) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "nothing cancelled");
    }
    server.kill().await.unwrap();
    let cancelled = each_working_or_cancelled_and_told(&db, a).await;
    eprintln!("killed with {cancelled} of {ORDERS} orders cancelled");

    // Restarted past the killed run's claim (two minutes): the rest, once each.
    at += chrono::Duration::minutes(3);
    std::fs::write(&clock, at.to_rfc3339()).unwrap();
    let server = serve_binary(&v.app.database_url, port, &[], &envs).await;
    let done = || async { each_working_or_cancelled_and_told(&db, a).await == ORDERS };
    assert!(eventually(Duration::from_secs(30), done).await, "the cancel did not end after the restart");
    assert!(!pending().await);
    drop(server);
}
