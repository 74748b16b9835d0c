#![allow(clippy::unwrap_used)]
//! Two nodes of one venue on one PostgreSQL database (issue 15, ADR 0026): what one node
//! commits reaches the sockets of the other at once and once; timers fire once; racing
//! takers spread over both nodes never match more than rested.

mod support;

use reqwest::StatusCode;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use support::venue::*;
use support::*;

const WAIT: Duration = Duration::from_secs(10);

/// Runs a two-node test on PostgreSQL (SQLite is one node), checking every parent after.
macro_rules! on_two_nodes {
    ($($name:ident),* $(,)?) => {
        $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            support::balanced_after(self::body::$name()).await
        })*
    };
}

on_two_nodes!(
    a_book_change_on_one_node_reaches_a_socket_on_the_other,
    a_match_request_taken_on_one_node_reaches_the_responder_on_the_other,
    a_timer_fires_once_with_both_nodes_up,
    racing_takers_over_two_nodes_never_match_more_than_rested,
    a_session_ended_on_one_node_closes_its_socket_on_the_other,
    a_node_that_stops_hearing_the_others_is_not_ready_until_it_does,
    a_node_killed_mid_job_leaves_it_to_the_other,
    a_node_reads_back_only_what_its_sessions_hear,
    a_counterparty_filter_set_on_one_node_screens_takes_on_the_other,
    an_exchange_holiday_set_on_one_node_closes_its_instruments_on_the_other,
    a_session_on_any_node_holds_off_a_cancel_on_disconnect,
);

/// A STOMP client of `token` on `node`, subscribed to `topic`.
async fn listening(node: &TestApp, token: &str, topic: &str) -> Peer {
    let mut peer =
        Peer::spawn("stomp_client.py", &["127.0.0.1".into(), node.port().to_string(), token.into(), topic.into()]);
    assert_eq!(peer.next_json(WAIT).await.unwrap()["event"], "connected");
    assert_eq!(peer.next_json(WAIT).await, Some(json!({"event": "subscribed"})));
    peer
}

