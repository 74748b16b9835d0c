#![allow(clippy::unwrap_used)]
//! Serving: the built web app with SPA fallback, `/api` never falling back to it,
//! health and readiness, the OpenAPI document, and the security headers.

mod support;

use reqwest::StatusCode;
use support::*;

on_both_backends!(metrics_and_request_ids);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spa_health_openapi_and_headers() {
    let web = temp_dir();
    std::fs::write(web.path().join("index.html"), "<!doctype html><title>Upstairs</title><div id=root></div>").unwrap();
    std::fs::create_dir_all(web.path().join("assets")).unwrap();
    std::fs::write(web.path().join("assets/app.js"), "console.log('app')").unwrap();
    std::fs::create_dir_all(web.path().join(".vite")).unwrap();
    std::fs::write(web.path().join(".vite/manifest.json"), "{}").unwrap();
    let dir = web.path().to_owned();
    let app = TestApp::spawn_with(Backend::Sqlite, move |s| s.web_dir = Some(dir)).await;
    let get = |path: &str| app.client.get(format!("{}{path}", app.base)).send();

    for path in ["/", "/dashboard", "/reset-password?hash=abc", "/admin/company", "/no/such/page"] {
        let res = get(path).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK, "{path}");
        let csp = res.headers()["content-security-policy"].to_str().unwrap().to_owned();
        assert!(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"), "{csp}");
        for h in ["x-content-type-options", "x-frame-options", "referrer-policy"] {
            assert!(res.headers().contains_key(h), "{path} lacks {h}");
        }
        assert_eq!(res.headers()["referrer-policy"], "no-referrer");
        assert!(res.text().await.unwrap().contains("<div id=root>"), "{path} serves index.html");
    }
    let js = get("/assets/app.js").await.unwrap();
    assert_eq!(js.status(), StatusCode::OK);
    assert!(js.headers()["content-type"].to_str().unwrap().contains("javascript"));
    // The build's manifest (and any dot-file) is not served, nor answered with the app.
    for path in ["/.vite/manifest.json", "/.vite/", "/assets/.hidden"] {
        let res = get(path).await.unwrap();
        assert_eq!(res.status(), StatusCode::NOT_FOUND, "{path}");
        assert!(res.headers().contains_key("content-security-policy"), "{path}");
    }
    // Served over http: no HSTS.
    assert!(!js.headers().contains_key("strict-transport-security"));

    // /api never falls back to the app.
    let res = get("/api/dashboard").await.unwrap();
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
    assert_eq!(res.headers()["content-type"], "application/problem+json");
    assert!(res.headers().contains_key("content-security-policy"));
    assert_eq!(res.headers()["cache-control"], "no-store");

    assert_eq!(get("/healthz").await.unwrap().text().await.unwrap(), "ok");
    assert_eq!(get("/readyz").await.unwrap().status(), StatusCode::OK);
    let doc: serde_json::Value = get("/api/openapi.json").await.unwrap().json().await.unwrap();
    assert_eq!(doc["info"]["title"], "Upstairs API");
    for path in
        ["/api/auth/login", "/api/users/me", "/api/users/password-reset/{hash}", "/api/orders", "/api/admin/companies"]
    {
        assert!(doc["paths"].get(path).is_some(), "{path} documented");
    }
    let (_, cfg) = app.get("/api/config", None).await;
    assert_eq!(cfg["product_name"], "Upstairs");
    // The WebSocket endpoint refuses foreign browser origins.
    let res = app
        .client
        .get(format!("{}/ws", app.base))
        .header("origin", "https://evil.example")
        .header("connection", "upgrade")
        .header("upgrade", "websocket")
        .header("sec-websocket-version", "13")
        .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_venue_on_https_sends_hsts_on_every_answer() {
    let app = TestApp::spawn_with(Backend::Sqlite, |s| s.public_url = Some("https://venue.example".into())).await;
    for path in ["/healthz", "/api/config", "/api/no-such-endpoint", "/dashboard"] {
        let res = app.client.get(format!("{}{path}", app.base)).send().await.unwrap();
        assert_eq!(res.headers()["strict-transport-security"], "max-age=31536000; includeSubDomains", "{path}");
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_built_app_pages_say_so() {
    let app = TestApp::spawn(Backend::Sqlite).await;
    let res = app.client.get(format!("{}/dashboard", app.base)).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(res.text().await.unwrap().contains("make run"));
    app.stop().await;
}

/// A client that sends its headers too slowly is cut off, an idle keep-alive connection is
/// closed, and a connection over the ceiling is closed at once; others are still served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_idle_and_surplus_connections_are_closed() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = TestApp::spawn_with(Backend::Sqlite, |s| {
        s.server_limits.header_read = std::time::Duration::from_millis(300);
        s.server_limits.max_connections = 2;
    })
    .await;
    let addr = format!("127.0.0.1:{}", app.port());
    // Closed means: the read ends (0 bytes or a reset) within the deadline.
    async fn closed_within(s: &mut tokio::net::TcpStream, d: std::time::Duration) -> bool {
        let mut buf = [0u8; 1024];
        let deadline = tokio::time::Instant::now() + d;
        loop {
            match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
                Err(_) => return false,
                Ok(Ok(0)) | Ok(Err(_)) => return true,
                Ok(Ok(_)) => continue,
            }
        }
    }
    // Refused means: closed without a byte of answer (an answered one is closed too, when idle).
    async fn refused_within(s: &mut tokio::net::TcpStream, d: std::time::Duration) -> bool {
        let mut buf = [0u8; 1024];
        matches!(tokio::time::timeout(d, s.read(&mut buf)).await, Ok(Ok(0)) | Ok(Err(_)))
    }
    let within = std::time::Duration::from_secs(5);
    // Slowloris: half a request line, then nothing.
    let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n").await.unwrap();
    assert!(closed_within(&mut slow, within).await, "headers not finished in time: closed");
    // Keep-alive: one answer, then idle; closed.
    let mut idle = tokio::net::TcpStream::connect(&addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    assert!(closed_within(&mut idle, within).await, "an idle keep-alive connection is closed");
    drop((slow, idle));
    // Two held open; a third is closed at once while the two still work.
    let mut held = Vec::new();
    for _ in 0..2 {
        held.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    let mut third = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let _ = third.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await;
    assert!(refused_within(&mut third, within).await, "over the ceiling: closed unanswered");
    held[0].write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await.unwrap();
    let mut answer = String::new();
    held[0].read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    drop(held);
    // Open WebSockets count too: two STOMP sessions fill the ceiling after their upgrade.
    // The sign-in's connection is not kept (a pooled one would hold a place until its idle
    // deadline). A place comes back once the server sees its connection close, so a
    // session refused meanwhile is tried again (a refused peer says so after 5 s).
    // The two held connections give their places back only once the server sees them
    // close, so a sign-in refused meanwhile is tried again.
    let once = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
    let deadline = tokio::time::Instant::now() + within;
    let signed_in = loop {
        let sent = once
            .post(format!("{}/api/auth/login", app.base))
            .json(&serde_json::json!({"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}))
            .send()
            .await;
        match sent {
            Ok(res) => break res,
            Err(e) => assert!(tokio::time::Instant::now() < deadline, "no place to sign in: {e}"),
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    let admin = signed_in.json::<serde_json::Value>().await.unwrap()["token"].as_str().unwrap().to_owned();
    drop(once);
    let mut sockets = Vec::new();
    let deadline = tokio::time::Instant::now() + 3 * within;
    while sockets.len() < 2 {
        let mut peer = Peer::spawn(
            "stomp_client.py",
            &["127.0.0.1".into(), app.port().to_string(), admin.clone(), "/user/topic/orders".into()],
        );
        match peer.next_json(2 * within).await {
            Some(e) if e["event"] == "connected" => sockets.push(peer),
            said => assert!(tokio::time::Instant::now() < deadline, "no place for a STOMP session: {said:?}"),
        }
    }
    let mut over = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let _ = over.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await;
    assert!(refused_within(&mut over, within).await, "two sockets open: over the ceiling");
    // A socket that closes gives its place back.
    drop(sockets.pop());
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let mut c = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let _ = c.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await;
        let mut answer = String::new();
        let _ = c.read_to_string(&mut answer).await;
        if answer.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "a place came back when a socket closed");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    drop(sockets);
    app.stop().await;
}

/// `/metrics` counts requests under their route template (never a raw path), and shows
/// sessions, the backlog and the pool, on its own address only: the app's port answers it
/// 404 (finding 5a: trade counts for anyone who reached the venue). Every response
/// carries a request id, a proxy's kept.
async fn metrics_and_request_ids(b: Backend) {
    let app = TestApp::spawn(b).await;
    let admin = app.admin_token().await;
    let (_, me) = app.get("/api/users/me", Some(&admin)).await;
    let company = me["company_id"].as_str().unwrap().to_owned();
    for _ in 0..2 {
        assert_eq!(app.get(&format!("/api/companies/{company}"), Some(&admin)).await.0, StatusCode::OK);
    }
    assert_eq!(app.get("/api/users/me", None).await.0, StatusCode::UNAUTHORIZED);
    let (s, v) = app.get("/metrics", None).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "/metrics on the app's port: {v}");
    assert_ne!(app.metrics_url(), format!("{}/metrics", app.base));
    let res = app.client.get(app.metrics_url()).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert!(res.headers()["content-type"].to_str().unwrap().starts_with("text/plain; version=0.0.4"));
    let text = res.text().await.unwrap();
    for line in [
        "upstairs_http_requests_total{method=\"GET\",route=\"/api/companies/{id}\",status=\"200\"} 2",
        "upstairs_http_requests_total{method=\"GET\",route=\"/api/users/me\",status=\"401\"} 1",
        "upstairs_http_request_duration_seconds_count{method=\"GET\",route=\"/api/companies/{id}\"} 2",
        "upstairs_stomp_sessions 0",
        "upstairs_peers_heard 1",
        "upstairs_timer_lag_seconds 0",
    ] {
        assert!(text.lines().any(|l| l == line), "no {line} in\n{text}");
    }
    assert!(!text.contains(&company), "no id in a label");
    for name in [
        "upstairs_outbox_emails ",
        "upstairs_outbox_fix_messages 0",
        "upstairs_db_connections_open ",
        "upstairs_matches_total 0",
        "upstairs_book_reads_total ",
    ] {
        assert!(text.lines().any(|l| l.starts_with(name)), "no {name} in\n{text}");
    }

    let res = app.client.get(format!("{}/healthz", app.base)).send().await.unwrap();
    let id = res.headers()["x-request-id"].to_str().unwrap();
    assert!(id.len() == 36 && id.matches('-').count() == 4, "a UUID: {id}");
    let res = app.client.get(format!("{}/healthz", app.base)).header("x-request-id", "proxy-42").send().await.unwrap();
    assert_eq!(res.headers()["x-request-id"], "proxy-42");
    app.stop().await;
}
