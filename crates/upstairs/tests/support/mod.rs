#![allow(clippy::unwrap_used)]
//! Test harness: the real application in-process on a free port, on a fresh SQLite
//! file or a fresh PostgreSQL schema, with a manual clock and mail written to files.
#![allow(dead_code)]

use chrono::{DateTime, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use upstairs::app::{self, Running, Settings};
use upstairs_engine::ManualClock;
use upstairs_store::testing::postgres_url;

pub mod venue;

pub const ADMIN_EMAIL: &str = "admin@upstairs.test";
pub const ADMIN_PASSWORD: &str = "Admin-Pass-2026";

#[derive(Clone, Copy, Debug)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Generates one `#[tokio::test]` per backend for an `async fn(Backend)`.
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        $(mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() { super::$name(super::support::Backend::Sqlite).await }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() { super::$name(super::support::Backend::Postgres).await }
        })*
    };
}

pub fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-03-02T10:00:00Z").unwrap().with_timezone(&Utc)
}

/// A folder that disappears with the test.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("upstairs-test-").tempdir().unwrap()
}

/// A fresh database URL of the backend (SQLite file in `dir`, or a new schema).
pub async fn fresh_database_url(backend: Backend, dir: &Path) -> String {
    match backend {
        Backend::Sqlite => format!("sqlite://{}", dir.join("db.sqlite").display()),
        Backend::Postgres => {
            let schema = upstairs_store::testing::fresh_schema_name().await;
            // Creates the schema and runs the migrations in it.
            upstairs_store::PgStore::connect_in_schema(&postgres_url(), &schema).await.expect("postgres reachable");
            let sep = if postgres_url().contains('?') { '&' } else { '?' };
            format!("{}{sep}options%5Bsearch_path%5D={schema}", postgres_url())
        }
    }
}

/// With `TEST_LOG` set, the server's logs (filtered by `RUST_LOG`, default `info`) are
/// printed through the test harness, so they show beside the failing test.
pub fn init_test_logs() {
    if std::env::var_os("TEST_LOG").is_some() {
        let filter = tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
        // Several tests of one binary call this; only the first installs it.
        let _ = tracing_subscriber::fmt().with_env_filter(filter).with_test_writer().try_init();
    }
}

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub clock: Arc<ManualClock>,
    pub mail_dir: PathBuf,
    pub database_url: String,
    pub running: Option<Running>,
    pub dir: tempfile::TempDir,
}

impl TestApp {
    pub async fn spawn(backend: Backend) -> TestApp {
        Self::spawn_with(backend, |_| {}).await
    }

    /// The app with its clock starting at `start` (e.g. a trading Tuesday).
    pub async fn spawn_at(backend: Backend, start: DateTime<Utc>) -> TestApp {
        Self::spawn_inner(backend, Some(start), |_| {}).await
    }

    pub async fn spawn_with(backend: Backend, tweak: impl FnOnce(&mut Settings)) -> TestApp {
        Self::spawn_inner(backend, None, tweak).await
    }

    async fn spawn_inner(backend: Backend, start: Option<DateTime<Utc>>, tweak: impl FnOnce(&mut Settings)) -> TestApp {
        init_test_logs();
        let dir = temp_dir();
        let database_url = fresh_database_url(backend, dir.path()).await;
        let mail_dir = dir.path().join("mail");
        let mut settings = Settings {
            bind: "127.0.0.1:0".into(),
            database_url: database_url.clone(),
            mail_dir: mail_dir.clone(),
            web_dir: None,
            scheduler_poll: Duration::from_millis(50),
            ..Settings::default()
        };
        tweak(&mut settings);
        if !settings.demo {
            // The demo loads its own users into an empty database.
            app::bootstrap_user(&database_url, ADMIN_EMAIL, ADMIN_PASSWORD, &["upstairs-admin"], "Upstairs")
                .await
                .expect("bootstrap admin");
        }
        // Start after the bootstrap, which (like `upstairs user create`) uses the wall clock.
        let clock = Arc::new(ManualClock::new(
            start.unwrap_or_else(|| upstairs_engine::Clock::now(&upstairs_engine::SystemClock)),
        ));
        let running = app::start(settings, clock.clone()).await.expect("start app");
        let base = format!("http://{}", running.addr);
        TestApp { base, client: reqwest::Client::new(), clock, mail_dir, database_url, running: Some(running), dir }
    }