/// Sends A's SELL child order of `quantity` at `price` through `node`.
async fn rest_on(v: &Venue, node: &TestApp, parent: &Value, quantity: i64, price: &'static str) -> Value {
    let (s, order) = node
        .post(
            "/api/orders",
            Some(&v.a),
            json!({"parent_order_id": parent["parent_order_id"], "quantity": quantity, "limit_price": p(price).0,
                   "residual": true, "iceberg": false, "broker_id": v.broker, "instrument_id": v.instrument,
                   "direction": "SELL"}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{order}");
    order
}

/// B takes `quantity` at 94.75 from its `parent` through `node`.
async fn take_on(v: &Venue, node: &TestApp, parent: &Value, quantity: i64) -> (StatusCode, Value) {
    node.post(
        "/api/order-match-requests",
        Some(&v.b),
        json!({"requesting_parent_order_id": parent["parent_order_id"], "quantity": quantity,
               "price": p("94.75").0, "requesting_broker_id": v.broker, "dry_run": false, "residual": false}),
    )
    .await
}

/// The sell quantity at each price of a book message.
fn sells(msg: &Value) -> Vec<(String, i64)> {
    msg["body"]["levels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["sell_quantity"].as_i64().unwrap() > 0)
        .map(|l| (l["price"].to_string(), l["sell_quantity"].as_i64().unwrap()))
        .collect()
}

mod body {
    use super::*;

    /// A trader watching the book on node 1 sees an order sent to node 2, then its
    /// cancel on node 2: each once, in order.
    pub async fn a_book_change_on_one_node_reaches_a_socket_on_the_other() {
        let v = venue(Backend::Postgres).await;
        let two = v.app.spawn_node().await;
        let topic = format!("/topic/instruments/{}/book", v.instrument);
        let mut watcher = listening(&v.app, &v.b, &topic).await;

        let sell = v.parent(&v.a, "SELL", 2000).await;
        let order = rest_on(&v, &two, &sell, 1000, "94.77").await;
        let msg = watcher.next_json(WAIT).await.expect("node 1 pushes node 2's order");
        assert_eq!(msg["destination"], topic.as_str());
        assert_eq!(sells(&msg), vec![("94.77".into(), 1000)]);

        let id = order["order_id"].as_str().unwrap();
        let (s, body) = two.delete(&format!("/api/orders/{id}"), Some(&v.a)).await;
        assert!(s.is_success(), "{s}: {body}");
        // The next push is the cancel's, not a second copy of the first.
        let msg = watcher.next_json(WAIT).await.expect("node 1 pushes the cancel");
        assert_eq!(sells(&msg), vec![]);
        drop(watcher);
        two.stop().await;
        v.app.stop().await;
    }

    /// The responder listens on node 1, the taker takes on node 2: the request reaches
    /// the responder at once, and once; its answer on node 1 reaches the taker on node 2.
    pub async fn a_match_request_taken_on_one_node_reaches_the_responder_on_the_other() {
        let v = venue(Backend::Postgres).await;
        let two = v.app.spawn_node().await;
        let topic = "/user/topic/notifications";
        let mut responder = listening(&v.app, &v.a, topic).await;
        let mut taker = listening(&two, &v.b, topic).await;

        let sell = v.parent(&v.a, "SELL", 1000).await;
        rest_on(&v, &v.app, &sell, 1000, "94.75").await;
        let buy = v.parent(&v.b, "BUY", 1000).await;
        let (s, sent) = take_on(&v, &two, &buy, 1000).await;
        assert_eq!(s, StatusCode::CREATED, "{sent}");

        let msg = responder.next_json(WAIT).await.expect("the responder on node 1 is told");
        let body = &msg["body"];
        assert_eq!((&body["type"], &body["status"]), (&json!("MATCH_REQUEST_RECEIVED"), &json!("PENDING")));
        assert_eq!(body["order_match_request_id"], sent[0]["order_match_request_id"]);

        let id = sent[0]["order_match_request_id"].as_str().unwrap();
        let (s, body) =
            v.app.patch(&format!("/api/order-match-requests/{id}"), Some(&v.a), json!({"state": "ACCEPTED"})).await;
        assert_eq!(s, StatusCode::OK, "{body}");
        // The responder's next message is the same notice, now accepted: no duplicate came between.
        let msg = responder.next_json(WAIT).await.expect("the responder's notice changes");
        assert_eq!(
            (&msg["body"]["type"], &msg["body"]["status"]),
            (&json!("MATCH_REQUEST_RECEIVED"), &json!("ACCEPTED"))
        );
        let msg = taker.next_json(WAIT).await.expect("the taker on node 2 hears the answer");
        assert_eq!(
            (&msg["body"]["type"], &msg["body"]["status"]),
            (&json!("MATCH_REQUEST_ACCEPTED"), &json!("ACCEPTED"))
        );
        assert_eq!(msg["body"]["order_match_request_id"], id);
        drop((responder, taker));
        two.stop().await;
        v.app.stop().await;
    }

    /// A match request's five-minute expiry, with both nodes' job loops running and
    /// both asked to run their due timers at the same moment: it times out once.
    pub async fn a_timer_fires_once_with_both_nodes_up() {
        let v = venue(Backend::Postgres).await;
        let two = v.app.spawn_node().await;
        let sell = v.parent(&v.a, "SELL", 1000).await;
        rest_on(&v, &two, &sell, 1000, "94.75").await;
        let buy = v.parent(&v.b, "BUY", 1000).await;
        let (s, sent) = take_on(&v, &v.app, &buy, 1000).await;
        assert_eq!(s, StatusCode::CREATED, "{sent}");
        let id = sent[0]["order_match_request_id"].as_str().unwrap().to_owned();

        v.app.clock.set(tuesday_10am() + chrono::Duration::minutes(5));
        let (one_runs, two_runs) = (v.app.running.as_ref().unwrap(), two.running.as_ref().unwrap());
        let deadline = std::time::Instant::now() + WAIT;
        loop {
            tokio::join!(one_runs.run_due_timers(), two_runs.run_due_timers());
            let (_, m) = v.app.get(&format!("/api/order-match-requests/{id}"), Some(&v.b)).await;
            if m["state"] == "TIMED_OUT" {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "still {}", m["state"]);
        }
        // Once: one audit row of the timeout, one notice to each party.
        let (s, logs) = v.app.get("/api/admin/action-logs?size=100", Some(&v.app.admin_token().await)).await;
        assert_eq!(s, StatusCode::OK, "{logs}");
        let timeouts = logs["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l.to_string().contains(&id) && l.to_string().contains("TIMED_OUT"))
            .count();
        assert_eq!(timeouts, 1, "{logs}");
        for token in [&v.a, &v.b] {
            let (_, page) = two.get("/api/notifications", Some(token)).await;
            let timed_out =
                page["items"].as_array().unwrap().iter().filter(|n| n["type"] == "MATCH_REQUEST_TIMED_OUT").count();
            assert_eq!(timed_out, 1, "{page}");
        }
        two.stop().await;
        v.app.stop().await;
    }

    /// Issue 29 (ADR 0042): each node keeps the venue's counterparty filters in a cache. A
    /// filter set through one node screens a take through the other at once (its
    /// announcement drops the other's cache), and lifted there, the take goes through.
    pub async fn a_counterparty_filter_set_on_one_node_screens_takes_on_the_other() {
        let v = venue(Backend::Postgres).await;
        let two = v.app.spawn_node().await;
        let sell = v.parent(&v.a, "SELL", 1000).await;
        rest_on(&v, &v.app, &sell, 1000, "94.75").await;
        let buy = v.parent(&v.b, "BUY", 1000).await;
        let body = json!({"requesting_parent_order_id": buy["parent_order_id"], "quantity": 1000,
                          "price": p("94.75").0, "requesting_broker_id": v.broker, "dry_run": true, "residual": false});
        async fn preview_on(node: &TestApp, token: &str, body: &Value) -> (StatusCode, Value) {
            node.post("/api/order-match-requests", Some(token), body.clone()).await
        }
        let preview = |node| preview_on(node, &v.b, &body);
        // Node one's cache holds the filters (none yet).
        assert_eq!(preview(&v.app).await.1.as_array().map(Vec::len), Some(1));
        let halyard = v.app.get("/api/users/me", Some(&v.a)).await.1["company_id"].clone();
        let (s, _) =
            two.put("/api/users/me/counterparty-filter", Some(&v.b), json!({"blocked_company_ids": [halyard]})).await;
        assert_eq!(s, StatusCode::OK);
        let deadline = std::time::Instant::now() + WAIT;
        while preview(&v.app).await.1 != json!([]) {
            assert!(std::time::Instant::now() < deadline, "node one still takes from a firm B blocked on node two");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let (s, _) = two.put("/api/users/me/counterparty-filter", Some(&v.b), json!({"blocked_company_ids": []})).await;
        assert_eq!(s, StatusCode::OK);
        let deadline = std::time::Instant::now() + WAIT;
        loop {
            let (s, sent) = take_on(&v, &v.app, &buy, 1000).await;
            if s == StatusCode::CREATED {
                assert_eq!(sent[0]["quantity"], json!(1000));
                break;
            }
            assert!(std::time::Instant::now() < deadline, "node one never saw the filter lifted: {s} {sent}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        two.stop().await;
        v.app.stop().await;
    }

    /// Issue 30 (ADR 0052): each node caches the exchanges' calendars. A holiday an admin
    /// sets through one node closes the exchange's instrument on the other at once (the
    /// announcement drops its cache); taken out there, it trades again.
    pub async fn an_exchange_holiday_set_on_one_node_closes_its_instruments_on_the_other() {
        let v = venue(Backend::Postgres).await;
        let two = v.app.spawn_node().await;
        let admin = v.app.admin_token().await;
        let path = format!("/api/admin/instruments/{}", v.instrument);
        assert_eq!(v.app.patch(&path, Some(&admin), json!({"exchange_iso_code": "XEUR"})).await.0, StatusCode::OK);
        let eurex = |holidays: Value| {
            json!({"name": "Eurex", "time_zone": "Europe/Berlin", "open_time": "08:00", "close_time": "22:00",
                   "parent_orders_from": "07:30", "days": ["Mon", "Tue", "Wed", "Thu", "Fri"], "holidays": holidays})
        };
        assert_eq!(v.app.put("/api/admin/exchanges/XEUR", Some(&admin), eurex(json!([]))).await.0, StatusCode::CREATED);
        // A parent order made through node one, as its cache of the calendars says.
        let new_parent = || {
            v.app.post(
                "/api/parent-orders",
                Some(&v.a),
                json!({"direction": "SELL", "instrument_id": v.instrument, "quantity": 500}),
            )
        };
        assert_eq!(new_parent().await.0, StatusCode::CREATED, "node one's cache holds the calendar (no holiday yet)");
        let (s, _) = two
            .put("/api/admin/exchanges/XEUR", Some(&admin), eurex(json!([{"date": "2026-03-03", "name": "Eurex Day"}])))
            .await;
        assert_eq!(s, StatusCode::OK);
        let deadline = std::time::Instant::now() + WAIT;
        loop {
            let (s, r) = new_parent().await;
            if s == StatusCode::CONFLICT {
                assert!(r["detail"].as_str().unwrap().starts_with("Eurex is closed today for Eurex Day."), "{r}");
                break;
            }
            assert_eq!(s, StatusCode::CREATED, "{r}");
            assert!(std::time::Instant::now() < deadline, "node one still takes parent orders on Eurex's holiday");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(two.put("/api/admin/exchanges/XEUR", Some(&admin), eurex(json!([]))).await.0, StatusCode::OK);
        let deadline = std::time::Instant::now() + WAIT;
        loop {
            let (s, r) = new_parent().await;
            if s == StatusCode::CREATED {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "node one never saw the holiday taken out: {s} {r}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        two.stop().await;
        v.app.stop().await;
    }

    /// Issue 29 (ADR 0043): A chose cancel on disconnect and has a session on each node.
    /// The one on node one closes: node two's lease keeps A present, and the grace period
    /// passes with A's order working. Node two then stops: node one sees A gone, and a
    /// grace period later the order is cancelled.
    pub async fn a_session_on_any_node_holds_off_a_cancel_on_disconnect() {
        use chrono::Duration as Span;
        let v = venue(Backend::Postgres).await;
        let two = v.app.spawn_node().await;
        let (_, me) = v.app.get("/api/users/me", Some(&v.a)).await;
        let (s, _) = v
            .app
            .patch(
                &format!("/api/users/{}", me["user_id"].as_str().unwrap()),
                Some(&v.a),
                json!({"cancel_on_disconnect": true}),
            )
            .await;
        assert_eq!(s, StatusCode::OK);
        let sell = v.parent(&v.a, "SELL", 1000).await;
        let order = rest_on(&v, &v.app, &sell, 1000, "94.75").await;
        let path = format!("/api/orders/{}", order["order_id"].as_str().unwrap());
        let on_two = listening(&two, &v.a, "/user/topic/notifications").await;
        let on_one = listening(&v.app, &v.a, "/user/topic/notifications").await;
        two.running.as_ref().unwrap().run_due_timers().await;
        v.app.running.as_ref().unwrap().run_due_timers().await;
        drop(on_one);
        let db = v.app.database_url.clone();
        let cancels = || async { pending_timers(&db).await.iter().filter(|t| t.kind == "disconnect.cancel").count() };
        // Node one ends its own lease once it sees the session gone: then only node two's
        // is live. Whether or not node one scheduled a cancel, A is present on node two
        // when it is due.
        let pool = sqlx::PgPool::connect(&db).await.unwrap();
        let a_id = sqlx::types::Uuid::parse_str(me["user_id"].as_str().unwrap()).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            v.app.running.as_ref().unwrap().run_due_timers().await;
            let live: i64 = sqlx::query_scalar(
                "select count(*) from presence where holder_kind = 'USER' and holder_id = $1 and until > $2",
            )
            .bind(a_id)
            .bind(upstairs_engine::Clock::now(&*v.app.clock))
            .fetch_one(&pool)
            .await
            .unwrap();
            if live == 1 {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "node one never ended its lease ({live} live)");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        v.app.clock.advance(Span::seconds(11));
        v.app.running.as_ref().unwrap().run_due_timers().await;
        assert_eq!(v.app.get(&path, Some(&v.a)).await.1["state"], "WORKING");
        assert_eq!(cancels().await, 0);

        // Node two stops. Whether it ended its lease on the way (its sessions closed) or
        // not (killed: the lease lapses by itself), node one sees A gone, and a grace
        // period later pulls the order.
        two.stop().await;
        drop(on_two);
        v.app.clock.advance(Span::seconds(16));
        v.app.running.as_ref().unwrap().run_due_timers().await;
        v.app.clock.advance(Span::seconds(10));
        v.app.running.as_ref().unwrap().run_due_timers().await;
        assert_eq!(v.app.get(&path, Some(&v.a)).await.1["state"], "CANCELLED");
        assert_eq!(cancels().await, 0);
        v.app.stop().await;
    }

    /// 1,000 takes of one block each, sent at once over both nodes, against one resting
    /// order of ten blocks: exactly ten get it, the rest are refused, nothing fails.
    pub async fn racing_takers_over_two_nodes_never_match_more_than_rested() {
        const TAKERS: usize = 1000;
        let v = Arc::new(venue(Backend::Postgres).await);
        let two = Arc::new(v.app.spawn_node().await);
        let sell = v.parent(&v.a, "SELL", 5000).await;
        rest_on(&v, &v.app, &sell, 5000, "94.75").await;
        // Ten parents big enough for a hundred takes each: takers also race on them.
        let mut parents = Vec::new();
        for _ in 0..10 {
            parents.push(v.parent(&v.b, "BUY", 50_000).await);
        }
        // As many in flight as both nodes' pools and the database take at once.
        let gate = Arc::new(tokio::sync::Semaphore::new(64));
        let mut takers = Vec::new();
        for i in 0..TAKERS {
            let (v, two, gate, parent) = (v.clone(), two.clone(), gate.clone(), parents[i % 10].clone());
            takers.push(tokio::spawn(async move {
                let _slot = gate.acquire().await.unwrap();
                let node = if i % 2 == 0 { &v.app } else { &*two };
                take_on(&v, node, &parent, 500).await
            }));
        }
        let mut taken = 0;
        for t in takers {
            let (s, body) = t.await.unwrap();
            assert!([StatusCode::CREATED, StatusCode::CONFLICT].contains(&s), "{s}: {body}");
            if s == StatusCode::CREATED {
                taken += body.as_array().unwrap().iter().map(|m| m["quantity"].as_i64().unwrap()).sum::<i64>();
            }
        }
        assert_eq!(taken, 5000, "all ten blocks of the resting order, each once");
        assert_eq!(children(&v, &v.a, &sell).await, vec![("AWAITING_MATCH".into(), 500); 10]);
        assert_balanced(&v).await;
        Arc::into_inner(two).unwrap().stop().await;
        Arc::into_inner(v).unwrap().app.stop().await;
    }

    /// The database ends the connection node 1 listens on: node 1 answers 503 on
    /// `/readyz` until it listens again, then hears node 2 as before.
    pub async fn a_node_that_stops_hearing_the_others_is_not_ready_until_it_does() {
        let v = venue(Backend::Postgres).await;
        let two = v.app.spawn_node().await;
        readiness_becomes(&v.app, StatusCode::OK).await;
        let store = upstairs_store::PgStore::connect(&v.app.database_url).await.unwrap();
        let ended: Vec<bool> = sqlx::query_scalar(
            "select pg_terminate_backend(pid) from pg_stat_activity \
             where query = 'LISTEN \"upstairs_' || current_schema() || '\"'",
        )
        .fetch_all(store.pool())
        .await
        .unwrap();
        assert_eq!(ended, vec![true, true], "both nodes' listening connections");
        readiness_becomes(&v.app, StatusCode::SERVICE_UNAVAILABLE).await;
        readiness_becomes(&v.app, StatusCode::OK).await;
        readiness_becomes(&two, StatusCode::OK).await;

        let topic = format!("/topic/instruments/{}/book", v.instrument);
        let mut watcher = listening(&v.app, &v.b, &topic).await;
        let sell = v.parent(&v.a, "SELL", 1000).await;
        rest_on(&v, &two, &sell, 1000, "94.76").await;
        let msg = watcher.next_json(WAIT).await.expect("node 1 hears node 2 again");
        assert_eq!(sells(&msg), vec![("94.76".into(), 1000)]);
        drop(watcher);
        two.stop().await;
        v.app.stop().await;
    }

    /// Two real `upstairs serve` processes on one database and one clock (a file both
    /// read): node 1 claims an activation e-mail and is SIGKILLed while its mail server
    /// keeps it waiting; node 2, up all along, sends it once node 1's lease lapses, once.
    pub async fn a_node_killed_mid_job_leaves_it_to_the_other() {
        let dir = temp_dir();
        let db = fresh_database_url(Backend::Postgres, dir.path()).await;
        upstairs::app::bootstrap_user(&db, ADMIN_EMAIL, ADMIN_PASSWORD, &["upstairs-admin"], "Upstairs").await.unwrap();
        let clock = dir.path().join("clock");
        std::fs::write(&clock, "0").unwrap();
        // Node 1's mail server takes the connection and never answers.
        let stall = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let stall_url = format!("smtp://{}", stall.local_addr().unwrap());
        let (accepted_tx, mut accepted) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = stall.accept().await {
                held.push(socket);
                let _ = accepted_tx.send(());
            }
        });
        let node = |port: u16, smtp: String| {
            let (db, clock, mail) = (db.clone(), clock.clone(), dir.path().join("mail"));
            async move {
                let envs: [(&str, &std::ffi::OsStr); 3] = [
                    ("UPSTAIRS_SMTP_URL", smtp.as_ref()),
                    ("UPSTAIRS_CLOCK_FILE", clock.as_os_str()),
                    ("UPSTAIRS_MAIL_DIR", mail.as_os_str()),
                ];
                serve_binary(&db, port, &[], &envs).await
            }
        };
        let one = free_port();
        let mut first = node(one, stall_url).await;

        admin_creates_trader(&format!("http://127.0.0.1:{one}"), "kept@halyard.test", "Kit", "Kept").await;
        // Node 1 is mid-job: it claimed the e-mail and its SMTP conversation hangs.
        tokio::time::timeout(WAIT, accepted.recv()).await.expect("node 1 connects to its mail server");
        let held = pending_timers(&db).await;
        assert!(held.iter().any(|t| t.kind == "outbox.deliver" && t.attempts == 1), "{held:?}");

        let sink = SmtpSink::start(&dir.path().join("sink"), 0).await;
        let mut second = node(free_port(), sink.url()).await;
        first.kill().await.unwrap();
        // Past node 1's two-minute lease (on the clock both nodes read): node 2 takes it.
        std::fs::write(&clock, "180").unwrap();
        let delivered = sink.wait_for("msg", 1, None).await;
        assert_eq!(header(&delivered[0], "X-Sink-Rcpt-To"), Some("kept@halyard.test"));
        let (_, outbox) = audit_and_outbox(&db).await;
        assert!(outbox.iter().all(|m| m.sent_at.is_some()), "marked sent: {outbox:?}");
        assert_eq!(sink.received("msg").len(), 1, "sent once");
        second.kill().await.unwrap();
    }

    /// A logout on node 2 closes that session's socket on node 1 at once.
    pub async fn a_session_ended_on_one_node_closes_its_socket_on_the_other() {
        let v = venue(Backend::Postgres).await;
        let two = v.app.spawn_node().await;
        let mut peer = listening(&v.app, &v.a, "/user/topic/orders").await;
        let (s, _) = two.call(reqwest::Method::DELETE, "/api/auth/session", Some(&v.a), None).await;
        assert_eq!(s, StatusCode::NO_CONTENT);
        let got = peer.next_json(WAIT).await.expect("an ERROR frame well before the 60 s re-validation");
        assert_eq!((&got["event"], &got["message"]), (&json!("error"), &json!("session ended")), "{got}");
        // And node 1 no longer takes the token.
        assert_eq!(v.app.get("/api/users/me", Some(&v.a)).await.0, StatusCode::UNAUTHORIZED);
        drop(peer);
        two.stop().await;
        v.app.stop().await;
    }

    /// Another node's change for one user is read back only where that user has a
    /// session: B's parent is counted and skipped on node 2 while B is away, and B's next
    /// one reaches B's socket there once B connects.
    pub async fn a_node_reads_back_only_what_its_sessions_hear() {
        let v = venue(Backend::Postgres).await;
        let two = v.app.spawn_node().await;
        v.parent(&v.b, "BUY", 1000).await;
        let deadline = std::time::Instant::now() + WAIT;
        let skipped = loop {
            let n = metric(&two, "upstairs_announcements_skipped_total").await;
            if n > 0 {
                break n;
            }
            assert!(std::time::Instant::now() < deadline, "node 2 never skipped B's parent");
            tokio::time::sleep(Duration::from_millis(10)).await;
        };

        let mut b = listening(&two, &v.b, "/user/topic/orders").await;
        let parent = v.parent(&v.b, "BUY", 1000).await;
        let msg = b.next_json(WAIT).await.expect("node 2 reads B's parent back and delivers it");
        assert_eq!(msg["body"]["type"], "PARENT_ORDER_UPDATED", "{msg}");
        assert_eq!(msg["body"]["parent_order_id"], parent["parent_order_id"]);
        assert_eq!(metric(&two, "upstairs_announcements_skipped_total").await, skipped, "nothing skipped for B now");
        assert!(metric(&two, "upstairs_announcements_heard_total").await > skipped);
        drop(b);
        two.stop().await;
        v.app.stop().await;
    }
}

/// `/readyz` of `node`, until it answers `want` (within [`WAIT`]).
async fn readiness_becomes(node: &TestApp, want: StatusCode) {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let s = node.client.get(format!("{}/readyz", node.base)).send().await.unwrap().status();
        if s == want {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "/readyz still {s}, want {want}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A counter or gauge of `node`'s `/metrics`.
async fn metric(node: &TestApp, name: &str) -> u64 {
    let text = node.client.get(node.metrics_url()).send().await.unwrap().text().await.unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
}
