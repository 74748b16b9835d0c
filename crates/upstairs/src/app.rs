//! Wiring: picks the store from the database URL, builds the engine, binds the
//! listener first (so tests learn the port), then serves and runs the job loop.

use anyhow::Context;
use chrono::{DateTime, Utc};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use upstairs_domain::calendar::Calendar;
use upstairs_engine::{BroadcastPublisher, Clock, Engine, EngineConfig, EngineError, Store};
use upstairs_http::AppState;
use upstairs_http::server::ServerLimits;
use upstairs_mail::MailSettings;
use upstairs_store::{Backend, PgStore, SqliteStore, backend_of, redact_url};

/// The defaults of the binary's own settings, said once: [`Settings::default`] and the
/// command line take them from here (the engine's from `upstairs_engine::defaults`).
pub mod defaults {
    pub const BIND: &str = "127.0.0.1:8080";
    pub const DATABASE_URL: &str = "sqlite://data/upstairs.db";
    pub const MAIL_DIR: &str = "data/outbox";
    pub const WEB_DIR: &str = "web/dist";
    pub const FIX_COMP_ID: &str = "UPSTAIRS";
    pub const METRICS_BIND: &str = "127.0.0.1:9464";
}

/// Everything `serve` and `demo` need.
#[derive(Clone, Debug)]
pub struct Settings {
    pub bind: String,
    pub database_url: String,
    /// Base of links in e-mails; defaults to `http://localhost:<port>`.
    pub public_url: Option<String>,
    pub smtp_url: Option<String>,
    pub mail_dir: PathBuf,
    pub mail_from: String,
    pub web_dir: Option<PathBuf>,
    /// The trading day: hours, days, holidays, or always open (the demo).
    pub calendar: Calendar,
    pub support_email: String,
    pub support_phone: String,
    /// Load the demo data set into an empty database.
    pub demo: bool,
    /// How often the demo's trading robots act (`demo` only); `None`: they do not.
    pub demo_robots_every: Option<Duration>,
    /// How often the job loop looks for due timers when nothing pokes it.
    pub scheduler_poll: Duration,
    /// Browser tests only: the clock reads this file (`FileClock`).
    pub clock_file: Option<std::path::PathBuf>,
    /// Sign-in, link and write limits (ADR 0024).
    pub rate_limits: upstairs_engine::ratelimit::Limits,
    /// Proxies whose `X-Forwarded-For` is believed.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// Header-read timeout, connection ceiling, shutdown deadline.
    pub server_limits: ServerLimits,
    /// The FIX gateway, when it listens.
    pub fix: Option<upstairs_fix::FixSettings>,
    /// The market-data session to the provider of the exchange's prices (ADR 0049).
    pub market_data: Option<upstairs_fix::market_data::MarketDataSettings>,
    /// The largest order of any kind (ADR 0027).
    pub max_order_quantity: i64,
    /// How long a trader's connections may all be gone before a cancel on disconnect.
    pub disconnect_grace: Duration,
    /// Where `/metrics` is served (`host:port`), apart from the app; `None`: nowhere.
    pub metrics_bind: Option<String>,
}

impl Default for Settings {
    fn default() -> Self {
        let e = EngineConfig::default();
        Self {
            bind: defaults::BIND.into(),
            database_url: defaults::DATABASE_URL.into(),
            public_url: None,
            smtp_url: None,
            mail_dir: defaults::MAIL_DIR.into(),
            mail_from: upstairs_engine::defaults::MAIL_FROM.into(),
            web_dir: Some(defaults::WEB_DIR.into()),
            calendar: Calendar::default(),
            support_email: e.support_email,
            support_phone: e.support_phone,
            demo: false,
            demo_robots_every: None,
            scheduler_poll: Duration::from_secs(1),
            clock_file: None,
            rate_limits: e.rate_limits,
            trusted_proxies: Vec::new(),
            server_limits: ServerLimits::default(),
            fix: None,
            market_data: None,
            max_order_quantity: e.max_order_quantity,
            disconnect_grace: e.disconnect_grace,
            metrics_bind: Some(defaults::METRICS_BIND.into()),
        }
    }
}

