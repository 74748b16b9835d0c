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

pub mod fix;
pub mod venue;

pub const ADMIN_EMAIL: &str = "admin@upstairs.test";
pub const ADMIN_PASSWORD: &str = "Admin-Pass-2026";

#[derive(Clone, Copy, Debug)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Generates one `#[tokio::test]` per backend for an `async fn(Backend)`. After the test
/// body, every parent order of every app it spawned must still add up
/// ([`assert_every_parent_balanced`]), whether or not the body stopped its app.
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        $(mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::support::balanced_after(super::$name(super::support::Backend::Sqlite)).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::support::balanced_after(super::$name(super::support::Backend::Postgres)).await
            }
        })*
    };
}

/// A database a test spawned an app on, kept (with its folder) until checked.
struct Spawned {
    database_url: String,
    _dir: Arc<tempfile::TempDir>,
}

tokio::task_local! {
    /// The apps spawned by the running test body (set by [`balanced_after`]).
    static SPAWNED: std::sync::Mutex<Vec<Spawned>>;
}

/// Runs a test body, then checks every parent order of every app it spawned. Each
/// database's folder outlives the body (the registry holds it), so a body that never
/// called [`TestApp::stop`] is checked too.
pub async fn balanced_after(body: impl std::future::Future<Output = ()>) {
    SPAWNED
        .scope(std::sync::Mutex::new(Vec::new()), async move {
            body.await;
            let spawned = SPAWNED.with(|s| std::mem::take(&mut *s.lock().unwrap()));
            for s in spawned {
                assert_every_parent_balanced(&s.database_url).await;
            }
        })
        .await
}

