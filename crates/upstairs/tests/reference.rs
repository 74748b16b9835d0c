#![allow(clippy::unwrap_used)]
//! Companies, users (admin) and instruments over HTTP, and the permission matrix:
//! every endpoint of the reference-data API as every role and as a foreign company.

mod support;

use chrono::SubsecRound;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use support::*;
use upstairs::app;
use upstairs_engine::Clock;

on_both_backends!(
    companies_validation_and_brokers,
    instruments_rules_and_band,
    admin_user_edits,
    permission_matrix,
    venue_and_trading_roles_apart,
    far_pages_are_empty
);

/// Nobody holds a venue role and a trading role at once (finding 4): creating or changing
/// such a user, by the API or `upstairs user create`, answers 400 naming `roles`; a
/// company admin who trades stays allowed.
async fn venue_and_trading_roles_apart(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let (_, me) = app.get("/api/users/me", Some(&admin)).await;
    let user = |email: &str, roles: Value| json!({"email": email, "first_name": "Vera", "last_name": "Venue", "company_id": me["company_id"], "roles": roles});
    let fields = |v: &Value| -> Vec<String> {
        v["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap().to_owned()).collect()
    };
    for roles in [json!(["upstairs-admin", "trader"]), json!(["upstairs-sales", "sandbox"])] {
        let (s, v) = app.post("/api/users", Some(&admin), user("both@upstairs.test", roles.clone())).await;
        assert_eq!((s, fields(&v)), (StatusCode::BAD_REQUEST, vec!["roles".to_owned()]), "create {roles}: {v}");
    }
    let (s, v) = app.get("/api/admin/users?email=both", Some(&admin)).await;
    assert_eq!((s, v["total_items"].clone()), (StatusCode::OK, json!(0)), "nobody was made: {v}");

    let trader = app.create_user(&admin, "tess@upstairs.test").await;
    let path = format!("/api/users/{}", trader["user_id"].as_str().unwrap());
    let (s, v) = app.patch(&path, Some(&admin), json!({"roles": ["upstairs-admin", "trader"]})).await;
    assert_eq!((s, fields(&v)), (StatusCode::BAD_REQUEST, vec!["roles".to_owned()]), "update: {v}");
    let (_, v) = app.get("/api/admin/users?email=tess", Some(&admin)).await;
    assert_eq!(v["items"][0]["roles"], json!(["trader"]), "unchanged: {v}");
    let (s, v) = app.patch(&path, Some(&admin), json!({"roles": ["trader", "company-admin"]})).await;
    assert_eq!((s, v["roles"].clone()), (StatusCode::OK, json!(["trader", "company-admin"])), "{v}");
    let (s, v) = app.patch(&path, Some(&admin), json!({"roles": ["upstairs-sales"]})).await;
    assert_eq!((s, v["roles"].clone()), (StatusCode::OK, json!(["upstairs-sales"])), "a role for another: {v}");

    let refused =
        app::bootstrap_user(&app.database_url, "cli@upstairs.test", PW, &["upstairs-admin", "trader"], "Upstairs")
            .await
            .expect_err("upstairs user create refuses both");
    assert!(format!("{refused:#}").contains("trading role"), "{refused:#}");
    app.stop().await;
}

/// A page far past the end is empty, not a server error (found by schemathesis: the row
/// offset `page × size` overflowed).
async fn far_pages_are_empty(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    for list in ["/api/admin/instruments", "/api/admin/companies", "/api/admin/users"] {
        let (s, v) = app.get(&format!("{list}?page=177545515605496896&size=500"), Some(&admin)).await;
        assert_eq!(s, StatusCode::OK, "{list}: {v}");
        assert_eq!(v["items"], json!([]), "{list}");
    }
    app.stop().await;
}

async fn company(app: &TestApp, admin: &str, body: Value) -> Value {
    let (s, v) = app.post("/api/admin/companies", Some(admin), body).await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    v
}

fn instrument_body(name: &str, sandbox: bool) -> Value {
    json!({"name": name, "term": "Dec26-Mar27", "min_quantity": 500, "tick_size": 0.005, "exchange_id": "I",
           "exchange": "ICE Futures Europe", "exchange_iso_code": "IFEU", "currency": "EUR", "country": "GB",
           "min_tick_price": -0.04, "max_tick_price": -0.015, "is_sandbox": sandbox, "bbg_code": "ERZ6ERH7 Comdty"})
}

async fn companies_validation_and_brokers(b: Backend) {
    let app = TestApp::spawn(b).await;
    let admin = app.admin_token().await;
    let (s, v) = app
        .post(
            "/api/admin/companies",
            Some(&admin),
            json!({"name": "N", "full_name": "F", "trade_confirmation_email": "bad", "roles": ["bank"]}),
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let msgs: Vec<(&str, &str)> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["field"].as_str().unwrap(), e["message"].as_str().unwrap()))
        .collect();
    assert_eq!(
        msgs,
        [
            ("name", "Name must be at least 2 characters long"),
            ("full_name", "Full name must be at least 4 characters long"),
            ("trade_confirmation_email", "Please enter a valid email address"),
            ("roles", "Unknown company type: bank"),
            ("default_broker", "Broker is required"),
        ]
    );
    // Rule 2 characters, message as quoted: "Ab" passes.
    let north = company(
        &app,
        &admin,
        json!({"name": "Northgate", "full_name": "Ng", "roles": ["broker"],
        "trade_confirmation_email": "Confirm@Northgate.test", "trade_confirmation_via_email_enabled": true}),
    )
    .await;
    assert_eq!(north["trade_confirmation_email"], "confirm@northgate.test");
    assert_eq!(north["default_broker"], Value::Null);
    let baltic = company(&app, &admin, json!({"name": "Baltic", "full_name": "Baltic Ltd", "roles": ["broker"]})).await;
    let (s, v) = app
        .post(
            "/api/admin/companies",
            Some(&admin),
            json!({"name": "Halyard", "full_name": "Halyard LLP",
            "brokers": [{"company_id": north["company_id"]}], "default_broker": {"company_id": baltic["company_id"]}}),
        )
        .await;
    assert_eq!(
        (s, &v["errors"][0]["message"]),
        (StatusCode::BAD_REQUEST, &json!("The default broker must be one of the brokers"))
    );
    let firm = company(
        &app,
        &admin,
        json!({"name": "Halyard", "full_name": "Halyard LLP",
        "brokers": [{"company_id": baltic["company_id"]}, {"company_id": north["company_id"]}],
        "default_broker": {"company_id": north["company_id"], "name": "ignored"}}),
    )
    .await;
    assert_eq!(
        firm["brokers"],
        json!([{"company_id": baltic["company_id"], "name": "Baltic"}, {"company_id": north["company_id"], "name": "Northgate"}])
    );
    assert_eq!(firm["default_broker"]["name"], "Northgate");
    let (s, _) = app
        .post(
            "/api/admin/companies",
            Some(&admin),
            json!({"name": "Halyard", "full_name": "Again", "roles": ["broker"]}),
        )
        .await;
    assert_eq!(s, StatusCode::CONFLICT);
    let (s, v) = app
        .post(
            "/api/admin/companies",
            Some(&admin),
            json!({"name": "Lp", "full_name": "Lp Ltd", "roles": ["liquidity-provider"],
        "brokers": [{"company_id": firm["company_id"]}], "default_broker": {"company_id": firm["company_id"]}}),
        )
        .await;
    assert_eq!((s, &v["errors"][0]["message"]), (StatusCode::BAD_REQUEST, &json!("Choose broker companies only")));

    let path = format!("/api/admin/companies/{}", firm["company_id"].as_str().unwrap());
    let (s, v) = app.patch(&path, Some(&admin), json!({"brokers": [{"company_id": baltic["company_id"]}], "default_broker": {"company_id": baltic["company_id"]}, "account": "ACC-9"})).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(
        (v["default_broker"]["name"].as_str(), v["account"].as_str(), v["full_name"].as_str()),
        (Some("Baltic"), Some("ACC-9"), Some("Halyard LLP"))
    );
    let (s, v) = app.patch(&path, Some(&admin), json!({"ems_identifier": null, "unknown": 1})).await;
    assert_eq!((s, &v["errors"][0]["field"]), (StatusCode::BAD_REQUEST, &json!("unknown")), "{v}");

    let (_, list) = app.get("/api/admin/companies?page=0&size=200", Some(&admin)).await;
    assert_eq!(list["total_items"], 4, "Upstairs + 3: {list}");
    let (_, lps) = app.get("/api/liquidity-providers", Some(&admin)).await;
    assert_eq!(lps, json!([]));
    let (logs, _) = audit_and_outbox(&app.database_url).await;
    assert!(
        logs.iter()
            .any(|l| l.entity == "company" && l.operation == "update" && l.details["before"]["account"].is_null())
    );
    app.stop().await;
}