/// A running application.
pub struct Running {
    pub addr: SocketAddr,
    pub public_url: String,
    /// Publishes events to connected STOMP sessions.
    pub events: BroadcastPublisher,
    /// Pokes the job loop (after moving a test clock, say).
    pub wake: Arc<upstairs_engine::scheduler::Wakes>,
    /// The FIX gateway, when it listens.
    pub fix: Option<Box<dyn upstairs_fix::FixGateway>>,
    /// The venue's FIX CompID.
    pub fix_comp_id: String,
    /// Where `/metrics` is served, when it is.
    pub metrics_addr: Option<SocketAddr>,
    metrics: Option<JoinHandle<anyhow::Result<()>>>,
    run_due: Arc<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>,
    close: Arc<CloseFn>,
    feed: Arc<FeedFn>,
    shutdown: watch::Sender<bool>,
    server: JoinHandle<anyhow::Result<()>>,
    jobs: JoinHandle<()>,
}

type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
type CloseFn = dyn Fn(DateTime<Utc>) -> BoxFuture<'static, Result<usize, EngineError>> + Send + Sync;
type FeedFn = dyn Fn(
        upstairs_domain::InstrumentId,
        rust_decimal::Decimal,
        rust_decimal::Decimal,
    ) -> BoxFuture<'static, Result<(), EngineError>>
    + Send
    + Sync;

impl Running {
    /// Runs every timer due now and returns when done (tests use it after moving the clock).
    pub async fn run_due_timers(&self) {
        (self.run_due)().await
    }

    /// Runs the close of the day now on this node's engine, as its job loop would, and
    /// returns how many orders expired (tests race it against requests).
    pub async fn expire_day(&self, at: DateTime<Utc>) -> Result<usize, EngineError> {
        (self.close)(at).await
    }

    /// A price from the market-data feed on this node's engine: the band from outside, by
    /// no one (tests drive the stale-price guard with it, on the test's clock).
    pub async fn feed_price(
        &self,
        instrument: upstairs_domain::InstrumentId,
        min: rust_decimal::Decimal,
        max: rust_decimal::Decimal,
    ) -> Result<(), EngineError> {
        (self.feed)(instrument, min, max).await
    }

    /// Waits until the server stops (signal or error).
    pub async fn wait(self) -> anyhow::Result<()> {
        let r = self.server.await.context("server task")?;
        let _ = self.shutdown.send(true);
        if let Some(fix) = &self.fix {
            fix.stop().await;
        }
        if let Some(metrics) = self.metrics {
            let _ = metrics.await;
        }
        let _ = self.jobs.await;
        r
    }

    /// Stops serving and the job loop.
    pub async fn stop(self) {
        let _ = self.shutdown.send(true);
        if let Some(fix) = &self.fix {
            fix.stop().await;
        }
        let _ = self.server.await;
        if let Some(metrics) = self.metrics {
            let _ = metrics.await;
        }
        let _ = self.jobs.await;
    }
}

/// Opens the database named by the URL and runs its migrations.
pub async fn migrate(database_url: &str) -> anyhow::Result<()> {
    match backend_of(database_url).map_err(anyhow::Error::msg)? {
        Backend::Sqlite => drop(SqliteStore::connect(database_url).await?),
        Backend::Postgres => drop(PgStore::connect(database_url).await?),
    }
    Ok(())
}

/// `upstairs backup`: a consistent copy of a SQLite database, taken while it serves.
pub async fn backup(database_url: &str, to: &std::path::Path) -> anyhow::Result<()> {
    match backend_of(database_url).map_err(anyhow::Error::msg)? {
        Backend::Sqlite => Ok(SqliteStore::backup(database_url, to).await?),
        Backend::Postgres => {
            anyhow::bail!("back PostgreSQL up with pg_dump while the venue runs (docs/operations.md)")
        }
    }
}

fn engine_config(s: &Settings, public_url: &str) -> EngineConfig {
    EngineConfig {
        public_url: public_url.trim_end_matches('/').to_owned(),
        support_email: s.support_email.clone(),
        support_phone: s.support_phone.clone(),
        calendar: s.calendar.clone(),
        rate_limits: s.rate_limits.clone(),
        max_order_quantity: s.max_order_quantity,
        disconnect_grace: s.disconnect_grace,
        demo: s.demo,
        ..EngineConfig::default()
    }
}

/// An engine for one-off commands (no server).
pub async fn with_engine<F, T>(database_url: &str, f: F) -> anyhow::Result<T>
where
    F: AsyncEngineFn<T>,
{
    let settings = Settings { database_url: database_url.into(), ..Settings::default() };
    match backend_of(database_url).map_err(anyhow::Error::msg)? {
        Backend::Sqlite => f.call(command_engine(SqliteStore::connect(database_url).await?, &settings)).await,
        Backend::Postgres => f.call(command_engine(PgStore::connect(database_url).await?, &settings)).await,
    }
}

