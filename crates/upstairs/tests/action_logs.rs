#![allow(clippy::unwrap_used)]
//! The action log over HTTP on both backends (`GET /api/admin/action-logs`): paged with
//! its total, filtered by e-mail, sorted, each row with its user and details; for venue
//! admins only. And the log's promise: every mutating operation the API documents leaves
//! a row, walked call by call against a table that the document itself is checked against.
mod support;

use chrono::Duration;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashSet};
use support::venue::*;
use support::*;
use upstairs::app;

on_both_backends!(
    pages_filters_and_sorts,
    only_venue_admins_read_it,
    every_mutating_operation_leaves_a_row,
    filters_by_entity_operation_company_and_time
);

/// A band move by the venue itself (a market-data feed, the demo's), in the app's database.
struct MoveBand(upstairs_domain::InstrumentId);

impl app::AsyncEngineFn<()> for MoveBand {
    async fn call<S: upstairs_engine::Store>(self, engine: upstairs_engine::Engine<S>) -> anyhow::Result<()> {
        let d = |s: &str| s.parse::<rust_decimal::Decimal>().unwrap();
        engine.reference.move_band(None, self.0, d("94.71"), d("94.81")).await?;
        Ok(())
    }
}

/// Issue 28.18: on a live venue people's actions must stand out. Filters by entity,
/// operation, the acting user's company and a time range (to the second), and without the
/// band moves the venue made by itself; an operator's band move stays.
async fn filters_by_entity_operation_company_and_time(b: Backend) {
    let app = TestApp::spawn_at(b, t0()).await;
    let admin = app.admin_token().await;
    app::bootstrap_user(&app.database_url, "tess@halyard.test", PW, &["trader"], "Halyard").await.unwrap();
    app.clock.advance(Duration::seconds(1));
    let tess = app.login("tess@halyard.test", PW).await;
    let (s, inst) = app
        .post("/api/admin/instruments", Some(&admin), json!({"name": "Euribor 3M Dec26-Mar27", "term": "Dec26-Mar27", "min_quantity": 500,
            "tick_size": 0.01, "exchange_id": "I", "currency": "EUR", "min_tick_price": 94.70, "max_tick_price": 94.80}))
        .await;
    assert_eq!(s, StatusCode::CREATED, "{inst}");
    let id = inst["instrument_id"].as_str().unwrap().to_owned();
    app.clock.advance(Duration::seconds(1));
    let (s, _) = app
        .post(
            &format!("/api/admin/instruments/{id}/band"),
            Some(&admin),
            json!({"min_tick_price": 94.72, "max_tick_price": 94.82}),
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    app::with_engine(&app.database_url, MoveBand(upstairs_domain::InstrumentId(id.parse().unwrap()))).await.unwrap();
    let (all, total) = page(&app, &admin, "size=500").await;

    // Entity and operation, exactly and in any case.
    let (bands, t) = page(&app, &admin, "size=500&entity=Instrument&operation=band").await;
    assert_eq!(t, 2, "{bands:?}");
    assert!(bands.iter().all(|i| i["entity"] == "instrument" && i["operation"] == "band"));
    // Without the venue's own band moves: the operator's stays, every other row too.
    let (people, t) = page(&app, &admin, "size=500&automatic_band_moves=false").await;
    assert_eq!(t, total - 1);
    assert!(!people.iter().any(|i| i["operation"] == "band" && i["user"].is_null()), "{people:?}");
    assert!(people.iter().any(|i| i["operation"] == "band" && email_of(i) == ADMIN_EMAIL));
    // The acting user's company.
    let halyard = app.get("/api/users/me", Some(&tess)).await.1["company_id"].as_str().unwrap().to_owned();
    let (of_halyard, t) = page(&app, &admin, &format!("size=500&company_id={halyard}")).await;
    assert_eq!(t as usize, all.iter().filter(|i| email_of(i) == "tess@halyard.test").count());
    assert!(t >= 1 && of_halyard.iter().all(|i| email_of(i) == "tess@halyard.test"), "{of_halyard:?}");
    // A time range, to the second: from is in, until is out.
    let first = all.iter().map(at).min().unwrap();
    let from = (first + Duration::seconds(1)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let until = (first + Duration::seconds(2)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let (in_range, t) =
        page(&app, &admin, &format!("size=500&from={}&until={}", from.replace('+', "%2B"), until.replace('+', "%2B")))
            .await;
    let want =
        all.iter().filter(|i| at(i) >= first + Duration::seconds(1) && at(i) < first + Duration::seconds(2)).count();
    assert_eq!((t as usize, in_range.len()), (want, want));
    assert!(want >= 1);
    // Combined, and refused when the range is empty or a value is not of its kind.
    let (none, t) = page(&app, &admin, &format!("size=500&entity=instrument&company_id={halyard}")).await;
    assert_eq!((none, t), (vec![], 0));
    for query in [
        format!("from={until}&until={from}"),
        "company_id=halyard".into(),
        "automatic_band_moves=maybe".into(),
        "from=yesterday".into(),
    ] {
        let (s, body) = app.get(&format!("{LOGS}?{}", query.replace('+', "%2B")), Some(&admin)).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{query}: {body}");
    }
    app.stop().await;
}

const LOGS: &str = "/api/admin/action-logs";

/// The items of one page, asserting it answered 200.
async fn page(app: &TestApp, token: &str, query: &str) -> (Vec<Value>, i64) {
    let (s, body) = app.get(&format!("{LOGS}?{query}"), Some(token)).await;
    assert_eq!(s, StatusCode::OK, "{query}: {body}");
    (body["items"].as_array().unwrap().clone(), body["total_items"].as_i64().unwrap())
}

fn ids(items: &[Value]) -> Vec<String> {
    items.iter().map(|i| i["action_log_id"].as_str().unwrap().to_owned()).collect()
}

fn at(item: &Value) -> chrono::DateTime<chrono::FixedOffset> {
    chrono::DateTime::parse_from_rfc3339(item["created_at"].as_str().unwrap()).unwrap()
}

fn email_of(item: &Value) -> &str {
    item["user"]["email"].as_str().unwrap_or("")
}

async fn pages_filters_and_sorts(b: Backend) {
    let app = TestApp::spawn_at(b, t0()).await;
    let admin = app.admin_token().await;
    for (email, role, company) in [
        ("tess@halyard.test", "trader", "Halyard"),
        ("theo@kestrel.test", "trader", "Kestrel"),
        ("sam@upstairs.test", "upstairs-sales", "Upstairs"),
    ] {
        app::bootstrap_user(&app.database_url, email, PW, &[role], company).await.unwrap();
        app.clock.advance(Duration::seconds(1));
        let token = app.login(email, PW).await;
        app.clock.advance(Duration::seconds(1));
        let (_, me) = app.get("/api/users/me", Some(&token)).await;
        let path = format!("/api/users/{}", me["user_id"].as_str().unwrap());
        let (s, v) = app.patch(&path, Some(&token), json!({"auto_accept": "INSTANT"})).await;
        assert_eq!(s, StatusCode::OK, "{v}");
    }
    app.clock.advance(Duration::seconds(1));
    let (s, v) = app
        .post(
            "/api/admin/companies",
            Some(&admin),
            json!({"name": "Northgate", "full_name": "Northgate LLP", "roles": ["broker"]}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");

    // Everything the store holds, newest first (ties: the later id first), with its user.
    let (stored, _) = audit_and_outbox(&app.database_url).await;
    let stored_ids: Vec<String> = stored.iter().map(|l| l.action_log_id.to_string()).collect();
    let (all, total) = page(&app, &admin, "size=500").await;
    assert!(total >= 14, "{total} rows: {all:?}");
    assert_eq!((total, ids(&all)), (stored.len() as i64, stored_ids.clone()));
    let northgate = all.iter().find(|i| i["entity"] == "company" && i["user"]["email"] == ADMIN_EMAIL).unwrap();
    assert_eq!((northgate["entity"].clone(), northgate["operation"].clone()), (json!("company"), json!("create")));
    assert_eq!(northgate["entity_id"], v["company_id"]);
    assert_eq!(northgate["user"]["email"], "admin@upstairs.test");
    assert_eq!(northgate["user"]["company_name"], "Upstairs");
    assert_eq!(northgate["created_at"], "2026-03-02T10:00:07Z");
    assert_eq!(northgate["details"]["after"]["name"], "Northgate", "{northgate}");
    let prefs =
        all.iter().find(|i| i["operation"] == "update_preferences" && email_of(i) == "theo@kestrel.test").unwrap();
    assert_eq!(prefs["user"]["company_name"], "Kestrel");
    assert_eq!(
        (prefs["details"]["before"]["auto_accept"].clone(), prefs["details"]["after"]["auto_accept"].clone()),
        (Value::Null, json!("INSTANT"))
    );
    // What the venue did by itself (the bootstrap) has no user.
    let bootstrap = all.iter().find(|i| i["operation"] == "bootstrap").unwrap();
    assert_eq!(bootstrap["user"], Value::Null);

    // The default page is 50 rows, newest first; pages do not overlap and keep the total.
    let (first, t) = page(&app, &admin, "").await;
    assert_eq!((t, ids(&first)), (total, stored_ids.iter().take(50).cloned().collect::<Vec<_>>()));
    let mut walked = Vec::new();
    for n in 0.. {
        let (items, t) = page(&app, &admin, &format!("page={n}&size=4")).await;
        assert_eq!(t, total);
        if items.is_empty() {
            break;
        }
        assert!(items.len() <= 4);
        walked.extend(ids(&items));
    }
    assert_eq!(walked, stored_ids);
    let (oldest_first, _) = page(&app, &admin, "size=500&order_by=ASC").await;
    assert_eq!(ids(&oldest_first), stored_ids.iter().rev().cloned().collect::<Vec<_>>());
    let (past_the_end, t) = page(&app, &admin, "page=1000000&size=500").await;
    assert_eq!((past_the_end.len(), t), (0, total));

    // By e-mail: a part of it in any case, or all of it; blank is no filter.
    let of = |part: &str| ids(&all.iter().filter(|i| email_of(i).contains(part)).cloned().collect::<Vec<_>>());
    let (tess, t) = page(&app, &admin, "size=500&email=TESS%40HALYARD").await;
    assert_eq!((t, ids(&tess)), (of("tess@halyard").len() as i64, of("tess@halyard")));
    assert_eq!(tess.len(), 2, "login and preferences: {tess:?}");
    assert_eq!(page(&app, &admin, "size=500&email=tess@halyard.test").await.1, 2);
    let (upstairs, _) = page(&app, &admin, "size=500&email=upstairs.test").await;
    assert_eq!(ids(&upstairs), of("upstairs.test"));
    assert!(upstairs.iter().any(|i| email_of(i) == "sam@upstairs.test"));
    assert!(upstairs.iter().any(|i| email_of(i) == "admin@upstairs.test"));
    assert_eq!(page(&app, &admin, "size=500&email=nobody").await, (vec![], 0));
    assert_eq!(page(&app, &admin, "size=500&email=%25").await.1, 0, "% is a character, not a pattern");
    assert_eq!(page(&app, &admin, "size=500&email=%20%20").await.1, total);
    let (tess_page, t) = page(&app, &admin, "size=1&page=1&email=tess").await;
    assert_eq!((t, ids(&tess_page)), (2, vec![of("tess")[1].clone()]));

    // Sorted by a column (ascending unless asked), ties newest first; no user sorts first.
    let sorted_by = |items: &[Value], key: &dyn Fn(&Value) -> String, descending: bool| {
        items.windows(2).all(|w| {
            let (a, b) = (key(&w[0]), key(&w[1]));
            let in_order = if descending { a >= b } else { a <= b };
            let tie_newest_first = a != b || at(&w[0]) >= at(&w[1]);
            in_order && tie_newest_first
        })
    };
    let email = |i: &Value| email_of(i).to_owned();
    let entity = |i: &Value| i["entity"].as_str().unwrap().to_owned();
    let operation = |i: &Value| i["operation"].as_str().unwrap().to_owned();
    let (by_email, t) = page(&app, &admin, "size=500&sort_by=email").await;
    assert_eq!(t, total);
    assert!(sorted_by(&by_email, &email, false), "{:?}", by_email.iter().map(email).collect::<Vec<_>>());
    assert_eq!(by_email[0]["user"], Value::Null);
    assert_eq!(by_email.last().unwrap()["user"]["email"], "theo@kestrel.test");
    let (by_email, _) = page(&app, &admin, "size=500&sort_by=email&order_by=DESC").await;
    assert!(sorted_by(&by_email, &email, true));
    let (by_entity, _) = page(&app, &admin, "size=500&sort_by=entity&order_by=ASC").await;
    assert!(sorted_by(&by_entity, &entity, false), "{:?}", by_entity.iter().map(entity).collect::<Vec<_>>());
    assert_eq!(by_entity[0]["entity"], "company");
    let (by_operation, _) = page(&app, &admin, "size=500&sort_by=operation&order_by=DESC").await;
    assert!(sorted_by(&by_operation, &operation, true));
    assert_eq!(by_operation[0]["operation"], "update_preferences");
    let (by_time, _) = page(&app, &admin, "size=500&sort_by=created_at").await;
    assert_eq!(ids(&by_time), stored_ids, "created_at sorts newest first by default");
    let mut seen = BTreeSet::new();
    for (items, _) in
        [page(&app, &admin, "size=5&sort_by=entity").await, page(&app, &admin, "page=1&size=5&sort_by=entity").await]
    {
        for id in ids(&items) {
            assert!(seen.insert(id), "a row on two pages");
        }
    }

    // Parameters outside their bounds, or not of the documented values, are refused.
    for query in [
        "size=0",
        "size=501",
        "size=-5",
        "page=-1",
        "size=ten",
        "page=1.5",
        "sort_by=password_hash",
        "sort_by=created_at;drop table action_log",
        "order_by=UP",
    ] {
        let (s, body) = app.get(&format!("{LOGS}?{query}"), Some(&admin)).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{query}: {body}");
        assert!(body["detail"].as_str().is_some_and(|d| !d.is_empty()), "{query}: {body}");
    }
    let (_, body) = app.get(&format!("{LOGS}?size=0&page=-1"), Some(&admin)).await;
    let fields: Vec<&str> = body["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    assert_eq!(fields, ["page", "size"], "{body}");
    assert_eq!(page(&app, &admin, "size=500&page=0").await.1, total, "the table is still there");
    app.stop().await;
}

async fn only_venue_admins_read_it(b: Backend) {
    let app = TestApp::spawn(b).await;
    let admin = app.admin_token().await;
    assert_eq!(app.get(LOGS, None).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(app.get(LOGS, Some("not-a-session")).await.0, StatusCode::UNAUTHORIZED);
    // Spec section 6: Action logs are for the admin flag; the other roles are refused,
    // whatever they ask for.
    for (email, role) in [
        ("trader@halyard.test", "trader"),
        ("sales@upstairs.test", "upstairs-sales"),
        ("boss@halyard.test", "company-admin"),
        ("sandbox@halyard.test", "sandbox"),
    ] {
        let company = if role == "upstairs-sales" { "Upstairs" } else { "Halyard" };
        app::bootstrap_user(&app.database_url, email, PW, &[role], company).await.unwrap();
        let token = app.login(email, PW).await;
        for query in ["", "?size=500", &format!("?email={email}")] {
            let (s, body) = app.get(&format!("{LOGS}{query}"), Some(&token)).await;
            assert_eq!(s, StatusCode::FORBIDDEN, "{role} {query}: {body}");
            assert_eq!(body["detail"], "You do not have permission to do this.");
            assert!(body.get("items").is_none());
        }
    }
    let (items, total) = page(&app, &admin, "").await;
    assert!(total > 0 && !items.is_empty());
    app.stop().await;
}

/// Every mutating operation the API documents (`METHOD path`) and the row a successful
/// call leaves (entity, operation). An operation with several outcomes is listed once
/// per outcome the walk below takes. The test fails if the OpenAPI document has a
/// mutating operation missing here, so a new endpoint cannot escape the action log.
const AUDITED: &[(&str, &str, &str)] = &[
    ("POST /api/auth/login", "session", "login"),
    ("DELETE /api/auth/session", "session", "logout"),
    ("POST /api/admin/companies", "company", "create"),
    ("PATCH /api/admin/companies/{id}", "company", "update"),
    ("POST /api/admin/instruments", "instrument", "create"),
    ("PATCH /api/admin/instruments/{id}", "instrument", "update"),
    ("POST /api/admin/instruments/{id}/band", "instrument", "band"),
    ("POST /api/admin/instruments/{id}/settings", "instrument", "settings_scheduled"),
    ("DELETE /api/admin/instruments/{id}/settings/{setting_id}", "instrument", "settings_cancelled"),
    ("PUT /api/admin/exchanges/{mic}", "exchange", "create"),
    ("PUT /api/admin/exchanges/{mic}", "exchange", "update"),
    ("DELETE /api/admin/exchanges/{mic}", "exchange", "delete"),
    ("POST /api/users", "user", "create"),
    ("PATCH /api/users/{id}", "user", "update"),
    ("PATCH /api/users/{id}", "user", "update_preferences"),
    ("POST /api/users/password-reset", "user", "reset_link_requested"),
    ("POST /api/users/password-reset", "user", "activation_link_requested"),
    ("POST /api/users/password-reset/{hash}", "user", "password_set"),
    ("POST /api/parent-orders", "parent_order", "create"),
    ("DELETE /api/parent-orders/{id}", "parent_order", "cancel"),
    ("POST /api/orders", "order", "create"),
    ("PATCH /api/orders/{id}", "order", "update"),
    ("PATCH /api/orders/{id}", "order", "broker_accepted"),
    ("DELETE /api/orders/{id}", "order", "cancel"),
    ("POST /api/order-match-requests", "match_request", "create"),
    ("PATCH /api/order-match-requests/{id}", "match_request", "ACCEPTED"),
    ("PATCH /api/order-match-requests/{id}", "match_request", "REJECTED"),
    ("PATCH /api/order-match-requests/{id}", "match_request", "CANCELLED"),
    ("PATCH /api/notifications/{id}", "notification", "update"),
    ("POST /api/rfqs", "rfq", "create"),
    ("PATCH /api/rfqs/{id}", "rfq", "CANCELLED"),
    ("POST /api/rfqs/{id}/responses", "rfq_response", "RESPONDED"),
    ("PATCH /api/rfqs/{id}/responses/{response_id}", "rfq", "accept"),
    ("PATCH /api/admin/orders/{id}", "order", "price_correction"),
    ("POST /api/companies/{id}/kill-switch", "company", "kill_switch_on"),
    ("DELETE /api/companies/{id}/kill-switch", "company", "kill_switch_off"),
    ("PUT /api/companies/{id}/counterparty-filter", "counterparty_filter", "update"),
    ("PUT /api/users/me/counterparty-filter", "counterparty_filter", "update"),
    ("POST /api/admin/companies/{id}/accounts", "account", "create"),
    ("PATCH /api/admin/companies/{id}/accounts/{account_id}", "account", "update"),
    ("PUT /api/orders/{order_id}/allocation", "order", "allocate"),
    ("POST /api/admin/newsletters", "newsletter", "create"),
    ("POST /api/admin/newsletters/{newsletterId}/recipients", "newsletter", "add_recipients"),
    ("DELETE /api/admin/newsletters/{newsletterId}/recipients/{recipientId}", "newsletter", "remove_recipient"),
    ("POST /api/admin/newsletters/{newsletterId}/send", "newsletter", "send"),
];

/// Mutating operations that legitimately leave no row, each with the reason. None today:
/// even signing in and out are recorded (a failed sign-in too, as `login_failed`).
const NOT_AUDITED: &[(&str, &str)] = &[];

/// Audited operations this walk cannot make, each with the test that checks its row.
const AUDITED_ELSEWHERE: &[(&str, &str)] = &[(
    "POST /api/parent-orders/execution-system-pulls",
    "needs a logged-on FIX session of the firm's execution system: fix.rs, the_execution_system_is_pulled",
)];

/// The walk through the API: each call is checked for the row it must leave, read
/// through the action log's own endpoint.
struct Walk<'a> {
    app: &'a TestApp,
    admin: String,
    seen: HashSet<String>,
    done: BTreeSet<(&'static str, &'static str, &'static str)>,
}

impl<'a> Walk<'a> {
    async fn new(app: &'a TestApp, admin: String) -> Walk<'a> {
        let mut w = Walk { app, admin, seen: HashSet::new(), done: BTreeSet::new() };
        w.new_rows().await;
        w
    }

    /// The rows written since the last look.
    async fn new_rows(&mut self) -> Vec<Value> {
        let (items, total) = page(self.app, &self.admin, "size=500").await;
        assert!(total <= 500, "the walk reads one page");
        items.into_iter().filter(|i| self.seen.insert(i["action_log_id"].as_str().unwrap().to_owned())).collect()
    }

    /// Checks that the call just made (`op`, answering `status`) left its row: the
    /// table's entity for `operation`, by `actor` (an e-mail; None for no session),
    /// about `entity_id` when given.
    async fn left(
        &mut self,
        op: &str,
        operation: &str,
        status: (StatusCode, &Value),
        actor: Option<&str>,
        entity_id: Option<&str>,
    ) {
        assert!(status.0.is_success(), "{op}: {} {}", status.0, status.1);
        let row = *AUDITED
            .iter()
            .find(|(o, _, x)| *o == op && *x == operation)
            .unwrap_or_else(|| panic!("{op} → {operation} is not in AUDITED"));
        let new = self.new_rows().await;
        let found = new.iter().find(|i| {
            i["entity"] == row.1
                && i["operation"] == row.2
                && i["user"]["email"].as_str() == actor
                && entity_id.is_none_or(|id| i["entity_id"] == id)
        });
        assert!(
            found.is_some(),
            "{op} left no ({}, {}) row by {actor:?} about {entity_id:?}; new rows: {new:#?}",
            row.1,
            row.2
        );
        let details = &found.unwrap()["details"];
        assert!(details.is_object(), "{op}: details {details}");
        self.done.insert(row);
    }
}

/// The mutating operations the running server documents, as `METHOD path`.
async fn documented_mutations(app: &TestApp) -> BTreeSet<String> {
    let (s, doc) = app.get("/api/openapi.json", None).await;
    assert_eq!(s, StatusCode::OK);
    let mut out = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in ["post", "put", "patch", "delete"] {
            if item.get(method).is_some() {
                out.insert(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    out
}

fn id(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_else(|| panic!("no {key} in {v}")).to_owned()
}

async fn every_mutating_operation_leaves_a_row(b: Backend) {
    let v = venue(b).await;
    let app = &v.app;

    // The table and the document name the same operations.
    let documented = documented_mutations(app).await;
    let listed: BTreeSet<String> = AUDITED
        .iter()
        .map(|r| r.0.to_owned())
        .chain(NOT_AUDITED.iter().chain(AUDITED_ELSEWHERE).map(|r| r.0.to_owned()))
        .collect();
    let unlisted: Vec<_> = documented.difference(&listed).collect();
    assert!(
        unlisted.is_empty(),
        "mutating operations with no entry in AUDITED (or NOT_AUDITED, with a reason): {unlisted:?}"
    );
    let gone: Vec<_> = listed.difference(&documented).collect();
    assert!(gone.is_empty(), "AUDITED or NOT_AUDITED names operations the API no longer has: {gone:?}");

    let admin = app.admin_token().await;
    let mut w = Walk::new(app, admin.clone()).await;
    let (a_me, b_me, small_me) = (
        app.get("/api/users/me", Some(&v.a)).await.1,
        app.get("/api/users/me", Some(&v.b)).await.1,
        app.get("/api/users/me", Some(&v.a_admin_limited)).await.1,
    );

    // Signing in.
    let (s, body) = app.post("/api/auth/login", None, json!({"email": "a@halyard.test", "password": PW})).await;
    w.left("POST /api/auth/login", "login", (s, &body), Some("a@halyard.test"), None).await;

    // Reference data (admin).
    let brokers = json!([{"company_id": v.broker}]);
    let (s, fathom) = app
        .post(
            "/api/admin/companies",
            Some(&admin),
            json!({"name": "Fathom", "full_name": "Fathom Markets", "roles": ["liquidity-provider"],
                   "brokers": brokers, "default_broker": brokers[0]}),
        )
        .await;
    let fathom_id = id(&fathom, "company_id");
    w.left("POST /api/admin/companies", "create", (s, &fathom), Some(ADMIN_EMAIL), Some(&fathom_id)).await;
    let (s, body) =
        app.patch(&format!("/api/admin/companies/{fathom_id}"), Some(&admin), json!({"account": "F-1"})).await;
    w.left("PATCH /api/admin/companies/{id}", "update", (s, &body), Some(ADMIN_EMAIL), Some(&fathom_id)).await;
    let (s, bund) = app
        .post(
            "/api/admin/instruments",
            Some(&admin),
            json!({"name": "Bund Mar27", "term": "Mar27", "min_quantity": 100, "tick_size": 0.01, "exchange_id": "E",
                   "currency": "EUR", "min_tick_price": 1.00, "max_tick_price": 1.10}),
        )
        .await;
    let bund_id = id(&bund, "instrument_id");
    w.left("POST /api/admin/instruments", "create", (s, &bund), Some(ADMIN_EMAIL), Some(&bund_id)).await;
    let path = format!("/api/admin/instruments/{bund_id}");
    let (s, body) = app.patch(&path, Some(&admin), json!({"description": "Euro-Bund future"})).await;
    w.left("PATCH /api/admin/instruments/{id}", "update", (s, &body), Some(ADMIN_EMAIL), Some(&bund_id)).await;
    let (s, body) =
        app.post(&format!("{path}/band"), Some(&admin), json!({"min_tick_price": 1.01, "max_tick_price": 1.11})).await;
    w.left("POST /api/admin/instruments/{id}/band", "band", (s, &body), Some(ADMIN_EMAIL), Some(&bund_id)).await;
    let later = "2030-01-02T09:00:00Z";
    let (s, body) = app
        .post(
            &format!("{path}/settings"),
            Some(&admin),
            json!({"effective_from": later, "tick_size": 0.01, "exchange_tick_size": null, "min_quantity": 200}),
        )
        .await;
    let op = "POST /api/admin/instruments/{id}/settings";
    w.left(op, "settings_scheduled", (s, &body), Some(ADMIN_EMAIL), Some(&bund_id)).await;
    let (s, gone) = app.delete(&format!("{path}/settings/{}", id(&body, "setting_id")), Some(&admin)).await;
    let op = "DELETE /api/admin/instruments/{id}/settings/{setting_id}";
    w.left(op, "settings_cancelled", (s, &gone), Some(ADMIN_EMAIL), Some(&bund_id)).await;

    // Exchange calendars: created, changed, removed.
    let eurex = json!({"name": "Eurex", "time_zone": "Europe/Berlin", "open_time": "08:00", "close_time": "22:00",
                       "parent_orders_from": "07:30", "days": ["Mon", "Tue", "Wed", "Thu", "Fri"], "holidays": []});
    let op = "PUT /api/admin/exchanges/{mic}";
    let (s, body) = app.put("/api/admin/exchanges/XEUR", Some(&admin), eurex.clone()).await;
    w.left(op, "create", (s, &body), Some(ADMIN_EMAIL), None).await;
    let mut changed = eurex;
    changed["holidays"] = json!([{"date": "2030-12-25", "name": "Christmas Day"}]);
    let (s, body) = app.put("/api/admin/exchanges/XEUR", Some(&admin), changed).await;
    w.left(op, "update", (s, &body), Some(ADMIN_EMAIL), None).await;
    let (s, gone) = app.delete("/api/admin/exchanges/XEUR", Some(&admin)).await;
    w.left("DELETE /api/admin/exchanges/{mic}", "delete", (s, &gone), Some(ADMIN_EMAIL), None).await;

    // Users: created by the admin, activated through the e-mail's link, changed.
    let lp_email = "lp@fathom.test";
    let (s, lp) = app
        .post(
            "/api/users",
            Some(&admin),
            json!({"email": lp_email, "first_name": "Lena", "last_name": "Provider", "company_id": fathom_id, "roles": ["trader"]}),
        )
        .await;
    let lp_id = id(&lp, "user_id");
    w.left("POST /api/users", "create", (s, &lp), Some(ADMIN_EMAIL), Some(&lp_id)).await;
    let (s, body) =
        app.post("/api/users/password-reset?new_account_email=true", None, json!({"email": lp_email})).await;
    w.left("POST /api/users/password-reset", "activation_link_requested", (s, &body), None, Some(&lp_id)).await;
    let activation = app.mails_to(lp_email, 1).await;
    let hash = link_token(&activation[0], "/account-activate");
    let (s, body) = app.post(&format!("/api/users/password-reset/{hash}"), None, json!({"password": PW})).await;
    w.left("POST /api/users/password-reset/{hash}", "password_set", (s, &body), Some(lp_email), Some(&lp_id)).await;
    let (s, body) = app.post("/api/users/password-reset", None, json!({"email": "a@halyard.test"})).await;
    let a_id = id(&a_me, "user_id");
    w.left("POST /api/users/password-reset", "reset_link_requested", (s, &body), None, Some(&a_id)).await;
    let small_id = id(&small_me, "user_id");
    let (s, body) = app.patch(&format!("/api/users/{small_id}"), Some(&admin), json!({"last_name": "Smaller"})).await;
    w.left("PATCH /api/users/{id}", "update", (s, &body), Some(ADMIN_EMAIL), Some(&small_id)).await;
    // The taker's own preference (B never answers a request here).
    let b_id = id(&b_me, "user_id");
    let (s, body) = app.patch(&format!("/api/users/{b_id}"), Some(&v.b), json!({"auto_accept": "INSTANT"})).await;
    w.left("PATCH /api/users/{id}", "update_preferences", (s, &body), Some("b@kestrel.test"), Some(&b_id)).await;

    // Orders: a parent, a child placed, edited and cancelled, then the parent cancelled.
    let (s, parent) = v.try_parent(&v.a, "SELL", 2000).await;
    let parent_id = id(&parent, "parent_order_id");
    w.left("POST /api/parent-orders", "create", (s, &parent), Some("a@halyard.test"), Some(&parent_id)).await;
    let (s, order) = v.child(&v.a, &parent, 1000, p("94.78"), false).await;
    let order_id = id(&order, "order_id");
    w.left("POST /api/orders", "create", (s, &order), Some("a@halyard.test"), Some(&order_id)).await;
    let (s, body) = app.patch(&format!("/api/orders/{order_id}"), Some(&v.a), json!({"limit_price": 94.77})).await;
    w.left("PATCH /api/orders/{id}", "update", (s, &body), Some("a@halyard.test"), Some(&order_id)).await;
    let (s, body) = app.delete(&format!("/api/orders/{order_id}"), Some(&v.a)).await;
    w.left("DELETE /api/orders/{id}", "cancel", (s, &body), Some("a@halyard.test"), Some(&order_id)).await;
    let (s, body) = app.delete(&format!("/api/parent-orders/{parent_id}"), Some(&v.a)).await;
    w.left("DELETE /api/parent-orders/{id}", "cancel", (s, &body), Some("a@halyard.test"), Some(&parent_id)).await;

    // Taking liquidity: A rests 2000, B takes three times; accepted, rejected, withdrawn.
    let sell = v.parent(&v.a, "SELL", 2000).await;
    let (s, resting) = v.child(&v.a, &sell, 2000, p("94.75"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{resting}");
    let buy = v.parent(&v.b, "BUY", 5000).await;
    w.new_rows().await;
    let take = |quantity: i64| {
        let body = json!({"requesting_parent_order_id": buy["parent_order_id"], "quantity": quantity,
                          "price": 94.75, "requesting_broker_id": v.broker, "dry_run": false, "residual": false});
        app.post("/api/order-match-requests", Some(&v.b), body)
    };
    let answer = |m: &Value, token: &str, state: &str| {
        let path = format!("/api/order-match-requests/{}", id(m, "order_match_request_id"));
        let (token, state) = (token.to_owned(), state.to_owned());
        async move { app.patch(&path, Some(&token), json!({"state": state})).await }
    };
    let (s, sent) = take(1000).await;
    let m = sent[0].clone();
    let m_id = id(&m, "order_match_request_id");
    w.left("POST /api/order-match-requests", "create", (s, &sent), Some("b@kestrel.test"), Some(&m_id)).await;
    let (s, body) = answer(&m, &v.a, "ACCEPTED").await;
    w.left("PATCH /api/order-match-requests/{id}", "ACCEPTED", (s, &body), Some("a@halyard.test"), Some(&m_id)).await;
    let (_, sent) = take(500).await;
    let (s, body) = answer(&sent[0], &v.a, "REJECTED").await;
    let rejected = id(&sent[0], "order_match_request_id");
    w.left("PATCH /api/order-match-requests/{id}", "REJECTED", (s, &body), Some("a@halyard.test"), Some(&rejected))
        .await;
    let (_, sent) = take(500).await;
    let (s, body) = answer(&sent[0], &v.b, "CANCELLED").await;
    let withdrawn = id(&sent[0], "order_match_request_id");
    w.left("PATCH /api/order-match-requests/{id}", "CANCELLED", (s, &body), Some("b@kestrel.test"), Some(&withdrawn))
        .await;

    // The broker accepts one side through the e-mail's link (no session).
    let links = broker_links(&app.mails_to(BROKER_DESK, 2).await, "/accept-order");
    let (a_order, a_token) = links.first().cloned().expect("a broker link");
    let (s, body) = app.patch(&format!("/api/orders/{a_order}?token={a_token}"), None, json!({"accepted": true})).await;
    w.left("PATCH /api/orders/{id}", "broker_accepted", (s, &body), None, Some(&a_order)).await;

    // Allocations: Halyard gets an account (renamed), and A allocates its side of the trade.
    let accounts = format!("/api/admin/companies/{}/accounts", id(&a_me, "company_id"));
    let (s, account) = app.post(&accounts, Some(&admin), json!({"code": "HAL-1", "name": "Main"})).await;
    let account_id = id(&account, "account_id");
    w.left("POST /api/admin/companies/{id}/accounts", "create", (s, &account), Some(ADMIN_EMAIL), Some(&account_id))
        .await;
    let (s, body) = app.patch(&format!("{accounts}/{account_id}"), Some(&admin), json!({"name": "Main book"})).await;
    w.left(
        "PATCH /api/admin/companies/{id}/accounts/{account_id}",
        "update",
        (s, &body),
        Some(ADMIN_EMAIL),
        Some(&account_id),
    )
    .await;
    let (_, sold) = app.get(&format!("/api/orders?parent_order_id={}", id(&sell, "parent_order_id")), Some(&v.a)).await;
    let traded = sold
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["state"] == "MATCHED" || o["state"] == "PARTIAL_BROKER_ACCEPTED")
        .expect("A's side of the trade");
    let traded = id(traded, "order_id");
    let (s, body) = app
        .put(
            &format!("/api/orders/{traded}/allocation"),
            Some(&v.a),
            json!({"lines": [{"account_id": account_id, "quantity": 1000}]}),
        )
        .await;
    w.left("PUT /api/orders/{order_id}/allocation", "allocate", (s, &body), Some("a@halyard.test"), Some(&traded))
        .await;

    // B reads a notification.
    let (_, notices) = app.get("/api/notifications", Some(&v.b)).await;
    let notice = id(&notices["items"][0], "notification_id");
    let (s, body) = app.patch(&format!("/api/notifications/{notice}"), Some(&v.b), json!({"read": true})).await;
    w.left("PATCH /api/notifications/{id}", "update", (s, &body), Some("b@kestrel.test"), Some(&notice)).await;

    // Requests for quote: one quoted and accepted, one withdrawn.
    let lp_token = app.login(lp_email, PW).await;
    w.new_rows().await;
    let rfq_body =
        json!({"parent_order_id": buy["parent_order_id"], "quantity": 1000, "liquidity_provider_ids": [fathom_id]});
    let (s, rfq) = app.post("/api/rfqs", Some(&v.b), rfq_body.clone()).await;
    let rfq_id = id(&rfq, "rfq_id");
    w.left("POST /api/rfqs", "create", (s, &rfq), Some("b@kestrel.test"), Some(&rfq_id)).await;
    let (s, quote) = app
        .post(
            &format!("/api/rfqs/{rfq_id}/responses"),
            Some(&lp_token),
            json!({"sell_price": 94.75, "sell_quantity": 1000}),
        )
        .await;
    let response_id = id(&quote, "rfq_response_id");
    w.left("POST /api/rfqs/{id}/responses", "RESPONDED", (s, &quote), Some(lp_email), Some(&response_id)).await;
    let (s, body) = app
        .patch(&format!("/api/rfqs/{rfq_id}/responses/{response_id}"), Some(&v.b), json!({"state": "ACCEPTED"}))
        .await;
    w.left("PATCH /api/rfqs/{id}/responses/{response_id}", "accept", (s, &body), Some("b@kestrel.test"), Some(&rfq_id))
        .await;
    let (s, second) = app.post("/api/rfqs", Some(&v.b), rfq_body).await;
    assert_eq!(s, StatusCode::CREATED, "{second}");
    let second_id = id(&second, "rfq_id");
    w.new_rows().await;
    let (s, body) = app.patch(&format!("/api/rfqs/{second_id}"), Some(&v.b), json!({"state": "CANCELLED"})).await;
    w.left("PATCH /api/rfqs/{id}", "CANCELLED", (s, &body), Some("b@kestrel.test"), Some(&second_id)).await;

    // The admin area: a price correction, a newsletter sent, the kill switch on and off.
    let spare = v.parent(&v.a, "SELL", 1000).await;
    let (s, corrected) = v.child(&v.a, &spare, 1000, p("94.79"), false).await;
    assert_eq!(s, StatusCode::CREATED, "{corrected}");
    let corrected = id(&corrected, "order_id");
    w.new_rows().await;
    let (s, body) =
        app.patch(&format!("/api/admin/orders/{corrected}"), Some(&admin), json!({"limit_price": 94.78})).await;
    w.left("PATCH /api/admin/orders/{id}", "price_correction", (s, &body), Some(ADMIN_EMAIL), Some(&corrected)).await;
    let (s, letter) =
        app.post("/api/admin/newsletters", Some(&admin), json!({"name": "Rates desk", "description": "Daily"})).await;
    let letter_id = id(&letter, "newsletter_id");
    w.left("POST /api/admin/newsletters", "create", (s, &letter), Some(ADMIN_EMAIL), Some(&letter_id)).await;
    let recipients = format!("/api/admin/newsletters/{letter_id}/recipients");
    let (s, body) = app.post(&recipients, Some(&admin), json!({"recipient_ids": [a_id, b_id]})).await;
    w.left(
        "POST /api/admin/newsletters/{newsletterId}/recipients",
        "add_recipients",
        (s, &body),
        Some(ADMIN_EMAIL),
        Some(&letter_id),
    )
    .await;
    let (s, body) = app.delete(&format!("{recipients}/{b_id}"), Some(&admin)).await;
    w.left(
        "DELETE /api/admin/newsletters/{newsletterId}/recipients/{recipientId}",
        "remove_recipient",
        (s, &body),
        Some(ADMIN_EMAIL),
        Some(&letter_id),
    )
    .await;
    let (s, body) = app.post(&format!("/api/admin/newsletters/{letter_id}/send"), Some(&admin), json!({})).await;
    w.left("POST /api/admin/newsletters/{newsletterId}/send", "send", (s, &body), Some(ADMIN_EMAIL), Some(&letter_id))
        .await;
    let halyard = id(&a_me, "company_id");
    let switch = format!("/api/companies/{halyard}/kill-switch");
    let (s, body) = app.post(&switch, Some(&admin), json!({})).await;
    w.left("POST /api/companies/{id}/kill-switch", "kill_switch_on", (s, &body), Some(ADMIN_EMAIL), Some(&halyard))
        .await;
    let (s, body) = app.delete(&switch, Some(&admin)).await;
    w.left("DELETE /api/companies/{id}/kill-switch", "kill_switch_off", (s, &body), Some(ADMIN_EMAIL), Some(&halyard))
        .await;

    // Counterparty filters: a firm's (by a venue admin here) and a trader's own.
    let kestrel = id(&b_me, "company_id");
    let (s, body) = app
        .put(
            &format!("/api/companies/{halyard}/counterparty-filter"),
            Some(&admin),
            json!({"blocked_company_ids": [kestrel]}),
        )
        .await;
    w.left("PUT /api/companies/{id}/counterparty-filter", "update", (s, &body), Some(ADMIN_EMAIL), Some(&halyard))
        .await;
    let (s, body) = app
        .put(
            "/api/users/me/counterparty-filter",
            Some(&v.a),
            json!({"blocked_company_ids": [], "min_reliability_score": 10}),
        )
        .await;
    w.left("PUT /api/users/me/counterparty-filter", "update", (s, &body), Some("a@halyard.test"), Some(&a_id)).await;

    // Signing out.
    let (s, body) = app.delete("/api/auth/session", Some(&lp_token)).await;
    w.left("DELETE /api/auth/session", "logout", (s, &body), Some(lp_email), None).await;

    let missed: Vec<_> = AUDITED.iter().filter(|r| !w.done.contains(*r)).collect();
    assert!(missed.is_empty(), "rows of AUDITED the walk never checked: {missed:?}");
    assert_balanced(&v).await;
    v.app.stop().await;
}
