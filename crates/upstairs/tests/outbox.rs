#![allow(clippy::unwrap_used)]
//! The e-mail outbox against a real SMTP server: temporary failures are retried with
//! backoff on the injected clock, with the same Message-ID, and the sent copy keeps
//! no secret link.

mod support;

use chrono::Duration;
use support::*;

on_both_backends!(temporary_failure_is_retried_with_the_same_message_id);

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