/// A use of an engine of any backend.
pub trait AsyncEngineFn<T> {
    fn call<S: Store>(self, engine: Engine<S>) -> impl std::future::Future<Output = anyhow::Result<T>>;
}

fn command_engine<S: Store>(store: S, s: &Settings) -> Engine<S> {
    let mailer = Arc::new(NoMail);
    Engine::new(
        store,
        Arc::new(upstairs_engine::SystemClock),
        Arc::new(BroadcastPublisher::new(16)),
        mailer,
        engine_config(s, upstairs_engine::defaults::PUBLIC_URL),
    )
}

/// One-off commands queue e-mails; the server's job loop sends them.
struct NoMail;

#[async_trait::async_trait]
impl upstairs_engine::Mailer for NoMail {
    async fn send(&self, _: &upstairs_engine::model::OutgoingEmail) -> Result<(), String> {
        Err("this command does not send e-mail; the server will".into())
    }

    fn preview(&self, email: &upstairs_engine::model::OutgoingEmail) -> upstairs_engine::model::EmailPreview {
        upstairs_mail::preview(&upstairs_mail::MailSettings::default(), &email.template)
    }
}

/// Binds, migrates, (seeds), and starts serving and the job loop.
pub async fn start(settings: Settings, clock: Arc<dyn Clock>) -> anyhow::Result<Running> {
    let listener = TcpListener::bind(&settings.bind).await.with_context(|| format!("bind {}", settings.bind))?;
    let metrics = match &settings.metrics_bind {
        Some(bind) => Some(TcpListener::bind(bind).await.with_context(|| format!("bind the metrics on {bind}"))?),
        None => None,
    };
    let addr = listener.local_addr()?;
    let public_url = settings.public_url.clone().unwrap_or_else(|| format!("http://localhost:{}", addr.port()));
    tracing::info!(database = %redact_url(&settings.database_url), "opening database");
    match backend_of(&settings.database_url).map_err(anyhow::Error::msg)? {
        Backend::Sqlite => {
            let store = SqliteStore::connect(&settings.database_url).await?;
            start_with(store, settings, clock, (listener, metrics), public_url).await
        }
        Backend::Postgres => {
            let store = PgStore::connect(&settings.database_url).await?;
            start_with(store, settings, clock, (listener, metrics), public_url).await
        }
    }
}

