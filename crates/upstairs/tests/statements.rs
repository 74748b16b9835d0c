#![allow(clippy::unwrap_used)]
//! What a trade costs the database: the statements of a take that the responder accepts,
//! counted from sqlx's own query events inside each use case's span, on both backends.
//! `STATEMENTS_LOG=1 cargo test -p upstairs --test statements -- --nocapture` lists them.
//!
//! Issue 27 measured 16 (take) and 54 (accept) on PostgreSQL before a transaction read
//! each company and user once (the store's per-transaction memo) and locked a match's
//! parents in one statement; then a company came with its brokers in one statement, and an
//! accept read both orders, the FIX origins of both parents, and changed both parents and
//! the received notification, each in one statement (26); a take read the side of the book
//! it may reach in one statement instead of its levels and then each level (13); then a
//! take read that side through its parent, with each resting order's creator's auto-answer,
//! before locking, locked its parents in one statement and wrote the match request, its
//! timers, notification and audit row in one (8 on PostgreSQL, half of 16; 9 on SQLite,
//! which writes them one by one in process and, with one writer, reads the side once); and an accept wrote its new rows (the
//! notification, both brokers' links, their e-mails and timers, the audit row) in one,
//! and read what the e-mails name (both sides' brokers, clients and traders) in one
//! statement per kind (16 on PostgreSQL, 22 on SQLite); then an accept no longer read its
//! request again inside its transaction (15 and 21); then a keyed take no longer looked
//! its key up before it acted, only when refused. The bounds keep what was won.
mod support;

use reqwest::StatusCode;
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use support::venue::*;
use support::*;
use tracing::Subscriber;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// Statements seen per engine use case span (its name), and outside any.
#[derive(Default)]
struct Counts(Mutex<HashMap<&'static str, u64>>);

struct Counting(Arc<Counts>);

impl<S: Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Counting {
    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        if !event.metadata().target().starts_with("sqlx::query") {
            return;
        }
        let name = ctx
            .event_scope(event)
            .and_then(|scope| scope.from_root().find(|s| s.name() != "request").map(|s| s.name()))
            .unwrap_or("(none)");
        *self.0.0.lock().unwrap().entry(name).or_default() += 1;
        if std::env::var_os("STATEMENTS_LOG").is_some() {
            struct V(String);
            impl tracing::field::Visit for V {
                fn record_debug(&mut self, f: &tracing::field::Field, v: &dyn std::fmt::Debug) {
                    if f.name() == "db.statement" || f.name() == "summary" {
                        self.0.push_str(&format!("{v:?} ").chars().take(160).collect::<String>());
                    }
                }
            }
            let mut v = V(String::new());
            event.record(&mut v);
            eprintln!("STMT {name}: {}", v.0.replace("\\n", " "));
        }
    }
}

fn counts() -> &'static Arc<Counts> {
    static COUNTS: OnceLock<Arc<Counts>> = OnceLock::new();
    COUNTS.get_or_init(|| {
        let counts = Arc::new(Counts::default());
        let filter = tracing_subscriber::filter::Targets::new()
            .with_default(tracing::Level::INFO)
            .with_target("sqlx::query", tracing::Level::TRACE);
        let subscriber = tracing_subscriber::registry().with(Counting(counts.clone()).with_filter(filter));
        tracing::subscriber::set_global_default(subscriber).expect("the only subscriber of this binary");
        counts
    })
}

use tracing_subscriber::Layer as _;

on_both_backends!(a_take_and_its_accept_count_their_statements);

async fn a_take_and_its_accept_count_their_statements(backend: Backend) {
    let counts = counts();
    let v = venue_with(backend, |s| s.scheduler_poll = std::time::Duration::from_secs(3600)).await;
    let sell = v.parent(&v.a, "SELL", 1000).await;
    let (s, _) = v.child(&v.a, &sell, 1000, p("94.75"), false).await;
    assert_eq!(s, StatusCode::CREATED);
    let buy = v.parent(&v.b, "BUY", 1000).await;
    let take_body = |dry_run: bool| {
        json!({"requesting_parent_order_id": buy["parent_order_id"], "quantity": 1000,
               "price": p("94.75").0, "requesting_broker_id": v.broker, "dry_run": dry_run, "residual": false})
    };
    // A running venue's caches are warm: its counterparty filters were read by the takes
    // and previews before this one (ADR 0042), here by a preview.
    let (s, _) = v.app.post("/api/order-match-requests", Some(&v.b), take_body(true)).await;
    assert_eq!(s, StatusCode::OK);
    counts.0.lock().unwrap().clear();
    // Sent with a key, as a client that retries does: a new key costs no read (ADR 0059).
    let (s, took) = v.app.post_keyed("/api/order-match-requests", &v.b, "take-1", take_body(false)).await;
    assert_eq!(s, StatusCode::CREATED, "{took}");
    let take = counts.0.lock().unwrap().clone();
    counts.0.lock().unwrap().clear();
    let m = &took[0];
    let id = m["order_match_request_id"].as_str().unwrap();
    let (s, body) =
        v.app.patch(&format!("/api/order-match-requests/{id}"), Some(&v.a), json!({"state": "ACCEPTED"})).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let accept = counts.0.lock().unwrap().clone();
    println!("{backend:?} take: {take:?}");
    println!("{backend:?} accept: {accept:?}");
    let (take, accept) = (take["take"], accept["answer_match_request"]);
    let (most_take, most_accept) = if matches!(backend, Backend::Postgres) { (8, 15) } else { (9, 21) };
    assert!(take <= most_take, "a take now costs {take} statements");
    assert!(accept <= most_accept, "an accept now costs {accept} statements");
}
