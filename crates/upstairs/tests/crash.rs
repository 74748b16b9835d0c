#![allow(clippy::unwrap_used)]
//! The real `upstairs` binary: bootstrap with `upstairs user create`, then SIGKILL the
//! server after a user was created but before its e-mail went out. After a restart the
//! e-mail is delivered with the Message-ID of the first attempt.

mod support;

use reqwest::StatusCode;
use std::time::Duration;
use support::*;

on_both_backends!(email_survives_sigkill);

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