    pub fn port(&self) -> u16 {
        self.running.as_ref().map(|r| r.addr.port()).unwrap_or(0)
    }

    /// Sends a request; returns the status and the JSON body (Null when empty).
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut rb = self.client.request(method, format!("{}{path}", self.base));
        if let Some(t) = token {
            rb = rb.bearer_auth(t);
        }
        if let Some(b) = body {
            rb = rb.json(&b);
        }
        let res = rb.send().await.expect("request");
        let status = res.status();
        let ct = res.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        let text = res.text().await.unwrap();
        if status.is_client_error() || status.is_server_error() {
            assert_eq!(ct, "application/problem+json", "{status} without a problem body: {text}");
        }
        let v = if text.is_empty() { Value::Null } else { serde_json::from_str(&text).unwrap_or(Value::String(text)) };
        (status, v)
    }

    pub async fn get(&self, path: &str, token: Option<&str>) -> (StatusCode, Value) {
        self.call(Method::GET, path, token, None).await
    }

    pub async fn post(&self, path: &str, token: Option<&str>, body: Value) -> (StatusCode, Value) {
        self.call(Method::POST, path, token, Some(body)).await
    }

    pub async fn patch(&self, path: &str, token: Option<&str>, body: Value) -> (StatusCode, Value) {
        self.call(Method::PATCH, path, token, Some(body)).await
    }

    pub async fn delete(&self, path: &str, token: Option<&str>) -> (StatusCode, Value) {
        self.call(Method::DELETE, path, token, None).await
    }

    pub async fn login(&self, email: &str, password: &str) -> String {
        let (s, v) = self
            .post("/api/auth/login", None, json!({"email": email, "password": password, "rememberMe": false}))
            .await;
        assert_eq!(s, StatusCode::OK, "login {email}: {v}");
        v["token"].as_str().unwrap().to_owned()
    }

    /// A 30-day session (tests that move the clock across days).
    pub async fn login_remembered(&self, email: &str, password: &str) -> String {
        let (s, v) =
            self.post("/api/auth/login", None, json!({"email": email, "password": password, "rememberMe": true})).await;
        assert_eq!(s, StatusCode::OK, "login {email}: {v}");
        v["token"].as_str().unwrap().to_owned()
    }

    pub async fn admin_token(&self) -> String {
        self.login(ADMIN_EMAIL, ADMIN_PASSWORD).await
    }

    /// Creates a user as the admin in the admin's company; returns its JSON.
    pub async fn create_user(&self, admin: &str, email: &str) -> Value {
        let (_, me) = self.get("/api/users/me", Some(admin)).await;
        let (s, v) = self
            .post(
                "/api/users",
                Some(admin),
                json!({"email": email, "first_name": "Tess", "last_name": "Trader",
                       "company_id": me["company_id"], "roles": ["trader"]}),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
        v
    }

    /// Waits (polling, with a deadline) until `n` e-mails to `to` are in the mail folder.
    pub async fn mails_to(&self, to: &str, n: usize) -> Vec<String> {
        poll_until(Duration::from_secs(10), || {
            if let Some(r) = &self.running {
                r.wake.notify_one();
            }
            let found = read_mails(&self.mail_dir, to);
            (found.len() >= n).then_some(found)
        })
        .await
        .unwrap_or_else(|| panic!("expected {n} e-mail(s) to {to} in {}", self.mail_dir.display()))
    }

    pub async fn stop(mut self) {
        if let Some(r) = self.running.take() {
            r.stop().await;
        }
    }
}

/// Polls `f` every 20 ms until it returns Some, or gives up at the deadline.
pub async fn poll_until<T>(deadline: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let end = Instant::now() + deadline;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= end {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Every .eml in `dir` addressed to `to`, oldest file first.
pub fn read_mails(dir: &Path, to: &str) -> Vec<String> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "eml")).collect()
        })
        .unwrap_or_default();
    files.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
    files
        .into_iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .filter(|m| m.lines().any(|l| l.eq_ignore_ascii_case(&format!("To: {to}"))))
        .collect()
}

/// The `hash` of the first link to `path` (e.g. `/reset-password`) in an e-mail.
pub fn link_token(mail: &str, path: &str) -> String {
    let needle = format!("{path}?hash=");
    let at = mail.find(&needle).unwrap_or_else(|| panic!("no {needle} link in:\n{mail}")) + needle.len();
    mail[at..].chars().take_while(|c| c.is_ascii_hexdigit()).collect()
}