async fn start_with<S: Store>(
    store: S,
    mut settings: Settings,
    clock: Arc<dyn Clock>,
    (listener, metrics_listener): (TcpListener, Option<TcpListener>),
    public_url: String,
) -> anyhow::Result<Running> {
    let addr = listener.local_addr()?;
    let events = BroadcastPublisher::new(1024);
    let mailer = upstairs_mail::mailer_from_config(
        settings.smtp_url.as_deref(),
        &settings.mail_dir,
        MailSettings {
            product_name: "Upstairs".into(),
            from: settings.mail_from.clone(),
            support_email: settings.support_email.clone(),
            support_phone: settings.support_phone.clone(),
        },
    )
    .map_err(anyhow::Error::msg)?;
    let engine = Engine::new(store, clock, Arc::new(events.clone()), mailer, engine_config(&settings, &public_url));
    if settings.demo && crate::demo::seed_demo(&engine).await? {
        tracing::info!("loaded the demo data set");
    }
    engine.scheduler.on_start().await?;

    let (shutdown, shutdown_rx) = watch::channel(false);
    if settings.demo && settings.market_data.is_none() {
        // The demo's prices come over FIX from its own provider, the path production
        // prices take (ADR 0049).
        let (prices, published) = watch::channel(upstairs_fix::provider::Prices::default());
        let (at, _) = upstairs_fix::provider::serve_prices(
            "127.0.0.1:0",
            DEMO_PROVIDER_COMP_ID,
            DEMO_VENUE_COMP_ID,
            published,
            shutdown_rx.clone(),
        )
        .await
        .context("the demo's market-data provider")?;
        settings.market_data = Some(upstairs_fix::market_data::MarketDataSettings::new(
            at.to_string(),
            DEMO_VENUE_COMP_ID.into(),
            DEMO_PROVIDER_COMP_ID.into(),
        ));
        tokio::spawn(simulate_bands(engine.clone(), prices, shutdown_rx.clone()));
    }
    if settings.demo {
        tokio::spawn(demo_quotes(engine.clone(), shutdown_rx.clone()));
        if let Some(every) = settings.demo_robots_every {
            tokio::spawn(demo_robots(engine.clone(), every, shutdown_rx.clone()));
        }
    }
    // Hearing the other nodes starts before serving: no change committed elsewhere
    // after the first request here goes unheard.
    let peers = engine.hear_peers(shutdown_rx.clone()).await.context("listen to the other nodes")?;
    let wake = engine.wake_handle();
    let scheduler = engine.scheduler.clone().run_scheduler(settings.scheduler_poll, shutdown_rx.clone());
    let presence = engine.disconnects.clone().run_presence(shutdown_rx.clone());
    let market_data =
        settings.market_data.clone().map(|m| upstairs_fix::market_data::start(engine.clone(), m, shutdown_rx.clone()));
    let jobs = tokio::spawn(async move {
        tokio::join!(scheduler, presence);
        if let Some(m) = market_data {
            let _ = m.await;
        }
        if let Some(peers) = peers {
            let _ = peers.await;
        }
    });
    let fix = match &settings.fix {
        Some(f) => {
            Some(upstairs_fix::start(engine.clone(), f.clone()).await.with_context(|| format!("FIX on {}", f.bind))?)
        }
        None => None,
    };
    let realtime = upstairs_http::stomp::hub::Hub::start(engine.clone(), &events);
    let acceptor = fix.as_ref().zip(settings.fix.as_ref()).map(|(g, f)| upstairs_http::routes::fix::FixAcceptorDto {
        address: g.local_addr().to_string(),
        tls: f.tls.is_some(),
        comp_id: f.comp_id.clone(),
    });
    let state = AppState::new(engine.clone(), realtime)
        .with_fix_acceptor(acceptor)
        .with_trusted_proxies(settings.trusted_proxies.clone())
        .with_limits(settings.server_limits.max_in_flight, settings.server_limits.body_read);
    let metrics_app = upstairs_http::metrics::router(state.clone());
    let app = upstairs_http::router(state, settings.web_dir.clone());
    let backend = engine.store().backend();
    tracing::info!(%addr, %public_url, backend, "Upstairs is listening");
    let (metrics_addr, metrics) = match metrics_listener {
        Some(listener) => {
            let at = listener.local_addr()?;
            tracing::info!(%at, "metrics are served at /metrics");
            let mut stop = shutdown_rx.clone();
            let stopped = async move {
                let _ = stop.changed().await;
            };
            // A scraper or two: a small connection ceiling of its own, apart from the app's.
            let limits = ServerLimits { max_connections: 64, ..settings.server_limits.clone() };
            let serve = upstairs_http::server::serve(listener, metrics_app, limits, stopped);
            (Some(at), Some(tokio::spawn(async move { serve.await.context("serve the metrics") })))
        }
        None => (None, None),
    };
    let mut stop = shutdown_rx;
    let limits = settings.server_limits.clone();
    let server = tokio::spawn(async move {
        let stopped = async move {
            tokio::select! {
                _ = stop.changed() => {}
                _ = shutdown_signal() => {}
            }
        };
        upstairs_http::server::serve(listener, app, limits, stopped).await.context("serve")
    });
    let closing = engine.clone();
    let close = Arc::new(move |at| -> BoxFuture<'static, Result<usize, EngineError>> {
        let engine = closing.clone();
        Box::pin(async move { engine.withdrawals.expire_day(at, None).await })
    });
    let feeding = engine.clone();
    let feed = Arc::new(move |id, min, max| -> BoxFuture<'static, Result<(), EngineError>> {
        let engine = feeding.clone();
        Box::pin(async move { engine.reference.move_band(None, id, min, max).await.map(|_| ()) })
    });
    let run_due = Arc::new(move || -> BoxFuture<'static, ()> {
        let engine = engine.clone();
        Box::pin(async move {
            // Who is here first: a lease that lapsed schedules its cancel on disconnect.
            if let Err(e) = engine.disconnects.presence_pass().await {
                tracing::error!(error = %e, "presence pass failed");
            }
            if let Err(e) = engine.scheduler.run_due_timers().await {
                tracing::error!(error = %e, "scheduler pass failed");
            }
        })
    });
    let fix_comp_id = settings.fix.as_ref().map(|f| f.comp_id.clone()).unwrap_or_default();
    Ok(Running {
        addr,
        public_url,
        events,
        wake,
        fix,
        fix_comp_id,
        metrics_addr,
        metrics,
        run_due,
        close,
        feed,
        shutdown,
        server,
        jobs,
    })
}