async fn instruments_rules_and_band(b: Backend) {
    let app = TestApp::spawn(b).await;
    let admin = app.admin_token().await;
    let mut body = instrument_body("Euribor 3M Dec26-Mar27", false);
    body["min_quantity"] = Value::Null;
    body["min_tick_price"] = json!(94.733);
    let (s, v) = app.post("/api/admin/instruments", Some(&admin), body).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert_eq!(
        v["errors"],
        json!([{"field": "min_quantity", "message": "Minimum block size is required"},
                                    {"field": "min_tick_price", "message": "Invalid value"}])
    );
    let (s, v) =
        app.post("/api/admin/instruments", Some(&admin), instrument_body("Euribor 3M Dec26-Mar27", false)).await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(
        (v["min_tick_price"].clone(), v["max_tick_price"].clone(), v["tick_size"].clone()),
        (json!(-0.04), json!(-0.015), json!(0.005))
    );
    let id = v["instrument_id"].as_str().unwrap().to_owned();

    // Exact decimals: 0.1 + 0.2 style values stay exact; off-tick prices are refused.
    let band = format!("/api/admin/instruments/{id}/band");
    // The database keeps microseconds.
    let created = app.clock.now().trunc_subsecs(6);
    app.clock.advance(chrono::Duration::minutes(5));
    let (s, v) = app.post(&band, Some(&admin), json!({"min_tick_price": 0.3, "max_tick_price": 0.35})).await;
    assert_eq!((s, v["min_tick_price"].clone()), (StatusCode::OK, json!(0.3)));
    // The band's history (ADR 0044), for the price chart: the band at the period's start,
    // then each move, exact; bad periods are refused at their field.
    let history = format!("/api/instruments/{id}/band-history");
    let (s, h) = app.get(&history, Some(&admin)).await;
    assert_eq!(s, StatusCode::OK, "{h}");
    let moved = app.clock.now().trunc_subsecs(6);
    assert_eq!(
        h,
        json!([{"at": created, "min_tick_price": -0.04, "max_tick_price": -0.015},
               {"at": moved, "min_tick_price": 0.3, "max_tick_price": 0.35}])
    );
    // From a minute before the move: the band then in force, from then on.
    let since = (moved - chrono::Duration::minutes(1)).trunc_subsecs(0);
    let query = since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let (_, h) = app.get(&format!("{history}?from={query}"), Some(&admin)).await;
    assert_eq!((h.as_array().map(Vec::len), &h[0]["min_tick_price"]), (Some(2), &json!(-0.04)), "{h}");
    assert_eq!(h[0]["at"], json!(since), "{h}");
    for (query, field) in [
        ("from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", "to"),
        ("from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z", "from"),
        ("from=1969-12-31T00:00:00Z&to=1970-01-02T00:00:00Z", "from"),
        ("from=%2B20000-01-01T00:00:00Z&to=%2B20000-01-02T00:00:00Z", "from"),
    ] {
        let (s, e) = app.get(&format!("{history}?{query}"), Some(&admin)).await;
        assert_eq!((s, e["errors"][0]["field"].clone()), (StatusCode::BAD_REQUEST, json!(field)), "{e}");
    }
    let (s, v) = app.post(&band, Some(&admin), json!({"min_tick_price": 0.3001, "max_tick_price": 0.35})).await;
    assert_eq!(
        (s, v["errors"][0].clone()),
        (StatusCode::BAD_REQUEST, json!({"field": "min_tick_price", "message": "Invalid value"}))
    );
    let (s, v) = app.post(&band, Some(&admin), json!({"min_tick_price": 0.35, "max_tick_price": 0.35})).await;
    assert_eq!((s, v["errors"][0]["field"].clone()), (StatusCode::BAD_REQUEST, json!("max_tick_price")));
    let (s, _) = app.post(&band, Some(&admin), json!({"min_tick_price": "abc", "max_tick_price": 0.35})).await;
    assert!(s.is_client_error());

    let (s, v) = app
        .patch(
            &format!("/api/admin/instruments/{id}"),
            Some(&admin),
            json!({"active": false, "tick_size": 0.01, "min_tick_price": 0.3, "max_tick_price": 0.4}),
        )
        .await;
    assert_eq!((s, v["active"].clone(), v["tick_size"].clone()), (StatusCode::OK, json!(false), json!(0.01)), "{v}");
    app.post("/api/admin/instruments", Some(&admin), instrument_body("SONIA 3M Mar27-Jun27", false)).await;
    app.post("/api/admin/instruments", Some(&admin), instrument_body("Euribor Sandbox", true)).await;

    let names = |v: &Value| {
        v["items"].as_array().unwrap().iter().map(|i| i["name"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
    };
    let (_, v) =
        app.get("/api/admin/instruments?page=0&size=10&name=EURIBOR&sort_by=name&order_by=DESC", Some(&admin)).await;
    assert_eq!(names(&v), ["Euribor Sandbox", "Euribor 3M Dec26-Mar27"]);
    let (_, v) = app.get("/api/admin/instruments?active=true", Some(&admin)).await;
    assert_eq!(names(&v), ["Euribor Sandbox", "SONIA 3M Mar27-Jun27"]);
    let (s, _) = app.get("/api/admin/instruments?sort_by=password", Some(&admin)).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let (s, _) = app.get("/api/admin/instruments?order_by=SIDEWAYS", Some(&admin)).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    // Traders see active, non-sandbox instruments only.
    let (_, v) = app.get("/api/instruments?name=sonia", Some(&admin)).await;
    assert_eq!(v.as_array().unwrap().len(), 1);
    let (logs, _) = audit_and_outbox(&app.database_url).await;
    let band_log = logs.iter().find(|l| l.operation == "band").unwrap();
    assert_eq!(band_log.details["after"]["min_tick_price"], "0.3");
    app.stop().await;
}

async fn admin_user_edits(b: Backend) {
    let app = TestApp::spawn(b).await;
    let admin = app.admin_token().await;
    app::bootstrap_user(&app.database_url, "t@halyard.test", "Trader-Pass-1", &["trader"], "Halyard").await.unwrap();
    app::bootstrap_user(&app.database_url, "boss@halyard.test", "Boss-Pass-12", &["company-admin"], "Halyard")
        .await
        .unwrap();
    let trader = app.login("t@halyard.test", "Trader-Pass-1").await;
    let boss = app.login("boss@halyard.test", "Boss-Pass-12").await;
    let (_, t) = app.get("/api/users/me", Some(&trader)).await;
    let path = format!("/api/users/{}", t["user_id"].as_str().unwrap());

    let (s, v) = app.patch(&path, Some(&admin), json!({"first_name": "Tina", "parent_order_limit_multiplier": 4, "ems_trader_id": "EMS-1", "fix_integration": true})).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(
        (v["first_name"].clone(), v["parent_order_limit_multiplier"].clone(), v["ems_trader_id"].clone()),
        (json!("Tina"), json!(4), json!("EMS-1"))
    );
    let (_, v) = app.patch(&path, Some(&admin), json!({"parent_order_limit_multiplier": -1})).await;
    assert_eq!(v["parent_order_limit_multiplier"], Value::Null, "-1 means none");
    let (s, v) = app
        .patch(&path, Some(&admin), json!({"parent_order_limit_multiplier": 0, "first_name": "T", "email": "nope"}))
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert_eq!(v["errors"].as_array().unwrap().len(), 3);
    let (_, upstairs) = app.get("/api/users/me", Some(&admin)).await;
    let (s, v) = app.patch(&path, Some(&admin), json!({"company_id": upstairs["company_id"]})).await;
    assert_eq!(
        (s, v["errors"][0]["message"].clone()),
        (StatusCode::BAD_REQUEST, json!("The company of a user cannot be changed"))
    );

    // A trader changes only its own preferences.
    let (s, _) = app.patch(&path, Some(&trader), json!({"first_name": "Me"})).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    // The company admin manages its company's users, but cannot grant venue roles.
    let (s, _) = app.patch(&path, Some(&boss), json!({"roles": ["trader", "upstairs-admin"]})).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let (s, v) = app.patch(&path, Some(&boss), json!({"roles": ["trader", "company-admin"]})).await;
    assert_eq!((s, v["roles"].clone()), (StatusCode::OK, json!(["trader", "company-admin"])));
    let (_, list) = app.get("/api/admin/users?page=0&size=200", Some(&boss)).await;
    let emails: Vec<&str> = list["items"].as_array().unwrap().iter().map(|u| u["email"].as_str().unwrap()).collect();
    assert_eq!(emails, ["boss@halyard.test", "t@halyard.test"], "only its own company");
    let (_, list) = app.get("/api/admin/users?email=HALYARD&active=true", Some(&admin)).await;
    assert_eq!(list["total_items"], 2);

    // Deactivating revokes the user's sessions at once.
    let (s, _) = app.patch(&path, Some(&boss), json!({"active": false})).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(app.get("/api/users/me", Some(&trader)).await.0, StatusCode::UNAUTHORIZED);
    let (s, _) =
        app.post("/api/auth/login", None, json!({"email": "t@halyard.test", "password": "Trader-Pass-1"})).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    app.stop().await;
}

/// Who calls: (label, e-mail). Companies: Upstairs (venue), Halyard, Kestrel (foreign).
const CALLERS: [(&str, &str); 6] = [
    ("admin", ADMIN_EMAIL),
    ("sales", "sales@upstairs.test"),
    ("trader", "trader@halyard.test"),
    ("company-admin", "boss@halyard.test"),
    ("sandbox", "sandbox@halyard.test"),
    ("foreign", "trader@kestrel.test"),
];
const PW: &str = "Matrix-Pass-1";

async fn permission_matrix(b: Backend) {
    // A trading day: the matrix places an order.
    let app = TestApp::spawn_at(b, support::venue::tuesday_10am()).await;
    let admin = app.admin_token().await;
    let broker = company(&app, &admin, json!({"name": "Baltic", "full_name": "Baltic Ltd", "roles": ["broker"]})).await;
    let lp = company(
        &app,
        &admin,
        json!({"name": "Meridian", "full_name": "Meridian LLP", "roles": ["liquidity-provider", "broker"]}),
    )
    .await;
    let brokers = json!([{"company_id": broker["company_id"]}]);
    let halyard = company(
        &app,
        &admin,
        json!({"name": "Halyard", "full_name": "Halyard LLP", "brokers": brokers, "default_broker": brokers[0]}),
    )
    .await;
    let kestrel = company(
        &app,
        &admin,
        json!({"name": "Kestrel", "full_name": "Kestrel Ltd", "brokers": brokers, "default_broker": brokers[0]}),
    )
    .await;
    for (email, role, co) in [
        ("sales@upstairs.test", "upstairs-sales", "Upstairs"),
        ("trader@halyard.test", "trader", "Halyard"),
        ("boss@halyard.test", "company-admin", "Halyard"),
        ("sandbox@halyard.test", "sandbox", "Halyard"),
        ("trader@kestrel.test", "trader", "Kestrel"),
    ] {
        app::bootstrap_user(&app.database_url, email, PW, &[role], co).await.unwrap();
    }
    let (_, inst) =
        app.post("/api/admin/instruments", Some(&admin), instrument_body("Euribor 3M Dec26-Mar27", false)).await;
    let (_, sbx) = app.post("/api/admin/instruments", Some(&admin), instrument_body("Euribor Sandbox", true)).await;
    let mut tokens = Vec::new();
    for (label, email) in CALLERS {
        let pw = if label == "admin" { ADMIN_PASSWORD } else { PW };
        tokens.push(app.login(email, pw).await);
    }
    let (_, trader) = app.get("/api/users/me", Some(&tokens[2])).await;
    let id = |v: &Value, k: &str| v[k].as_str().unwrap().to_owned();
    let (h, k, i, s, t) = (
        id(&halyard, "company_id"),
        id(&kestrel, "company_id"),
        id(&inst, "instrument_id"),
        id(&sbx, "instrument_id"),
        id(&trader, "user_id"),
    );
    // The admin area's objects: a working order of Halyard's trader, the venue's
    // newsletter and Halyard's own (its company admin's), and a Kestrel user.
    let (st, parent) = app
        .post("/api/parent-orders", Some(&tokens[2]), json!({"direction": "BUY", "instrument_id": i, "quantity": 1000}))
        .await;
    assert_eq!(st, StatusCode::CREATED, "{parent}");
    let (st, order) = app
        .post(
            "/api/orders",
            Some(&tokens[2]),
            json!({"parent_order_id": parent["parent_order_id"], "quantity": 500, "limit_price": -0.02,
                   "residual": true, "iceberg": false, "broker_id": broker["company_id"], "instrument_id": i,
                   "direction": "BUY"}),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{order}");
    let o = id(&order, "order_id");
    let (_, venue_letter) =
        app.post("/api/admin/newsletters", Some(&admin), json!({"name": "Venue", "description": "Daily"})).await;
    let (_, own_letter) =
        app.post("/api/admin/newsletters", Some(&tokens[3]), json!({"name": "Desk", "description": "Daily"})).await;
    let (vl, hl) = (id(&venue_letter, "newsletter_id"), id(&own_letter, "newsletter_id"));
    let (_, foreigner) = app.get("/api/users/me", Some(&tokens[5])).await;
    let f = id(&foreigner, "user_id");
    // A venue-role user in a trading firm (issue 13: its company admin must not take it
    // over), and the venue admin's own id.
    app::bootstrap_user(&app.database_url, "venue@halyard.test", PW, &["upstairs-sales"], "Halyard").await.unwrap();
    let (_, venue_user) = app.get("/api/users/me", Some(&app.login("venue@halyard.test", PW).await)).await;
    let vu = id(&venue_user, "user_id");
    let me = id(&app.get("/api/users/me", Some(&admin)).await.1, "user_id");
    // What a caller could trade against (finding 4: the venue admin took Kestrel's offer):
    // Kestrel's offer, a Halyard parent to take with, and Halyard's RFQ to Meridian.
    let (_, offer_parent) = app
        .post(
            "/api/parent-orders",
            Some(&tokens[5]),
            json!({"direction": "SELL", "instrument_id": i, "quantity": 1000}),
        )
        .await;
    let (st, offer) = app
        .post(
            "/api/orders",
            Some(&tokens[5]),
            json!({"parent_order_id": offer_parent["parent_order_id"], "quantity": 1000, "limit_price": -0.015,
                   "residual": true, "iceberg": false, "broker_id": broker["company_id"], "instrument_id": i,
                   "direction": "SELL"}),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{offer}");
    let (_, taker) = app
        .post("/api/parent-orders", Some(&tokens[2]), json!({"direction": "BUY", "instrument_id": i, "quantity": 5000}))
        .await;
    let tp = id(&taker, "parent_order_id");
    let (st, rfq) = app
        .post(
            "/api/rfqs",
            Some(&tokens[2]),
            json!({"parent_order_id": tp, "quantity": 500, "liquidity_provider_ids": [lp["company_id"]]}),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{rfq}");
    let rfq = id(&rfq, "rfq_id");
    let take = |dry_run: bool| {
        json!({"requesting_parent_order_id": tp, "quantity": 500, "price": -0.015,
               "requesting_broker_id": broker["company_id"], "dry_run": dry_run, "residual": false})
    };

    use StatusCode as C;
    const OK: C = C::OK;
    const NEW: C = C::CREATED;
    const QUEUED: C = C::ACCEPTED;
    const BAD: C = C::BAD_REQUEST;
    const NO: C = C::FORBIDDEN;
    const NF: C = C::NOT_FOUND;
    // Expected status for: admin, sales, trader, company-admin, sandbox, foreign.
    let band = json!({"min_tick_price": -0.035, "max_tick_price": -0.01});
    let cells: Vec<(Method, String, Option<Value>, [C; 6])> = vec![
        (Method::GET, "/api/admin/companies?page=0&size=200".into(), None, [OK, OK, NO, NO, NO, NO]),
        (
            Method::POST,
            "/api/admin/companies".into(),
            Some(json!({"name": "New{n}", "full_name": "New Co", "roles": ["broker"]})),
            [NEW, NO, NO, NO, NO, NO],
        ),
        (Method::PATCH, format!("/api/admin/companies/{h}"), Some(json!({"account": "X"})), [OK, NO, NO, NO, NO, NO]),
        (Method::GET, format!("/api/companies/{h}"), None, [OK, NF, OK, OK, OK, NF]),
        (Method::GET, format!("/api/companies/{k}"), None, [OK, NF, NF, NF, NF, OK]),
        (Method::GET, "/api/liquidity-providers".into(), None, [OK, OK, OK, OK, OK, OK]),
        (Method::GET, "/api/admin/users?page=0&size=200".into(), None, [OK, OK, NO, OK, NO, NO]),
        (
            Method::POST,
            "/api/users".into(),
            Some(
                json!({"email": "u{n}@halyard.test", "first_name": "Uma", "last_name": "User", "company_id": h, "roles": ["trader"]}),
            ),
            [NEW, NO, NO, NEW, NO, NO],
        ),
        (
            Method::POST,
            "/api/users".into(),
            Some(
                json!({"email": "k{n}@kestrel.test", "first_name": "Kim", "last_name": "User", "company_id": k, "roles": ["trader"]}),
            ),
            [NEW, NO, NO, NO, NO, NO],
        ),
        (Method::PATCH, format!("/api/users/{t}"), Some(json!({"last_name": "Edited"})), [OK, NF, NO, OK, NO, NF]),
        (Method::PATCH, format!("/api/users/{t}"), Some(json!({"auto_accept": "INSTANT"})), [NO, NF, OK, NO, NO, NF]),
        // Cancel on disconnect (issue 29): the user's own choice; the firm's FIX session's is
        // set by a venue admin.
        (
            Method::PATCH,
            format!("/api/users/{t}"),
            Some(json!({"cancel_on_disconnect": true})),
            [NO, NF, OK, NO, NO, NF],
        ),
        (
            Method::PATCH,
            format!("/api/admin/companies/{h}"),
            Some(json!({"fix_cancel_on_disconnect": true})),
            [OK, NO, NO, NO, NO, NO],
        ),
        (Method::GET, "/api/admin/instruments".into(), None, [OK, OK, NO, NO, NO, NO]),
        (
            Method::POST,
            "/api/admin/instruments".into(),
            Some(instrument_body("Extra {n}", false)),
            [NEW, NO, NO, NO, NO, NO],
        ),
        (
            Method::PATCH,
            format!("/api/admin/instruments/{i}"),
            Some(json!({"description": "d"})),
            [OK, NO, NO, NO, NO, NO],
        ),
        (Method::POST, format!("/api/admin/instruments/{i}/band"), Some(band), [OK, NO, NO, NO, NO, NO]),
        (Method::GET, format!("/api/instruments/{i}"), None, [OK, OK, OK, OK, NF, OK]),
        (Method::GET, format!("/api/instruments/{s}"), None, [OK, NF, NF, NF, OK, NF]),
        (Method::GET, "/api/instruments".into(), None, [OK, OK, OK, OK, OK, OK]),
        (Method::GET, "/api/admin/action-logs".into(), None, [OK, NO, NO, NO, NO, NO]),
        // Issue 13: only a venue admin grants a venue role or changes a user holding one
        // (a company admin changing its e-mail could take the account over); nobody
        // deactivates themselves or drops their own admin role.
        (
            Method::POST,
            "/api/users".into(),
            Some(
                json!({"email": "v{n}@halyard.test", "first_name": "Val", "last_name": "Venue", "company_id": h, "roles": ["upstairs-sales"]}),
            ),
            [NEW, NO, NO, NO, NO, NO],
        ),
        (
            Method::PATCH,
            format!("/api/users/{vu}"),
            Some(json!({"email": "taken{n}@halyard.test"})),
            [OK, NF, NO, NO, NO, NF],
        ),
        (Method::PATCH, format!("/api/users/{me}"), Some(json!({"active": false})), [BAD, NO, NF, NF, NF, NF]),
        (Method::PATCH, format!("/api/users/{me}"), Some(json!({"roles": ["trader"]})), [BAD, NO, NF, NF, NF, NF]),
        // Trading comes from the trader and sandbox roles alone: the venue's staff, who see
        // every firm's orders, place, take, ask and quote nothing (finding 4); a sandbox
        // user trades sandbox instruments only, not through a colleague's live parent.
        (
            Method::POST,
            "/api/parent-orders".into(),
            Some(json!({"direction": "BUY", "instrument_id": i, "quantity": 1000})),
            [NO, NO, NEW, NO, NF, NEW],
        ),
        (
            Method::POST,
            "/api/orders".into(),
            Some(json!({"parent_order_id": tp, "quantity": 500, "limit_price": -0.03, "residual": true,
                        "iceberg": false, "broker_id": broker["company_id"], "instrument_id": i, "direction": "BUY"})),
            [NO, NO, NEW, NO, NF, NF],
        ),
        // Counterparty filters (issue 29): a firm's is read by its people and the venue's
        // staff, set by its company admin or a venue admin; another firm finds none. A
        // trader's own is a trader's.
        (Method::GET, "/api/counterparty-firms".into(), None, [OK, OK, OK, OK, OK, OK]),
        (Method::GET, format!("/api/companies/{h}/counterparty-filter"), None, [OK, OK, OK, OK, OK, NF]),
        (
            Method::PUT,
            format!("/api/companies/{h}/counterparty-filter"),
            Some(json!({"blocked_company_ids": []})),
            [OK, NO, NO, OK, NO, NF],
        ),
        (Method::GET, "/api/users/me/counterparty-filter".into(), None, [NO, NO, OK, NO, OK, OK]),
        (
            Method::PUT,
            "/api/users/me/counterparty-filter".into(),
            Some(json!({"blocked_company_ids": []})),
            [NO, NO, OK, NO, OK, OK],
        ),
        // Scorecards (issue 29): a firm's for its traders and company admin, the venue's
        // (and any firm's) for the venue's staff.
        (Method::GET, "/api/scorecard".into(), None, [OK, NO, OK, OK, NO, OK]),
        (Method::GET, "/api/admin/scorecard".into(), None, [OK, OK, NO, NO, NO, NO]),
        (Method::GET, format!("/api/admin/scorecard?company_id={h}"), None, [OK, OK, NO, NO, NO, NO]),
        // Allocations (issue 29): a firm's accounts are read by its people and the venue's
        // staff and opened by a venue admin; a trade is allocated by its own trader alone
        // (this order still works, so not yet).
        (Method::GET, format!("/api/companies/{h}/accounts"), None, [OK, OK, OK, OK, OK, NF]),
        (
            Method::POST,
            format!("/api/admin/companies/{h}/accounts"),
            Some(json!({"code": "A-{n}", "name": "Book"})),
            [NEW, NO, NO, NO, NO, NO],
        ),
        (
            Method::PUT,
            format!("/api/orders/{o}/allocation"),
            Some(json!({"lines": []})),
            [NO, NO, C::CONFLICT, NO, NF, NF],
        ),
        (Method::GET, format!("/api/orders/{o}/allocation"), None, [NF, NF, NF, NF, NF, NF]),
        // Everyone reads their own trades' allocations (none, for those who do not trade).
        (Method::GET, "/api/allocations".into(), None, [OK, OK, OK, OK, OK, OK]),
        // An instrument's band history is read by whoever may see the instrument (a
        // sandbox user sees only sandbox instruments).
        (Method::GET, format!("/api/instruments/{i}/band-history"), None, [OK, OK, OK, OK, NF, OK]),
        // A minimum execution size (issue 29) is its order's owner's alone to set.
        (Method::PATCH, format!("/api/orders/{o}"), Some(json!({"min_execution": 500})), [NO, NO, OK, NO, NF, NF]),
        (Method::POST, "/api/order-match-requests".into(), Some(take(true)), [NO, NO, OK, NO, NF, NF]),
        (Method::POST, "/api/order-match-requests".into(), Some(take(false)), [NO, NO, NEW, NO, NF, NF]),
        (
            Method::POST,
            "/api/rfqs".into(),
            Some(json!({"parent_order_id": tp, "quantity": 500, "liquidity_provider_ids": [lp["company_id"]]})),
            [NO, NO, NEW, NO, NF, NF],
        ),
        (
            Method::POST,
            format!("/api/rfqs/{rfq}/responses"),
            Some(json!({"sell_price": -0.02, "sell_quantity": 500})),
            [NO, NO, NF, NO, NF, NF],
        ),
        // The admin area (issue 12). The Orders panel: every order for the order-admin
        // permission, a price correction for the admin alone.
        (Method::GET, "/api/admin/orders".into(), None, [OK, OK, NO, NO, NO, NO]),
        (
            Method::PATCH,
            format!("/api/admin/orders/{o}"),
            Some(json!({"limit_price": -0.025})),
            [OK, NO, NO, NO, NO, NO],
        ),
        (Method::GET, "/api/billing".into(), None, [OK, OK, NO, NO, NO, NO]),
        (Method::GET, "/api/admin/outbox".into(), None, [OK, NO, NO, NO, NO, NO]),
        // The Orders newsletter: everyone with the drawer; a company admin keeps its own
        // company's newsletters, to its own users, and the venue's are not found for it.
        (Method::GET, "/api/admin/newsletters".into(), None, [OK, OK, NO, OK, NO, NO]),
        (
            Method::POST,
            "/api/admin/newsletters".into(),
            Some(json!({"name": "N{n}", "description": "Weekly"})),
            [NEW, NEW, NO, NEW, NO, NO],
        ),
        (
            Method::POST,
            format!("/api/admin/newsletters/{vl}/recipients"),
            Some(json!({"recipient_ids": [t]})),
            [OK, OK, NO, NF, NO, NO],
        ),
        (
            Method::POST,
            format!("/api/admin/newsletters/{hl}/recipients"),
            Some(json!({"recipient_ids": [t]})),
            [OK, OK, NO, OK, NO, NO],
        ),
        // A company's newsletter goes to its own users only, whoever adds them.
        (
            Method::POST,
            format!("/api/admin/newsletters/{hl}/recipients"),
            Some(json!({"recipient_ids": [f]})),
            [BAD, BAD, NO, BAD, NO, NO],
        ),
        (Method::GET, format!("/api/admin/newsletters/{vl}/preview"), None, [OK, OK, NO, NF, NO, NO]),
        (Method::GET, format!("/api/admin/newsletters/{hl}/preview"), None, [OK, OK, NO, OK, NO, NO]),
        (Method::POST, format!("/api/admin/newsletters/{vl}/send"), Some(json!({})), [QUEUED, QUEUED, NO, NF, NO, NO]),
        (
            Method::POST,
            format!("/api/admin/newsletters/{hl}/send"),
            Some(json!({})),
            [QUEUED, QUEUED, NO, QUEUED, NO, NO],
        ),
        (Method::DELETE, format!("/api/admin/newsletters/{vl}/recipients/{t}"), None, [OK, NF, NO, NF, NO, NO]),
        // The admin removes the recipient first; the others then find none.
        (Method::DELETE, format!("/api/admin/newsletters/{hl}/recipients/{t}"), None, [OK, NF, NO, NF, NO, NO]),
        // The kill switch: a venue admin stops any firm, a company admin its own (another
        // firm is not found for it), and only a venue admin releases one. The admin
        // presses first, so the next row finds the firm stopped.
        (Method::POST, format!("/api/companies/{k}/kill-switch"), Some(json!({})), [OK, NO, NO, NF, NO, NO]),
        (Method::DELETE, format!("/api/companies/{k}/kill-switch"), None, [OK, NO, NO, NO, NO, NO]),
        (Method::POST, format!("/api/companies/{h}/kill-switch"), Some(json!({})), [OK, NO, NO, OK, NO, NO]),
        (Method::GET, "/api/platform/status".into(), None, [OK, OK, OK, OK, OK, OK]),
        (Method::DELETE, format!("/api/companies/{h}/kill-switch"), None, [OK, NO, NO, NO, NO, NO]),
        // A sandbox user touches no live order of a colleague: it finds none, where the
        // trader is told that the kill switch above already pulled it.
        (Method::DELETE, format!("/api/orders/{o}"), None, [NO, NO, C::CONFLICT, NO, NF, NF]),
        (
            Method::DELETE,
            format!("/api/parent-orders/{}", id(&parent, "parent_order_id")),
            None,
            [NO, NO, C::NO_CONTENT, NO, NF, NF],
        ),
    ];
    let mut failures = Vec::new();
    for (n, (method, path, body, expected)) in cells.into_iter().enumerate() {
        for (c, ((label, _), want)) in CALLERS.iter().zip(expected).enumerate() {
            let body = body
                .as_ref()
                .map(|b| serde_json::from_str(&b.to_string().replace("{n}", &format!("{n}x{c}"))).unwrap());
            let (got, v) = app.call(method.clone(), &path, Some(&tokens[c]), body).await;
            if got != want {
                failures.push(format!("{method} {path} as {label}: expected {want}, got {got} {v}"));
            }
        }
    }
    assert!(failures.is_empty(), "permission matrix:\n{}", failures.join("\n"));
    // A company admin's newsletters are its own company's; venue staff see every one.
    let names = |v: Value| -> Vec<String> {
        let mut n: Vec<String> = v.as_array().unwrap().iter().map(|l| l["name"].as_str().unwrap().to_owned()).collect();
        n.sort();
        n
    };
    let own = names(app.get("/api/admin/newsletters", Some(&tokens[3])).await.1);
    assert!(own.len() == 2 && own[0] == "Desk" && own[1].ends_with("x3"), "the company admin's: {own:?}");
    let all = names(app.get("/api/admin/newsletters", Some(&tokens[1])).await.1);
    assert_eq!(all.len(), 5, "sales see every newsletter: {all:?}");
    assert!(all.contains(&"Venue".to_owned()) && all.iter().all(|n| own.contains(n) || !n.ends_with("x3")));

    // What each caller sees in the lists.
    let (_, lps) = app.get("/api/liquidity-providers", Some(&tokens[2])).await;
    assert_eq!(lps, json!([{"company_id": lp["company_id"], "name": "Meridian"}]));
    let (_, list) = app.get("/api/instruments", Some(&tokens[4])).await;
    assert!(list.as_array().unwrap().iter().all(|i| i["is_sandbox"] == true), "sandbox sees sandbox only");
    let (_, list) = app.get("/api/instruments", Some(&tokens[2])).await;
    assert!(!list.as_array().unwrap().is_empty() && list.as_array().unwrap().iter().all(|i| i["is_sandbox"] == false));
    let (_, users) = app.get("/api/admin/users", Some(&tokens[3])).await;
    assert!(
        users["items"].as_array().unwrap().iter().all(|u| u["company_id"] == json!(h)),
        "company admin sees its company only"
    );
    app.stop().await;
}

mod demo {
    use super::support::*;
    use serde_json::Value;

    /// The demo data set: every book has a bid below its offer, inside the band.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn demo_books_are_not_crossed() {
        let app = TestApp::spawn_with(Backend::Sqlite, |s| s.demo = true).await;
        let t = app.login("trader2@kestrel.demo", upstairs::demo::DEMO_PASSWORD).await;
        let (_, list) = app.get("/api/instruments", Some(&t)).await;
        assert_eq!(list.as_array().unwrap().len(), 5, "five non-sandbox demo instruments");
        for i in list.as_array().unwrap() {
            let (_, md) = app
                .get(&format!("/api/instruments/{}/market-data", i["instrument_id"].as_str().unwrap()), Some(&t))
                .await;
            let num = |v: &Value| v.to_string().parse::<rust_decimal::Decimal>().unwrap();
            let (bid, ask) = (num(&md["best_buy_price"]), num(&md["best_sell_price"]));
            assert!(
                num(&md["min_tick_price"]) <= bid && bid < ask && ask <= num(&md["max_tick_price"]),
                "{} {md}",
                i["name"]
            );
        }
        app.stop().await;
    }
}