pub fn header<'a>(mail: &'a str, name: &str) -> Option<&'a str> {
    let prefix = format!("{name}: ");
    mail.lines().find_map(|l| l.strip_prefix(&prefix))
}

/// The Python interpreter of the test peers (`make test-deps` creates it).
pub fn python() -> PathBuf {
    if let Ok(p) = std::env::var("UPSTAIRS_TEST_PYTHON") {
        return p.into();
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    assert!(p.exists(), "no test peers: run `make test-deps` to create .venv with aiosmtpd and stomp.py");
    p
}

pub fn peer_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers").join(name)
}

/// A Python test peer printing one line per event; it exits when we drop it.
pub struct Peer {
    pub child: tokio::process::Child,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Peer {
    pub fn spawn(script: &str, args: &[String]) -> Peer {
        let mut child = tokio::process::Command::new(python())
            .arg(peer_script(script))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn test peer");
        let stdout = child.stdout.take().unwrap();
        Peer { child, lines: BufReader::new(stdout).lines() }
    }

    /// The next line, or None at the deadline.
    pub async fn next_line(&mut self, within: Duration) -> Option<String> {
        tokio::time::timeout(within, self.lines.next_line()).await.ok().and_then(|r| r.ok().flatten())
    }

    pub async fn next_json(&mut self, within: Duration) -> Option<Value> {
        self.next_line(within).await.map(|l| serde_json::from_str(&l).unwrap_or_else(|_| panic!("peer said {l}")))
    }
}

async fn read_store<S: upstairs_engine::Store>(
    s: S,
) -> (Vec<upstairs_engine::model::ActionLog>, Vec<upstairs_engine::model::OutboxMessage>) {
    use upstairs_engine::ports::{AuditRepo, OutboxRepo};
    let mut tx = s.read().await.unwrap();
    (tx.action_logs(1000).await.unwrap(), tx.outbox_messages(0, 1000).await.unwrap().items)
}

/// The action log (newest first) and the outbox, read straight from the database.
pub async fn audit_and_outbox(
    database_url: &str,
) -> (Vec<upstairs_engine::model::ActionLog>, Vec<upstairs_engine::model::OutboxMessage>) {
    if database_url.starts_with("sqlite:") {
        read_store(upstairs_store::SqliteStore::connect(database_url).await.unwrap()).await
    } else {
        read_store(upstairs_store::PgStore::connect(database_url).await.unwrap()).await
    }
}

/// A real SMTP server (aiosmtpd) writing what it receives into `dir`.
pub struct SmtpSink {
    pub peer: Peer,
    pub port: u16,
    pub dir: PathBuf,
}

impl SmtpSink {
    /// `reject_first`: how many messages to answer with a temporary failure (451).
    pub async fn start(dir: &Path, reject_first: usize) -> SmtpSink {
        let mut peer = Peer::spawn(
            "smtp_sink.py",
            &[dir.display().to_string(), "--reject-first".into(), reject_first.to_string()],
        );
        let line = peer.next_line(Duration::from_secs(30)).await.expect("smtp_sink.py printed nothing");
        let port =
            line.strip_prefix("READY ").and_then(|p| p.parse().ok()).unwrap_or_else(|| panic!("sink said {line}"));
        SmtpSink { peer, port, dir: dir.to_owned() }
    }

    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Messages received with the given file prefix (`msg` accepted, `rejected`).
    pub fn received(&self, prefix: &str) -> Vec<String> {
        let mut files: Vec<_> = std::fs::read_dir(&self.dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .filter(|p| {
                        p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with(&format!("{prefix}-")) && n.ends_with(".eml"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        files.into_iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect()
    }

    pub async fn wait_for(&self, prefix: &str, n: usize, wake: Option<&Arc<tokio::sync::Notify>>) -> Vec<String> {
        poll_until(Duration::from_secs(15), || {
            if let Some(w) = wake {
                w.notify_one();
            }
            let got = self.received(prefix);
            (got.len() >= n).then_some(got)
        })
        .await
        .unwrap_or_else(|| panic!("expected {n} {prefix} message(s) in {}", self.dir.display()))
    }
}
