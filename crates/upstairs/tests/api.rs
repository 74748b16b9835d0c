#![allow(clippy::unwrap_used)]
//! The account and session API, black box over HTTP, on SQLite and PostgreSQL.

mod support;

use chrono::Duration;
use reqwest::{Method, StatusCode};
use serde_json::json;
use support::*;

on_both_backends!(
    black_box_walk,
    reset_revokes_sessions_and_links_expire,
    activation_link_expires_after_72_hours,
    unknown_email_reset_answers_the_same,
    bad_input_answers_4xx_problems,
    bad_tokens_answer_401,
    only_oneself_and_admins,
    login_is_rate_limited,
    logout_revokes_the_session,
    ui_metadata_merges_by_key,
    failed_create_sends_no_email,
    remember_me_lasts_30_days,
    privilege_lockouts_and_email_changes,
);

async fn black_box_walk(b: Backend) {
    let app = TestApp::spawn(b).await;
    let admin = app.admin_token().await;
    let created = app.create_user(&admin, "Tess@Halyard.test").await;
    assert_eq!(created["email"], "tess@halyard.test");
    assert_eq!(created["verified"], false);
    assert_eq!(created["auto_accept"], serde_json::Value::Null);

    let mail = app.mails_to("tess@halyard.test", 1).await.remove(0);
    assert!(mail.contains(&format!("{}/account-activate?hash=", app.running.as_ref().unwrap().public_url)));
    let hash = link_token(&mail, "/account-activate");
    assert_eq!(
        app.get(&format!("/api/users/password-reset/{hash}"), None).await,
        (StatusCode::OK, json!({"purpose": "ACTIVATION"}))
    );

    // The rules of the spec, one message each.
    let (s, v) = app.post(&format!("/api/users/password-reset/{hash}"), None, json!({"password": "short"})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let messages: Vec<&str> = v["errors"].as_array().unwrap().iter().map(|e| e["message"].as_str().unwrap()).collect();
    assert_eq!(
        messages,
        [
            "Minimum length: 10 characters",
            "At least one uppercase letter",
            "At least one number",
            "At least one special character: !@#$%^&+=-"
        ]
    );

    let (s, _) =
        app.post(&format!("/api/users/password-reset/{hash}"), None, json!({"password": "Tess-Pass-2026"})).await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    let (s, v) = app.get(&format!("/api/users/password-reset/{hash}"), None).await;
    assert_eq!(s, StatusCode::GONE, "second use: {v}");
    assert!(v["detail"].as_str().unwrap().contains("expired"));
    let (s, _) =
        app.post(&format!("/api/users/password-reset/{hash}"), None, json!({"password": "Other-Pass-2026"})).await;
    assert_eq!(s, StatusCode::GONE);

    let token = app.login("tess@halyard.test", "Tess-Pass-2026").await;
    let (_, me) = app.get("/api/users/me", Some(&token)).await;
    assert_eq!(me["verified"], true);
    assert_eq!(me["auto_accept"], serde_json::Value::Null);
    assert_eq!(me["roles"], json!(["trader"]));
    for key in [
        "user_id",
        "company_id",
        "roles",
        "auto_accept",
        "parent_order_limit_multiplier",
        "ui_metadata",
        "email",
        "first_name",
        "last_name",
    ] {
        assert!(me.get(key).is_some(), "auth user field {key}");
    }
    let (s, updated) = app
        .patch(
            &format!("/api/users/{}", me["user_id"].as_str().unwrap()),
            Some(&token),
            json!({"auto_accept": "ACCEPT_WITH_DELAY"}),
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(updated["auto_accept"], "ACCEPT_WITH_DELAY");
    assert_eq!(app.get("/api/users/me", Some(&token)).await.1["auto_accept"], "ACCEPT_WITH_DELAY");

    let (s, v) =
        app.post("/api/auth/login", None, json!({"email": "tess@halyard.test", "password": "Wrong-Pass-2026"})).await;
    assert_eq!((s, v["detail"].as_str()), (StatusCode::UNAUTHORIZED, Some("Invalid email or password.")));
    let (s, v2) =
        app.post("/api/auth/login", None, json!({"email": "nobody@halyard.test", "password": "Wrong-Pass-2026"})).await;
    assert_eq!((s, &v2["detail"]), (StatusCode::UNAUTHORIZED, &v["detail"]), "no hint whether the e-mail exists");

    let (logs, _) = audit_and_outbox(&app.database_url).await;
    let ops: Vec<&str> = logs.iter().map(|l| l.operation.as_str()).collect();
    assert_eq!(ops[..2], ["login_failed", "login_failed"], "newest first: {ops:?}");
    assert_eq!(logs[0].details["email"], "nobody@halyard.test");
    for op in ["login", "create", "password_set", "update_preferences", "bootstrap"] {
        assert!(ops.contains(&op), "{op} audited: {ops:?}");
    }
    let pref = logs.iter().find(|l| l.operation == "update_preferences").unwrap();
    assert_eq!(pref.details["before"]["auto_accept"], serde_json::Value::Null);
    assert_eq!(pref.details["after"]["auto_accept"], "ACCEPT_WITH_DELAY");
    app.stop().await;
}

async fn reset_revokes_sessions_and_links_expire(b: Backend) {
    let app = TestApp::spawn(b).await;
    let before = app.admin_token().await;
    let (s, _) = app.post("/api/users/password-reset", None, json!({"email": ADMIN_EMAIL})).await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    let mail = app.mails_to(ADMIN_EMAIL, 1).await.remove(0);
    let hash = link_token(&mail, "/reset-password");
    assert_eq!(app.get(&format!("/api/users/password-reset/{hash}"), None).await.1, json!({"purpose": "RESET"}));
    let (s, _) =
        app.post(&format!("/api/users/password-reset/{hash}"), None, json!({"password": "Brand-New-Pass1"})).await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    assert_eq!(app.get("/api/users/me", Some(&before)).await.0, StatusCode::UNAUTHORIZED, "old sessions revoked");
    let (s, _) = app.post("/api/auth/login", None, json!({"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD})).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    app.login(ADMIN_EMAIL, "Brand-New-Pass1").await;

    // A reset link lasts one hour.
    app.post("/api/users/password-reset", None, json!({"email": ADMIN_EMAIL})).await;
    let mail = app.mails_to(ADMIN_EMAIL, 2).await.pop().unwrap();
    let hash = link_token(&mail, "/reset-password");
    app.clock.advance(Duration::minutes(59));
    assert_eq!(app.get(&format!("/api/users/password-reset/{hash}"), None).await.0, StatusCode::OK);
    app.clock.advance(Duration::minutes(2));
    assert_eq!(app.get(&format!("/api/users/password-reset/{hash}"), None).await.0, StatusCode::GONE);
    let (s, _) =
        app.post(&format!("/api/users/password-reset/{hash}"), None, json!({"password": "Another-Pass-9"})).await;
    assert_eq!(s, StatusCode::GONE);
    let (s, _) = app.get("/api/users/password-reset/not-a-real-token", None).await;
    assert_eq!(s, StatusCode::GONE);
    app.stop().await;
}

async fn activation_link_expires_after_72_hours(b: Backend) {
    let app = TestApp::spawn(b).await;
    let admin = app.admin_token().await;
    app.create_user(&admin, "late@halyard.test").await;
    let hash = link_token(&app.mails_to("late@halyard.test", 1).await[0], "/account-activate");
    app.clock.advance(Duration::hours(71));
    assert_eq!(app.get(&format!("/api/users/password-reset/{hash}"), None).await.0, StatusCode::OK);
    app.clock.advance(Duration::hours(2));
    assert_eq!(app.get(&format!("/api/users/password-reset/{hash}"), None).await.0, StatusCode::GONE);

    // 'Request new link' sends a fresh activation link.
    let (s, _) =
        app.post("/api/users/password-reset?new_account_email=true", None, json!({"email": "late@halyard.test"})).await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    let mail = app.mails_to("late@halyard.test", 2).await.pop().unwrap();
    let fresh = link_token(&mail, "/account-activate");
    assert_ne!(fresh, hash);
    assert_eq!(app.get(&format!("/api/users/password-reset/{fresh}"), None).await.1, json!({"purpose": "ACTIVATION"}));
    app.stop().await;
}

async fn unknown_email_reset_answers_the_same(b: Backend) {
    let app = TestApp::spawn(b).await;
    for q in ["", "?new_account_email=true"] {
        let (s, v) =
            app.post(&format!("/api/users/password-reset{q}"), None, json!({"email": "ghost@nowhere.test"})).await;
        assert_eq!((s, v), (StatusCode::NO_CONTENT, serde_json::Value::Null));
    }
    let (_, outbox) = audit_and_outbox(&app.database_url).await;
    assert!(outbox.is_empty(), "no e-mail for an unknown address");
    app.stop().await;
}

async fn bad_input_answers_4xx_problems(b: Backend) {
    let app = TestApp::spawn(b).await;
    let admin = app.admin_token().await;
    let (_, me) = app.get("/api/users/me", Some(&admin)).await;
    let me_path = format!("/api/users/{}", me["user_id"].as_str().unwrap());
    let cases: Vec<(Method, String, &str, &str, StatusCode)> = vec![
        (Method::POST, "/api/auth/login".into(), "{bad json", "application/json", StatusCode::BAD_REQUEST),
        (
            Method::POST,
            "/api/auth/login".into(),
            r#"{"email": 1, "password": "x"}"#,
            "application/json",
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            Method::POST,
            "/api/auth/login".into(),
            r#"{"password": "Valid-Pass-1"}"#,
            "application/json",
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            Method::POST,
            "/api/auth/login".into(),
            r#"{"email": "x", "password": "Valid-Pass-1"}"#,
            "application/json",
            StatusCode::BAD_REQUEST,
        ),
        (
            Method::POST,
            "/api/auth/login".into(),
            r#"{"email": "a@b.co", "password": ""}"#,
            "application/json",
            StatusCode::BAD_REQUEST,
        ),
        (
            Method::POST,
            "/api/auth/login".into(),
            r#"{"email":"a@b.co"}"#,
            "text/plain",
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
        (
            Method::PATCH,
            me_path.clone(),
            r#"{"auto_accept": "SOMETIMES"}"#,
            "application/json",
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            Method::PATCH,
            me_path.clone(),
            r#"{"password": "Sneaky-Pass-1"}"#,
            "application/json",
            StatusCode::BAD_REQUEST,
        ),
        (
            Method::PATCH,
            me_path.clone(),
            r#"{"ui_metadata": "nope"}"#,
            "application/json",
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (Method::PATCH, "/api/users/not-a-uuid".into(), r#"{}"#, "application/json", StatusCode::BAD_REQUEST),
        (
            Method::POST,
            "/api/users".into(),
            r#"{"email": "bad", "first_name": "A", "last_name": "", "company_id": "00000000-0000-0000-0000-000000000000", "roles": []}"#,
            "application/json",
            StatusCode::BAD_REQUEST,
        ),
        (
            Method::POST,
            "/api/users".into(),
            r#"{"email": "ok@x.test", "first_name": "Al", "last_name": "Bo", "company_id": "00000000-0000-0000-0000-000000000000", "roles": ["trader"]}"#,
            "application/json",
            StatusCode::BAD_REQUEST,
        ),
        (
            Method::POST,
            "/api/users".into(),
            r#"{"email": "ok@x.test", "first_name": "Al", "last_name": "Bo", "company_id": "nope", "roles": ["king"]}"#,
            "application/json",
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            Method::POST,
            "/api/users/password-reset".into(),
            r#"{"email": ""}"#,
            "application/json",
            StatusCode::BAD_REQUEST,
        ),
        (
            Method::POST,
            "/api/users/password-reset?new_account_email=maybe".into(),
            r#"{"email": "a@b.co"}"#,
            "application/json",
            StatusCode::BAD_REQUEST,
        ),
        (
            Method::POST,
            "/api/users/password-reset/abc".into(),
            r#"[]"#,
            "application/json",
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (Method::GET, "/api/no/such/thing".into(), "", "application/json", StatusCode::NOT_FOUND),
        (Method::PUT, "/api/users/me".into(), "", "application/json", StatusCode::METHOD_NOT_ALLOWED),
    ];
    for (method, path, body, ct, expected) in cases {
        let res = app
            .client
            .request(method.clone(), format!("{}{path}", app.base))
            .bearer_auth(&admin)
            .header("content-type", ct)
            .body(body.to_owned())
            .send()
            .await
            .unwrap();
        let status = res.status();
        assert_eq!(res.headers()["content-type"], "application/problem+json", "{method} {path}");
        let v: serde_json::Value = res.json().await.unwrap();
        assert_eq!(status, expected, "{method} {path} {body}: {v}");
        assert!(!v["detail"].as_str().unwrap_or("").is_empty(), "{method} {path}: detail in {v}");
    }
    // Field errors name the field with the spec's texts.
    let (_, v) = app.post("/api/auth/login", None, json!({"email": "x", "password": "Valid-Pass-1"})).await;
    assert_eq!(v["errors"], json!([{"field": "email", "message": "Please enter a valid email address"}]));
    let (_, v) = app.post("/api/users/password-reset", None, json!({"email": "  "})).await;
    assert_eq!(v["errors"][0]["message"], "Email is required");
    // Oversized bodies are refused before parsing.
    let big = format!(r#"{{"email": "{}@x.test", "password": "x"}}"#, "a".repeat(100_000));
    let res = app
        .client
        .post(format!("{}/api/auth/login", app.base))
        .header("content-type", "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
    app.stop().await;
}

async fn bad_tokens_answer_401(b: Backend) {
    let app = TestApp::spawn(b).await;
    let admin = app.admin_token().await;
    let (_, me) = app.get("/api/users/me", Some(&admin)).await;
    let me_path = format!("/api/users/{}", me["user_id"].as_str().unwrap());
    let calls: Vec<(Method, &str, Option<serde_json::Value>)> = vec![
        (Method::GET, "/api/users/me", None),
        (Method::PATCH, &me_path, Some(json!({"auto_accept": "INSTANT"}))),
        (
            Method::POST,
            "/api/users",
            Some(
                json!({"email": "a@b.co", "first_name": "Al", "last_name": "Bo", "company_id": me["company_id"], "roles": ["trader"]}),
            ),
        ),
        (Method::DELETE, "/api/auth/session", None),
    ];
    for token in [None, Some("garbage"), Some("")] {
        for (m, p, body) in &calls {
            let (s, v) = app.call(m.clone(), p, token, body.clone()).await;
            assert_eq!(s, StatusCode::UNAUTHORIZED, "{m} {p} with {token:?}: {v}");
            assert!(v["detail"].is_string());
        }
    }
    // An expired session.
    app.clock.advance(Duration::hours(12));
    assert_eq!(app.get("/api/users/me", Some(&admin)).await.0, StatusCode::UNAUTHORIZED);
    app.stop().await;
}

async fn only_oneself_and_admins(b: Backend) {
    let app = TestApp::spawn(b).await;
    let admin = app.admin_token().await;
    let (_, admin_me) = app.get("/api/users/me", Some(&admin)).await;
    app.create_user(&admin, "t1@halyard.test").await;
    let hash = link_token(&app.mails_to("t1@halyard.test", 1).await[0], "/account-activate");
    app.post(&format!("/api/users/password-reset/{hash}"), None, json!({"password": "Trader-Pass-1"})).await;
    let trader = app.login("t1@halyard.test", "Trader-Pass-1").await;

    let (s, v) = app
        .patch(
            &format!("/api/users/{}", admin_me["user_id"].as_str().unwrap()),
            Some(&trader),
            json!({"auto_accept": "INSTANT"}),
        )
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{v}");
    let (s, _) = app.post("/api/users", Some(&trader), json!({"email": "x@y.test", "first_name": "Al", "last_name": "Bo", "company_id": admin_me["company_id"], "roles": ["trader"]})).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    assert_eq!(app.get("/api/users/me", Some(&admin)).await.1["auto_accept"], serde_json::Value::Null, "unchanged");
    app.stop().await;
}

async fn login_is_rate_limited(b: Backend) {
    let app = TestApp::spawn(b).await;
    let mut last = StatusCode::OK;
    let mut detail = serde_json::Value::Null;
    for _ in 0..11 {
        let (s, v) =
            app.post("/api/auth/login", None, json!({"email": ADMIN_EMAIL, "password": "Wrong-Pass-2026"})).await;
        last = s;
        detail = v["detail"].clone();
    }
    assert_eq!(last, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(detail, "Too many attempts. Please wait a minute and try again.");
    // Even the right password waits for the window to pass.
    assert_eq!(
        app.post("/api/auth/login", None, json!({"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD})).await.0,
        StatusCode::TOO_MANY_REQUESTS
    );
    app.clock.advance(Duration::minutes(15));
    app.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;

    for _ in 0..5 {
        assert_eq!(
            app.post("/api/users/password-reset", None, json!({"email": ADMIN_EMAIL})).await.0,
            StatusCode::NO_CONTENT
        );
    }
    assert_eq!(
        app.post("/api/users/password-reset", None, json!({"email": ADMIN_EMAIL})).await.0,
        StatusCode::TOO_MANY_REQUESTS
    );
    app.stop().await;
}

async fn logout_revokes_the_session(b: Backend) {
    let app = TestApp::spawn(b).await;
    let t1 = app.admin_token().await;
    let t2 = app.admin_token().await;
    assert_eq!(app.call(Method::DELETE, "/api/auth/session", Some(&t1), None).await.0, StatusCode::NO_CONTENT);
    assert_eq!(app.get("/api/users/me", Some(&t1)).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(app.get("/api/users/me", Some(&t2)).await.0, StatusCode::OK, "other sessions stay");
    let (logs, _) = audit_and_outbox(&app.database_url).await;
    assert_eq!(logs[0].operation, "logout");
    app.stop().await;
}

async fn ui_metadata_merges_by_key(b: Backend) {
    let app = TestApp::spawn(b).await;
    let t = app.admin_token().await;
    let (_, me) = app.get("/api/users/me", Some(&t)).await;
    let path = format!("/api/users/{}", me["user_id"].as_str().unwrap());
    let tooltips = json!([{"key": "FIRST_PARENT_ORDER", "read": true}]);
    let (s, v) = app.patch(&path, Some(&t), json!({"ui_metadata": [{"key": "TOOLTIPS", "value": tooltips}]})).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    app.patch(&path, Some(&t), json!({"ui_metadata": [{"key": "THEME", "value": "dark"}]})).await;
    let more = json!([{"key": "FIRST_PARENT_ORDER", "read": true}, {"key": "FIRST_ICEBERG_ORDER", "read": true}]);
    let (_, v) = app.patch(&path, Some(&t), json!({"ui_metadata": [{"key": "TOOLTIPS", "value": more}]})).await;
    assert_eq!(v["ui_metadata"], json!([{"key": "TOOLTIPS", "value": more}, {"key": "THEME", "value": "dark"}]));
    assert_eq!(app.get("/api/users/me", Some(&t)).await.1["ui_metadata"], v["ui_metadata"]);
    app.stop().await;
}

async fn failed_create_sends_no_email(b: Backend) {
    let app = TestApp::spawn(b).await;
    let admin = app.admin_token().await;
    app.create_user(&admin, "dup@halyard.test").await;
    let (_, me) = app.get("/api/users/me", Some(&admin)).await;
    let (s, v) = app.post("/api/users", Some(&admin), json!({"email": "DUP@halyard.test", "first_name": "Du", "last_name": "Pe", "company_id": me["company_id"], "roles": ["trader"]})).await;
    assert_eq!(s, StatusCode::CONFLICT);
    assert_eq!(v["errors"][0]["field"], "email");
    app.mails_to("dup@halyard.test", 1).await;
    let (_, outbox) = audit_and_outbox(&app.database_url).await;
    assert_eq!(outbox.len(), 1, "only the committed creation queued an e-mail");
    app.stop().await;
}

async fn remember_me_lasts_30_days(b: Backend) {
    let app = TestApp::spawn(b).await;
    let (_, v) = app
        .post("/api/auth/login", None, json!({"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD, "rememberMe": true}))
        .await;
    let long = v["token"].as_str().unwrap().to_owned();
    let short = app.admin_token().await;
    app.clock.advance(Duration::hours(13));
    assert_eq!(app.get("/api/users/me", Some(&short)).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(app.get("/api/users/me", Some(&long)).await.0, StatusCode::OK);
    app.clock.advance(Duration::days(30));
    assert_eq!(app.get("/api/users/me", Some(&long)).await.0, StatusCode::UNAUTHORIZED);
    app.stop().await;
}

/// Issue 13's privilege findings: a company admin cannot change (nor so take over) a user
/// holding a venue role; nobody deactivates themselves or drops their own admin role; an
/// e-mail change ends the user's links and sessions, unverifies the address and tells the
/// old one; two concurrent uses of one link: one wins.
async fn privilege_lockouts_and_email_changes(b: Backend) {
    // Halyard and Kestrel with their broker, as every trading test has them.
    let venue = support::venue::venue(b).await;
    let app = &venue.app;
    let admin = app.admin_token().await;
    let (_, me) = app.get("/api/users/me", Some(&admin)).await;
    let admin_id = me["user_id"].as_str().unwrap().to_owned();
    let (_, halyard_trader) = app.get("/api/users/me", Some(&venue.a)).await;
    let firm_id = halyard_trader["company_id"].as_str().unwrap().to_owned();
    let activate = |email: &'static str| async move {
        let mail = app.mails_to(email, 1).await.remove(0);
        let hash = link_token(&mail, "/account-activate");
        let (s, _) =
            app.post(&format!("/api/users/password-reset/{hash}"), None, json!({"password": "Good-Pass-2026"})).await;
        assert_eq!(s, StatusCode::NO_CONTENT);
        app.login(email, "Good-Pass-2026").await
    };
    let user = |email: &str, roles: &[&str]| json!({"email": email, "first_name": "Pat", "last_name": "Person", "company_id": firm_id, "roles": roles});
    let (s, boss) = app.post("/api/users", Some(&admin), user("boss@halyard.test", &["company-admin"])).await;
    assert_eq!(s, StatusCode::CREATED, "{boss}");
    let boss_token = activate("boss@halyard.test").await;
    let (s, sales) = app.post("/api/users", Some(&admin), user("sam@halyard.test", &["upstairs-sales"])).await;
    assert_eq!(s, StatusCode::CREATED, "{sales}");
    let sales_id = sales["user_id"].as_str().unwrap().to_owned();

    // The company admin may neither create nor change a venue-role user of its own firm.
    let (s, _) = app.post("/api/users", Some(&boss_token), user("ned@halyard.test", &["upstairs-sales"])).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let (s, v) =
        app.patch(&format!("/api/users/{sales_id}"), Some(&boss_token), json!({"email": "mine@halyard.test"})).await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{v}");
    let (s, _) = app.patch(&format!("/api/users/{sales_id}"), Some(&boss_token), json!({"last_name": "Other"})).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let listed = |id: String| {
        let (app, admin) = (&app, &admin);
        async move {
            let (_, all) = app.get("/api/admin/users?page=0&size=200", Some(admin)).await;
            all["items"].as_array().unwrap().iter().find(|u| u["user_id"] == id.as_str()).unwrap().clone()
        }
    };
    let still = listed(sales_id.clone()).await;
    assert_eq!((still["email"].as_str(), still["last_name"].as_str()), (Some("sam@halyard.test"), Some("Person")));

    // Nobody locks themselves out.
    for (token, id, roles) in [
        (&admin, admin_id.as_str(), json!(["trader"])),
        (&boss_token, boss["user_id"].as_str().unwrap(), json!(["trader"])),
    ] {
        let (s, v) = app.patch(&format!("/api/users/{id}"), Some(token), json!({"active": false})).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
        assert_eq!(v["errors"][0], json!({"field": "active", "message": "You cannot deactivate your own account"}));
        let (s, v) = app.patch(&format!("/api/users/{id}"), Some(token), json!({"roles": roles})).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
        assert_eq!(v["errors"][0], json!({"field": "roles", "message": "You cannot remove your own admin role"}));
        let (s, _) = app.get("/api/users/me", Some(token)).await;
        assert_eq!(s, StatusCode::OK, "still signed in");
    }

    // An e-mail change: the old links and sessions end, the address is unverified, the
    // old address is told.
    let (_, tess) = app.post("/api/users", Some(&boss_token), user("tess@halyard.test", &["trader"])).await;
    let tess_id = tess["user_id"].as_str().unwrap().to_owned();
    let tess_token = activate("tess@halyard.test").await;
    let (s, _) = app.post("/api/users/password-reset", None, json!({"email": "tess@halyard.test"})).await;
    assert!(s.is_success());
    let mails = app.mails_to("tess@halyard.test", 2).await;
    let reset = link_token(mails.iter().find(|m| m.contains("/reset-password")).unwrap(), "/reset-password");
    let (s, v) =
        app.patch(&format!("/api/users/{tess_id}"), Some(&boss_token), json!({"email": "tess.new@halyard.test"})).await;
    assert_eq!((s, v["verified"].clone()), (StatusCode::OK, json!(false)), "{v}");
    let (s, _) = app.get("/api/users/me", Some(&tess_token)).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "the session ended");
    let (s, _) = app.get(&format!("/api/users/password-reset/{reset}"), None).await;
    assert_eq!(s, StatusCode::GONE, "the open link was used up");
    let mails = app.mails_to("tess@halyard.test", 3).await;
    let told = mails.iter().find(|m| m.contains("was changed")).unwrap_or_else(|| panic!("{mails:?}"));
    assert!(!told.contains("tess.new@halyard.test"), "the old address is not told the new one: {told}");

    // Concurrent uses of one link: exactly one sets the password.
    let (s, _) = app.post("/api/users/password-reset", None, json!({"email": "tess.new@halyard.test"})).await;
    assert!(s.is_success());
    let link = link_token(&app.mails_to("tess.new@halyard.test", 1).await.remove(0), "/reset-password");
    let path = format!("/api/users/password-reset/{link}");
    let uses = (0..8).map(|i| app.post(&path, None, json!({"password": format!("Racing-Pass-{i}-2026")})));
    let answers: Vec<StatusCode> = futures::future::join_all(uses).await.into_iter().map(|(s, _)| s).collect();
    assert_eq!(answers.iter().filter(|s| **s == StatusCode::NO_CONTENT).count(), 1, "{answers:?}");
    assert!(answers.iter().all(|s| [StatusCode::NO_CONTENT, StatusCode::GONE].contains(s)), "{answers:?}");
    assert_eq!(listed(tess_id).await["verified"], json!(true), "verified again through the new address");
    venue.app.stop().await;
}