/// The demo provider's CompID and the venue's on its market-data session.
const DEMO_PROVIDER_COMP_ID: &str = "DEMO-PROVIDER";
const DEMO_VENUE_COMP_ID: &str = "UPSTAIRS-MD";

/// The demo's market: every few seconds each demo instrument's band takes a step of its
/// walk, and the demo provider sends every price to the venue over FIX.
async fn simulate_bands<S: Store>(
    engine: Engine<S>,
    prices: watch::Sender<upstairs_fix::provider::Prices>,
    mut stop: watch::Receiver<bool>,
) {
    use rand::SeedableRng;
    let mut sim = crate::demo::BandSimulator::default();
    let mut rng = rand::rngs::StdRng::from_entropy();
    let mut every = tokio::time::interval(Duration::from_secs(3));
    loop {
        tokio::select! {
            _ = every.tick() => {
                let instruments = match crate::demo::walked_instruments(&engine).await {
                    Ok(i) => i,
                    Err(e) => {
                        tracing::warn!(error = %e, "demo market: could not read the instruments");
                        continue;
                    }
                };
                let symbols: std::collections::HashMap<_, _> =
                    instruments.iter().filter_map(|i| Some((i.instrument_id, i.exchange_instrument_id.clone()?))).collect();
                let now = sim
                    .step(&instruments, &mut rng)
                    .into_iter()
                    .filter_map(|(id, min, max)| Some((symbols.get(&id)?.clone(), (min, max))))
                    .collect();
                prices.send_replace(Arc::new(now));
            }
            _ = stop.changed() => return,
        }
    }
}

/// The demo's liquidity providers: they quote on RFQs addressed to them after a few seconds.
async fn demo_quotes<S: Store>(engine: Engine<S>, mut stop: watch::Receiver<bool>) {
    let mut every = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = every.tick() => {
                if let Err(e) = crate::demo::demo_quote_step(&engine).await {
                    tracing::warn!(error = %e, "demo quoting step failed");
                }
            }
            _ = stop.changed() => return,
        }
    }
}

/// The demo's trading robots: one of them rests or takes liquidity every `every`.
async fn demo_robots<S: Store>(engine: Engine<S>, every: Duration, mut stop: watch::Receiver<bool>) {
    use rand::SeedableRng;
    let mut rng = rand::rngs::StdRng::from_entropy();
    let mut every = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    loop {
        tokio::select! {
            _ = every.tick() => {
                if let Err(e) = crate::demo::demo_trade_step(&engine, &mut rng).await {
                    tracing::warn!(error = %e, "demo robots' step failed");
                }
            }
            _ = stop.changed() => return,
        }
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}

struct Bootstrap(upstairs_engine::users::BootstrapUser);

impl AsyncEngineFn<upstairs_engine::model::UserView> for Bootstrap {
    async fn call<S: Store>(self, engine: Engine<S>) -> anyhow::Result<upstairs_engine::model::UserView> {
        use upstairs_engine::EngineError;
        let email = self.0.email.clone();
        match engine.users.bootstrap_user(self.0).await {
            Ok(u) => Ok(u),
            Err(EngineError::Invalid { detail, .. } | EngineError::Conflict { detail, .. }) => {
                anyhow::bail!("cannot create {email}: {detail}")
            }
            Err(e) => Err(e).context("create user"),
        }
    }
}

/// `upstairs user create`: a verified user with a password, in the named company
/// (created when missing).
pub async fn bootstrap_user(
    database_url: &str,
    email: &str,
    password: &str,
    roles: &[&str],
    company: &str,
) -> anyhow::Result<upstairs_engine::model::UserView> {
    bootstrap_user_named(database_url, email, password, roles, company, "Venue", "Admin").await
}

pub async fn bootstrap_user_named(
    database_url: &str,
    email: &str,
    password: &str,
    roles: &[&str],
    company: &str,
    first_name: &str,
    last_name: &str,
) -> anyhow::Result<upstairs_engine::model::UserView> {
    let mut parsed = Vec::new();
    for r in roles {
        match upstairs_domain::Role::parse(r) {
            Some(role) => parsed.push(role),
            None => anyhow::bail!(
                "unknown role {r}: use one of {}",
                upstairs_domain::Role::ALL.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ")
            ),
        }
    }
    let input = upstairs_engine::users::BootstrapUser {
        email: email.into(),
        password: password.into(),
        roles: parsed,
        company_name: company.into(),
        first_name: first_name.into(),
        last_name: last_name.into(),
        auto_accept: None,
    };
    with_engine(database_url, Bootstrap(input)).await
}
