//! Use cases of the venue and the ports they need (store, clock, mailer, events).
//! Every use case reads, checks and writes inside one transaction; its audit row and
//! its outgoing e-mails are written in that same transaction.

pub mod accounts;
pub mod action_logs;
pub mod admin_orders;
mod cache;
pub mod clock;
pub mod confirmations;
pub mod context;
pub mod error;
pub mod events;
pub mod fanout;
pub mod fix;
pub mod idempotency;
pub mod kill_switch;
pub mod matches;
pub mod model;
pub mod newsletters;
pub mod notifications;
pub mod orders;
pub mod ports;
pub mod presence;
pub mod ratelimit;
pub mod reference;
pub mod rfqs;
pub mod scheduler;
pub mod security;
pub mod users;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

pub use clock::{Clock, ManualClock, SystemClock};
pub use error::{EngineError, StoreError};
pub use events::{BroadcastPublisher, Event, EventPublisher};
pub use ports::{Fanout, FanoutListener, Mailer, Store, Tx};

/// The defaults of the venue's settings, said once: [`EngineConfig::default`], the mail
/// settings and the command line (`upstairs --help`) take them from here.
pub mod defaults {
    pub const PRODUCT_NAME: &str = "Upstairs";
    /// Base of links in e-mails when none is configured.
    pub const PUBLIC_URL: &str = "http://localhost:8080";
    pub const SUPPORT_EMAIL: &str = "support@upstairs.example";
    pub const SUPPORT_PHONE: &str = "+44 20 7946 0000";
    pub const MAIL_FROM: &str = "Upstairs <no-reply@upstairs.local>";
}

/// Settings the use cases depend on.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Base of links in e-mails, without a trailing slash (e.g. `http://localhost:8080`).
    pub public_url: String,
    pub product_name: String,
    pub support_email: String,
    pub support_phone: String,
    pub session_ttl: Duration,
    pub remember_me_ttl: Duration,
    pub reset_link_ttl: Duration,
    pub activation_link_ttl: Duration,
    pub rate_limits: ratelimit::Limits,
    /// The trading day (the demo runs it always open).
    pub calendar: upstairs_domain::calendar::Calendar,
    /// The largest order of any kind (parent, child, take, RFQ, quote), at most
    /// [`upstairs_domain::quantity::QUANTITY_CEILING`] (ADR 0027).
    pub max_order_quantity: i64,
    /// `upstairs demo`: the E-mail outbox shows its messages' links (its logins are public
    /// anyway); anywhere else a live link would let the reader take an account over.
    pub demo: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            public_url: defaults::PUBLIC_URL.into(),
            product_name: defaults::PRODUCT_NAME.into(),
            support_email: defaults::SUPPORT_EMAIL.into(),
            support_phone: defaults::SUPPORT_PHONE.into(),
            session_ttl: Duration::from_secs(12 * 3600),
            remember_me_ttl: Duration::from_secs(30 * 24 * 3600),
            reset_link_ttl: Duration::from_secs(3600),
            activation_link_ttl: Duration::from_secs(72 * 3600),
            rate_limits: ratelimit::Limits::default(),
            calendar: upstairs_domain::calendar::Calendar::default(),
            max_order_quantity: upstairs_domain::quantity::DEFAULT_MAX_ORDER_QUANTITY,
            demo: false,
        }
    }
}

/// The application core: cheap to clone, shared by the HTTP edge and the job loops.
pub struct Engine<S: Store> {
    store: S,
    clock: Arc<dyn Clock>,
    events: Arc<dyn EventPublisher>,
    mailer: Arc<dyn Mailer>,
    config: Arc<EngineConfig>,
    limiter: Arc<ratelimit::RateLimiter>,
    /// Password hashing's slots and queue (ADR 0024).
    hashing: Arc<security::Hashing>,
    /// Poked after a commit that created due work, so the scheduler runs at once.
    wake: Arc<Notify>,
    /// Counts commits that may have put messages in the FIX outbox; each FIX session
    /// watches it (ADR 0025).
    fix_wake: Arc<tokio::sync::watch::Sender<u64>>,
    caches: Arc<cache::Caches>,
    heartbeat: Arc<scheduler::Heartbeat>,
    lane_passes: Arc<scheduler::LanePasses>,
    /// The other nodes on this database, when there can be any (ADR 0026).
    fanout: Option<Arc<dyn ports::Fanout>>,
    /// This node's name in announcements (random per start), so it skips its own.
    node: Arc<str>,
    /// Whether this node hears the other nodes' announcements now.
    listening: Arc<std::sync::atomic::AtomicBool>,
    /// What this node did since it started, for `/metrics`.
    counters: Arc<Counters>,
    /// Who has a realtime session on this node.
    presence: Arc<presence::Presence>,
}

