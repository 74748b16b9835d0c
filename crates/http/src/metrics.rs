//! `/metrics` in the Prometheus text format (0.0.4): requests by route and status with
//! latency histograms, kept here; open STOMP sessions, the database's backlog (outboxes,
//! due timers), pool use, matches and whether the other nodes are heard, read at each
//! scrape. Routes are the matched templates (`/api/orders/{order_id}`), never raw paths,
//! so the number of series stays bounded and no id or token reaches a label.
//!
//! It is served on its own address ([`router`], `--metrics-bind`), loopback by default,
//! never on the application's port: trade and match-request counts are not for everyone
//! who can reach the venue.

use axum::extract::{MatchedPath, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;
use upstairs_engine::Store;

use crate::AppState;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

/// Requests seen by this node, by method and route.
#[derive(Default)]
pub struct RequestMetrics {
    routes: Mutex<HashMap<(String, String), Route>>,
}

#[derive(Default)]
struct Route {
    statuses: HashMap<u16, u64>,
    /// Cumulative counts per bucket of [`BUCKETS`].
    buckets: [u64; BUCKETS.len()],
    count: u64,
    seconds: f64,
}

impl RequestMetrics {
    fn observe(&self, method: &str, route: &str, status: u16, seconds: f64) {
        let mut routes = self.routes.lock().unwrap_or_else(PoisonError::into_inner);
        let r = routes.entry((method.to_owned(), route.to_owned())).or_default();
        *r.statuses.entry(status).or_default() += 1;
        for (i, bound) in BUCKETS.iter().enumerate() {
            if seconds <= *bound {
                r.buckets[i] += 1;
            }
        }
        r.count += 1;
        r.seconds += seconds;
    }

    fn write(&self, out: &mut String) {
        let routes = self.routes.lock().unwrap_or_else(PoisonError::into_inner);
        let mut keys: Vec<_> = routes.keys().collect();
        keys.sort();
        let _ =
            writeln!(out, "# HELP upstairs_http_requests_total HTTP requests answered, by method, route and status.");
        let _ = writeln!(out, "# TYPE upstairs_http_requests_total counter");
        for k @ (method, route) in &keys {
            let mut statuses: Vec<_> = routes[*k].statuses.iter().collect();
            statuses.sort();
            for (status, n) in statuses {
                let _ = writeln!(
                    out,
                    "upstairs_http_requests_total{{method=\"{method}\",route=\"{}\",status=\"{status}\"}} {n}",
                    escape(route)
                );
            }
        }
        let _ = writeln!(
            out,
            "# HELP upstairs_http_request_duration_seconds Time to answer HTTP requests, by method and route."
        );
        let _ = writeln!(out, "# TYPE upstairs_http_request_duration_seconds histogram");
        for k @ (method, route) in &keys {
            let r = &routes[*k];
            let labels = format!("method=\"{method}\",route=\"{}\"", escape(route));
            for (bound, n) in BUCKETS.iter().zip(r.buckets) {
                let _ = writeln!(out, "upstairs_http_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {n}");
            }
            let _ = writeln!(out, "upstairs_http_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}", r.count);
            let _ = writeln!(out, "upstairs_http_request_duration_seconds_sum{{{labels}}} {}", r.seconds);
            let _ = writeln!(out, "upstairs_http_request_duration_seconds_count{{{labels}}} {}", r.count);
        }
    }
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// Inside routing: hands the matched route template on to [`track`] with the response.
pub async fn mark_route(req: Request, next: Next) -> Response {
    let matched = req.extensions().get::<MatchedPath>().cloned();
    let mut res = next.run(req).await;
    if let Some(m) = matched {
        res.extensions_mut().insert(m);
    }
    res
}

/// Around everything: times each request and counts it under its route (`other` for
/// what matched no route: the web app's files, unknown paths).
pub async fn track(State(metrics): State<Arc<RequestMetrics>>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().as_str().to_owned();
    let res = next.run(req).await;
    let route = res.extensions().get::<MatchedPath>().map_or("other", |m| m.as_str());
    metrics.observe(&method, route, res.status().as_u16(), started.elapsed().as_secs_f64());
    res
}

fn gauge(out: &mut String, name: &str, help: &str, kind: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}");
}

/// The metrics address's whole app: `GET /metrics`, 404 for anything else.
pub fn router<S: Store>(state: AppState<S>) -> axum::Router {
    axum::Router::new()
        .route("/metrics", axum::routing::get(metrics::<S>))
        .fallback(|| async { StatusCode::NOT_FOUND })
        .with_state(state)
}

/// `GET /metrics`.
pub async fn metrics<S: Store>(State(st): State<AppState<S>>) -> Response {
    let mut out = String::with_capacity(16 * 1024);
    st.requests.write(&mut out);
    let e = &st.engine;
    gauge(
        &mut out,
        "upstairs_stomp_sessions",
        "Open STOMP sessions on this node.",
        "gauge",
        st.realtime.open_sessions(),
    );
    gauge(
        &mut out,
        "upstairs_book_reads_total",
        "Books read back to push them to their watchers on this node (never one per watcher).",
        "counter",
        st.realtime.book_reads(),
    );
    let (in_use, open) = e.store().pool_use();
    gauge(&mut out, "upstairs_db_connections_in_use", "Database connections in use.", "gauge", in_use);
    gauge(&mut out, "upstairs_db_connections_open", "Database connections open.", "gauge", open);
    let c = &e.counters;
    gauge(
        &mut out,
        "upstairs_match_requests_total",
        "Match requests sent through this node.",
        "counter",
        c.match_requests.load(Ordering::Relaxed),
    );
    gauge(
        &mut out,
        "upstairs_matches_total",
        "Trades made through this node.",
        "counter",
        c.matches.load(Ordering::Relaxed),
    );
    gauge(
        &mut out,
        "upstairs_peers_heard",
        "1 while this node hears the other nodes (or has none).",
        "gauge",
        u8::from(e.hears_peers()),
    );
    gauge(
        &mut out,
        "upstairs_announcements_heard_total",
        "Changes the other nodes announced that this node heard.",
        "counter",
        c.announcements_heard.load(Ordering::Relaxed),
    );
    gauge(
        &mut out,
        "upstairs_announcements_skipped_total",
        "Of those, changes for one user with no session here: not read back.",
        "counter",
        c.announcements_skipped.load(Ordering::Relaxed),
    );
    gauge(
        &mut out,
        "upstairs_announcements_dropped_total",
        "Changes this node could not announce to the other nodes.",
        "counter",
        e.announcements_dropped(),
    );
    out.push_str(
        "# HELP upstairs_take_previews_total Take previews per firm, answered or refused by the throttle.\n\
         # TYPE upstairs_take_previews_total counter\n",
    );
    let previews: Vec<_> = c.previews.lock().map(|m| m.iter().map(|(k, v)| (*k, *v)).collect()).unwrap_or_default();
    for (company, (answered, throttled)) in previews {
        use std::fmt::Write as _;
        let _ = writeln!(out, "upstairs_take_previews_total{{company=\"{company}\",outcome=\"answered\"}} {answered}");
        let _ =
            writeln!(out, "upstairs_take_previews_total{{company=\"{company}\",outcome=\"throttled\"}} {throttled}");
    }
    let now = e.clock().now();
    let age = |t: Option<chrono::DateTime<chrono::Utc>>| {
        t.map_or(0.0, |t| (now - t).num_milliseconds().max(0) as f64 / 1000.0)
    };
    match e.scheduler.backlog().await {
        Ok(b) => {
            gauge(&mut out, "upstairs_outbox_emails", "E-mails not yet delivered.", "gauge", b.emails);
            gauge(
                &mut out,
                "upstairs_outbox_email_age_seconds",
                "Age of the oldest e-mail not yet delivered.",
                "gauge",
                age(b.oldest_email),
            );
            gauge(&mut out, "upstairs_outbox_fix_messages", "FIX messages not yet sent.", "gauge", b.fix_messages);
            gauge(
                &mut out,
                "upstairs_outbox_fix_age_seconds",
                "Age of the oldest FIX message not yet sent.",
                "gauge",
                age(b.oldest_fix_message),
            );
            gauge(&mut out, "upstairs_timers_due", "Timers due and not yet run.", "gauge", b.timers_due);
            gauge(
                &mut out,
                "upstairs_timer_lag_seconds",
                "How late the most overdue timer is.",
                "gauge",
                age(b.oldest_due),
            );
            gauge(
                &mut out,
                "upstairs_instruments_stale",
                "Instruments without a recent exchange price: nothing trades on them (ADR 0048).",
                "gauge",
                b.stale_instruments,
            );
        }
        Err(e) => {
            tracing::warn!(error = %e, "metrics: could not read the backlog");
            gauge(
                &mut out,
                "upstairs_backlog_readable",
                "0 when the database's backlog could not be read.",
                "gauge",
                0,
            );
        }
    }
    (StatusCode::OK, [(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], out).into_response()
}