/// The invariant of every test (issue 10): for every parent order in the database, of
/// every company, `tradable + working + matched = quantity` with none negative, and its
/// working and matched counters equal the sums of its child orders in those states (the
/// states as the domain defines them); every child order belongs to a known parent of
/// its own company, instrument and side. Read straight from the store, not through the
/// API, so no test can skip it and no permission hides a parent.
pub async fn assert_every_parent_balanced(database_url: &str) {
    // Under PostgreSQL's read committed, a write the app commits between our two reads
    // (parents, then children) may look like a mismatch; a real one stays.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let found = if database_url.starts_with("sqlite:") {
            unbalanced(upstairs_store::SqliteStore::connect(database_url).await.unwrap()).await
        } else {
            unbalanced(upstairs_store::PgStore::connect(database_url).await.unwrap()).await
        };
        if found.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "tradable + working + matched = quantity broken in {database_url}:\n{}",
            found.join("\n")
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What is wrong with the parents' quantities in `store`, one line per finding.
async fn unbalanced<S: upstairs_engine::Store>(store: S) -> Vec<String> {
    use std::collections::HashMap;
    use upstairs_engine::model::{OrderFilter, ParentState};
    use upstairs_engine::ports::{CompanyRepo, OrderRepo};
    let mut tx = store.read().await.unwrap();
    let companies = tx.companies(0, 100_000).await.unwrap();
    assert_eq!(companies.items.len() as i64, companies.total_items, "every company read");
    let mut parents = HashMap::new();
    for c in companies.items {
        let all = [ParentState::Active, ParentState::Filled, ParentState::Cancelled];
        for p in tx.parent_orders(c.company_id, &all).await.unwrap() {
            parents.insert(p.parent.parent_order_id, p);
        }
    }
    let children = tx.orders(&OrderFilter::default()).await.unwrap();
    let mut sums: HashMap<_, (i64, i64)> = HashMap::new();
    let mut wrong = Vec::new();
    for o in &children {
        let Some(p) = parents.get(&o.parent_order_id) else {
            wrong.push(format!("child order {} of unknown parent {}", o.order_id, o.parent_order_id));
            continue;
        };
        let p = &p.parent;
        if (o.company_id, o.instrument_id, o.direction) != (p.company_id, p.instrument_id, p.direction) {
            wrong
                .push(format!("child order {} is not of its parent's company, instrument and side: {o:?}", o.order_id));
        }
        let s = sums.entry(o.parent_order_id).or_default();
        if o.state.is_working() {
            s.0 += o.quantity;
        }
        if o.state.is_matched() {
            s.1 += o.quantity;
        }
    }
    for v in parents.values() {
        let p = &v.parent;
        let (working, matched) = sums.get(&p.parent_order_id).copied().unwrap_or_default();
        // The store keeps working and matched; tradable is what is left of the quantity, so
        // `tradable + working + matched = quantity` holds when no part is negative and the
        // two counters are what the child orders say.
        let tradable = p.quantity - v.working - v.matched;
        let what = format!(
            "parent {} ({:?}, {:?}, quantity {}): tradable {tradable}, working {}, matched {}",
            p.parent_order_id, p.state, p.direction, p.quantity, v.working, v.matched
        );
        if upstairs_domain::order::Quantities::of(p.quantity, v.working, v.matched).is_none() {
            wrong.push(format!("{what}: a quantity is negative"));
        }
        if v.working != working {
            wrong.push(format!("{what}: its child orders work {working}"));
        }
        if v.matched != matched {
            wrong.push(format!("{what}: its child orders matched {matched}"));
        }
        if p.state == ParentState::Filled && v.matched != p.quantity {
            wrong.push(format!("{what}: FILLED but not fully matched"));
        }
    }
    wrong.sort();
    wrong
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

/// A test node's settings: any free port (its metrics' too), a job loop that polls often.
fn node_settings(database_url: &str, mail_dir: &Path) -> Settings {
    let mut settings = Settings {
        bind: "127.0.0.1:0".into(),
        metrics_bind: Some("127.0.0.1:0".into()),
        database_url: database_url.into(),
        mail_dir: mail_dir.into(),
        web_dir: None,
        scheduler_poll: Duration::from_millis(50),
        ..Settings::default()
    };
    // The tests' clock stands still, so a user's write throttle would never refill:
    // off, except where a test turns it on to test it (`hardening.rs`).
    settings.rate_limits.writes_per_second = 0;
    settings
}

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub clock: Arc<ManualClock>,
    pub mail_dir: PathBuf,
    pub database_url: String,
    pub running: Option<Running>,
    /// Shared with the test's registry (`balanced_after`), which checks the database
    /// after the body and only then lets the folder go.
    pub dir: Arc<tempfile::TempDir>,
}

impl TestApp {
    pub async fn spawn(backend: Backend) -> TestApp {
        Self::spawn_with(backend, |_| {}).await
    }

    /// The app with its clock starting at `start` (e.g. a trading Tuesday).
    pub async fn spawn_at(backend: Backend, start: DateTime<Utc>) -> TestApp {
        Self::spawn_inner(backend, Some(start), |_| {}).await
    }

    /// The app with its clock starting at `start` and its settings tweaked.
    pub async fn spawn_at_with(backend: Backend, start: DateTime<Utc>, tweak: impl FnOnce(&mut Settings)) -> TestApp {
        Self::spawn_inner(backend, Some(start), tweak).await
    }

    pub async fn spawn_with(backend: Backend, tweak: impl FnOnce(&mut Settings)) -> TestApp {
        Self::spawn_inner(backend, None, tweak).await
    }

    async fn spawn_inner(backend: Backend, start: Option<DateTime<Utc>>, tweak: impl FnOnce(&mut Settings)) -> TestApp {
        init_test_logs();
        let dir = Arc::new(temp_dir());
        let database_url = fresh_database_url(backend, dir.path()).await;
        let mail_dir = dir.path().join("mail");
        let mut settings = node_settings(&database_url, &mail_dir);
        tweak(&mut settings);
        // The demo runs always open, as `upstairs demo` does (`cli.rs`): otherwise a demo
        // test would depend on the wall clock's hour.
        settings.calendar.always_open |= settings.demo;
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
        // Outside `on_both_backends!` (a plain `#[tokio::test]`) only `stop` checks it.
        let _ = SPAWNED
            .try_with(|s| s.lock().unwrap().push(Spawned { database_url: database_url.clone(), _dir: dir.clone() }));
        let base = format!("http://{}", running.addr);
        TestApp { base, client: reqwest::Client::new(), clock, mail_dir, database_url, running: Some(running), dir }
    }

