#![allow(clippy::unwrap_used)]
//! The e-mail outbox against a real SMTP server: temporary failures are retried with
//! backoff on the injected clock, with the same Message-ID, and the sent copy keeps
//! no secret link. The admin's outbox page shows a live link in the demo only.

mod support;

use chrono::Duration;
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::*;

on_both_backends!(
    temporary_failure_is_retried_with_the_same_message_id,
    the_outbox_shows_no_live_link_outside_the_demo
);

/// The outbox's password-reset e-mails to `to`, as the venue admin reads them.
async fn resets_to(app: &TestApp, admin: &str, to: &str) -> (Value, Vec<Value>) {
    let (s, outbox) = app.get("/api/admin/outbox?page=0&size=50", Some(admin)).await;
    assert_eq!(s, StatusCode::OK, "{outbox}");
    let resets = outbox["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["kind"] == "PASSWORD_RESET" && m["to"] == to)
        .cloned()
        .collect();
    (outbox, resets)
}

/// Finding 5b: a venue admin who read a trader's reset link in the outbox could take the
/// account over. Outside `upstairs demo` the page says a link was sent, never the link,
/// queued or delivered (the test's file transport keeps copies, as the demo's does).
async fn the_outbox_shows_no_live_link_outside_the_demo(b: Backend) {
    let app = TestApp::spawn(b).await;
    let admin = app.admin_token().await;
    app.create_user(&admin, "tess@halyard.test").await;
    let (s, v) = app.post("/api/users/password-reset", None, json!({"email": "tess@halyard.test"})).await;
    assert_eq!(s, StatusCode::NO_CONTENT, "{v}");
    let queued = resets_to(&app, &admin, "tess@halyard.test").await;
    let mails = app.mails_to("tess@halyard.test", 2).await;
    let mail = mails.iter().find(|m| m.contains("/reset-password?hash=")).expect("the reset e-mail");
    let token = link_token(mail, "/reset-password");
    let sent = resets_to(&app, &admin, "tess@halyard.test").await;
    for (outbox, resets) in [queued, sent] {
        assert_eq!(resets.len(), 1, "{outbox}");
        assert_eq!((resets[0]["links"].clone(), resets[0]["links_hidden"].clone()), (json!([]), json!(true)));
        let text = outbox.to_string();
        assert!(!text.contains(&token) && !text.contains("hash="), "a live link in the outbox: {text}");
    }
    app.stop().await;
}

/// The demo's outbox shows its links (its logins and password are public anyway), so its
/// broker confirmations can be followed end to end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_outbox_shows_its_links() {
    let app = TestApp::spawn_with(Backend::Sqlite, |s| s.demo = true).await;
    let admin = app.login("admin@upstairs.demo", upstairs::demo::DEMO_PASSWORD).await;
    let (s, v) = app.post("/api/users/password-reset", None, json!({"email": "trader2@halyard.demo"})).await;
    assert_eq!(s, StatusCode::NO_CONTENT, "{v}");
    let (outbox, resets) = resets_to(&app, &admin, "trader2@halyard.demo").await;
    assert_eq!(resets.len(), 1, "{outbox}");
    let links = resets[0]["links"].as_array().unwrap();
    assert!(links.len() == 1 && links[0].as_str().unwrap().contains("/reset-password?hash="), "{outbox}");
    assert_eq!(resets[0]["links_hidden"], json!(false));
    app.stop().await;
}

async fn temporary_failure_is_retried_with_the_same_message_id(b: Backend) {
    let sink_dir = temp_dir();
    let sink = SmtpSink::start(sink_dir.path(), 1).await;
    let url = sink.url();
    let app = TestApp::spawn_with(b, |s| s.smtp_url = Some(url)).await;
    let wake = app.running.as_ref().unwrap().wake.clone();
    let admin = app.admin_token().await;
    app.create_user(&admin, "retry@halyard.test").await;

    let rejected = sink.wait_for("rejected", 1, Some(&wake)).await;
    // The sink has written the message before it answers 451; the app records the failure
    // after the answer: wait for that record.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let outbox = loop {
        let (_, outbox) = audit_and_outbox(&app.database_url).await;
        if outbox.first().is_some_and(|m| m.last_error.is_some()) || std::time::Instant::now() >= deadline {
            break outbox;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(outbox.len(), 1);
    assert_eq!((outbox[0].attempts, outbox[0].sent_at), (1, None));
    assert!(outbox[0].last_error.as_deref().unwrap_or("").contains("451"), "{:?}", outbox[0].last_error);

    // Not before the backoff (5 s on the test clock)...
    let running = app.running.as_ref().unwrap();
    app.clock.advance(Duration::seconds(4));
    running.run_due_timers().await;
    assert!(sink.received("msg").is_empty(), "retried before its time");
    // ...and at it.
    app.clock.advance(Duration::seconds(1));
    running.run_due_timers().await;
    let delivered = sink.received("msg");
    assert_eq!(delivered.len(), 1);
    let id = header(&rejected[0], "Message-ID").expect("Message-ID");
    assert_eq!(header(&delivered[0], "Message-ID"), Some(id), "a retry carries the same Message-ID");
    assert!(delivered[0].contains("/account-activate?hash="));
    assert_eq!(header(&delivered[0], "X-Sink-Rcpt-To"), Some("retry@halyard.test"));

    let (_, outbox) = audit_and_outbox(&app.database_url).await;
    assert!(outbox[0].sent_at.is_some());
    let stored = serde_json::to_string(&outbox[0].email).unwrap();
    assert!(!stored.contains("hash="), "the sent copy keeps no link: {stored}");
    drop(sink);
    app.stop().await;
}