/// Counts of what one node did since it started (`/metrics`).
#[derive(Debug, Default)]
pub struct Counters {
    /// Match requests sent (one per resting order a take reached).
    pub match_requests: std::sync::atomic::AtomicU64,
    /// Trades: match requests accepted and RFQ quotes accepted.
    pub matches: std::sync::atomic::AtomicU64,
    /// The other nodes' changes this node heard.
    pub announcements_heard: std::sync::atomic::AtomicU64,
    /// Of those, the ones for one user with no session here: not read back.
    pub announcements_skipped: std::sync::atomic::AtomicU64,
    /// Take previews per firm: (answered, refused by the throttle).
    pub previews: std::sync::Mutex<HashMap<upstairs_domain::CompanyId, (u64, u64)>>,
}

impl Counters {
    /// One more preview of `company`'s, answered or throttled.
    pub fn count_preview(&self, company: upstairs_domain::CompanyId, answered: bool) {
        let mut map = self.previews.lock().unwrap_or_else(|p| p.into_inner());
        let entry = map.entry(company).or_default();
        if answered {
            entry.0 += 1;
        } else {
            entry.1 += 1;
        }
    }
}

impl<S: Store> Clone for Engine<S> {
    fn clone(&self) -> Self {
        Self {
            store: self.store.clone(),
            clock: self.clock.clone(),
            events: self.events.clone(),
            mailer: self.mailer.clone(),
            config: self.config.clone(),
            limiter: self.limiter.clone(),
            hashing: self.hashing.clone(),
            wake: self.wake.clone(),
            fix_wake: self.fix_wake.clone(),
            caches: self.caches.clone(),
            heartbeat: self.heartbeat.clone(),
            lane_passes: self.lane_passes.clone(),
            fanout: self.fanout.clone(),
            node: self.node.clone(),
            listening: self.listening.clone(),
            counters: self.counters.clone(),
            presence: self.presence.clone(),
        }
    }
}

impl<S: Store> Engine<S> {
    pub fn new(
        store: S,
        clock: Arc<dyn Clock>,
        events: Arc<dyn EventPublisher>,
        mailer: Arc<dyn Mailer>,
        config: EngineConfig,
    ) -> Self {
        let limiter = Arc::new(ratelimit::RateLimiter::new(config.rate_limits.clone()));
        let fanout = store.fanout();
        let node = uuid::Uuid::new_v4().simple().to_string()[..12].into();
        Self {
            fanout,
            node,
            listening: Arc::default(),
            counters: Arc::default(),
            presence: Arc::default(),
            store,
            clock,
            events,
            mailer,
            config: Arc::new(config),
            limiter,
            hashing: Arc::default(),
            wake: Arc::new(Notify::new()),
            fix_wake: Arc::new(tokio::sync::watch::channel(0).0),
            caches: Arc::default(),
            heartbeat: Arc::default(),
            lane_passes: Arc::default(),
        }
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    pub fn store(&self) -> &S {
        &self.store
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    pub fn events(&self) -> &Arc<dyn EventPublisher> {
        &self.events
    }

    /// A secret hashed as passwords are (argon2, off the async runtime, ADR 0024).
    pub async fn hash_password(&self, secret: String) -> Result<String, EngineError> {
        self.hashing.hash_password(secret).await
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// What waits in the database now (`/metrics`).
    pub async fn backlog(&self) -> Result<model::Backlog, EngineError> {
        use ports::TimerRepo;
        Ok(self.store.single().await?.backlog(self.clock.now()).await?)
    }

    pub fn wake_handle(&self) -> Arc<Notify> {
        self.wake.clone()
    }

    /// Changes whenever a commit may have put messages in the FIX outbox.
    pub fn fix_outbox_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.fix_wake.subscribe()
    }

    /// Publishes what a commit changed, after dropping the cache entries it makes
    /// stale: the caller's next read sees its own write.
    fn publish(&self, event: Event) {
        self.caches.apply(&event);
        self.announce(&event);
        self.events.publish(event);
    }
}