    /// Another node of this venue on the same database, with the same clock: what one
    /// node commits, the other's sessions hear (PostgreSQL only; SQLite is one node).
    pub async fn spawn_node(&self) -> TestApp {
        self.spawn_node_with(|_| {}).await
    }

    /// [`Self::spawn_node`] with its settings tweaked (its FIX gateway, say).
    pub async fn spawn_node_with(&self, tweak: impl FnOnce(&mut Settings)) -> TestApp {
        let mut settings = node_settings(&self.database_url, &self.mail_dir);
        tweak(&mut settings);
        let running = app::start(settings, self.clock.clone()).await.expect("start a second node");
        TestApp {
            base: format!("http://{}", running.addr),
            client: reqwest::Client::new(),
            clock: self.clock.clone(),
            mail_dir: self.mail_dir.clone(),
            database_url: self.database_url.clone(),
            running: Some(running),
            dir: self.dir.clone(),
        }
    }

    pub fn port(&self) -> u16 {
        self.running.as_ref().map(|r| r.addr.port()).unwrap_or(0)
    }

    /// `/metrics` on the node's metrics address (apart from [`Self::base`]).
    pub fn metrics_url(&self) -> String {
        let addr = self.running.as_ref().and_then(|r| r.metrics_addr).expect("the node serves metrics");
        format!("http://{addr}/metrics")
    }

    /// Sends a request; returns the status and the JSON body (Null when empty).
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        self.call_with(method, path, token, &[], body).await
    }

    /// A POST with an `Idempotency-Key`.
    pub async fn post_keyed(&self, path: &str, token: &str, key: &str, body: Value) -> (StatusCode, Value) {
        self.call_with(Method::POST, path, Some(token), &[("idempotency-key", key)], Some(body)).await
    }

    /// [`Self::call`] with extra headers.
    pub async fn call_with(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut rb = self.client.request(method, format!("{}{path}", self.base));
        for (k, v) in headers {
            rb = rb.header(*k, *v);
        }
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

    pub async fn put(&self, path: &str, token: Option<&str>, body: Value) -> (StatusCode, Value) {
        self.call(Method::PUT, path, token, Some(body)).await
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
                r.wake.all();
            }
            let found = read_mails(&self.mail_dir, to);
            (found.len() >= n).then_some(found)
        })
        .await
        .unwrap_or_else(|| panic!("expected {n} e-mail(s) to {to} in {}", self.mail_dir.display()))
    }

    /// Stops the app, then checks that every parent order in its database adds up.
    pub async fn stop(mut self) {
        if let Some(r) = self.running.take() {
            r.stop().await;
        }
        assert_every_parent_balanced(&self.database_url).await;
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

/// (order id, token) of each broker link to `path` (`/accept-order`, `/fill-order`) in
/// the e-mails, in their order.
#[allow(dead_code)]
pub fn broker_links(mails: &[String], path: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for mail in mails {
        let Some(at) = mail.find(&format!("{path}?order_id=")) else { continue };
        let link: String = mail[at..].chars().take_while(|c| !c.is_whitespace() && *c != '"').collect();
        let query = link.split_once('?').unwrap().1;
        let param = |k: &str| query.split('&').find_map(|kv| kv.strip_prefix(&format!("{k}="))).unwrap().to_owned();
        out.push((param("order_id"), param("token")));
    }
    out
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

async fn read_timers<S: upstairs_engine::Store>(s: S) -> Vec<upstairs_engine::model::Timer> {
    use upstairs_engine::ports::TimerRepo;
    let mut tx = s.read().await.unwrap();
    tx.pending_timers().await.unwrap()
}

/// The durable timers not yet run, read straight from the database.
pub async fn pending_timers(database_url: &str) -> Vec<upstairs_engine::model::Timer> {
    if database_url.starts_with("sqlite:") {
        read_timers(upstairs_store::SqliteStore::connect(database_url).await.unwrap()).await
    } else {
        read_timers(upstairs_store::PgStore::connect(database_url).await.unwrap()).await
    }
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

async fn read_present<S: upstairs_engine::Store>(
    s: S,
    holder: upstairs_engine::model::Holder,
    at: DateTime<Utc>,
) -> bool {
    use upstairs_engine::ports::UserRepo;
    let mut tx = s.read().await.unwrap();
    tx.present(holder, at).await.unwrap()
}

/// Whether any node holds a presence lease on `holder` beyond `at` (ADR 0043), read
/// straight from the database.
pub async fn present(database_url: &str, holder: upstairs_engine::model::Holder, at: DateTime<Utc>) -> bool {
    if database_url.starts_with("sqlite:") {
        read_present(upstairs_store::SqliteStore::connect(database_url).await.unwrap(), holder, at).await
    } else {
        read_present(upstairs_store::PgStore::connect(database_url).await.unwrap(), holder, at).await
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

    pub async fn wait_for(
        &self,
        prefix: &str,
        n: usize,
        wake: Option<&Arc<upstairs_engine::scheduler::Wakes>>,
    ) -> Vec<String> {
        poll_until(Duration::from_secs(15), || {
            if let Some(w) = wake {
                w.all();
            }
            let got = self.received(prefix);
            (got.len() >= n).then_some(got)
        })
        .await
        .unwrap_or_else(|| panic!("expected {n} {prefix} message(s) in {}", self.dir.display()))
    }
}

/// A free TCP port on loopback.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The real `upstairs` binary on `database_url`, warnings only, killed when dropped. No
/// metrics address: several run at once, and 127.0.0.1:9464 is only one.
pub fn upstairs_binary(database_url: &str) -> tokio::process::Command {
    let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_upstairs"));
    c.env("UPSTAIRS_DATABASE_URL", database_url)
        .env("UPSTAIRS_METRICS_BIND", "off")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .kill_on_drop(true);
    c
}

/// `upstairs serve` (the real binary) on `port` with `args` and `envs` added, once its
/// `/readyz` answers (polled, within 30 s).
pub async fn serve_binary(
    database_url: &str,
    port: u16,
    args: &[&str],
    envs: &[(&str, &std::ffi::OsStr)],
) -> tokio::process::Child {
    let mut command = upstairs_binary(database_url);
    command.args(["serve", "--bind", &format!("127.0.0.1:{port}")]).args(args);
    for (k, v) in envs {
        command.env(k, v);
    }
    let child = command.spawn().expect("start upstairs");
    let client = reqwest::Client::new();
    let ready = async {
        loop {
            let r = client.get(format!("http://127.0.0.1:{port}/readyz")).send().await;
            if r.is_ok_and(|r| r.status() == StatusCode::OK) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), ready).await.expect("server ready within 30 s");
    child
}

/// Signs the venue admin in at `base` (a real binary) and creates a trader `email` in the
/// admin's company, which queues its activation e-mail.
pub async fn admin_creates_trader(base: &str, email: &str, first_name: &str, last_name: &str) {
    let client = reqwest::Client::new();
    let login: Value = client
        .post(format!("{base}/api/auth/login"))
        .json(&json!({"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = login["token"].as_str().unwrap();
    let me: Value =
        client.get(format!("{base}/api/users/me")).bearer_auth(token).send().await.unwrap().json().await.unwrap();
    let res = client
        .post(format!("{base}/api/users"))
        .bearer_auth(token)
        .json(&json!({"email": email, "first_name": first_name, "last_name": last_name,
                      "company_id": me["company_id"], "roles": ["trader"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
}
