//! The shared core of the engine (ADR 0032): the ports, settings, caches and wake-ups
//! every feature service holds, and the steps every use case takes with them: publishing
//! a change after commit, throttling a writer, reading the reference data through the
//! caches, queueing an e-mail, refusing a stopped firm.

use chrono::{DateTime, Utc};
use serde_json::json;
use std::sync::Arc;
use upstairs_domain::{CompanyId, InstrumentId, Permission};
use uuid::Uuid;

use crate::book::BookLevels;
use crate::context::Actor;
use crate::error::trading_stopped;
use crate::model::*;
use crate::ports::*;
use crate::*;

/// A writer over its throttle (ADR 0024).
pub const TOO_MANY_WRITES: &str = "Too many requests in a short time. Please wait a moment and try again.";

/// The timer kind that delivers one queued e-mail.
pub const OUTBOX_DELIVER: &str = "outbox.deliver";

/// What every feature shares (ADR 0032): the ports, the settings, the caches and the
/// wake-ups ([`Shared`]), with the checks and publications every use case makes. One
/// pointer: every service holds a clone, and services hold the services they call.
pub struct Core<S: Store>(Arc<Shared<S>>);

impl<S: Store> std::ops::Deref for Core<S> {
    type Target = Shared<S>;
    fn deref(&self) -> &Shared<S> {
        &self.0
    }
}

/// The parts of the [`Core`], made once per node.
pub struct Shared<S: Store> {
    pub(crate) store: S,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) events: Arc<dyn EventPublisher>,
    pub(crate) mailer: Arc<dyn Mailer>,
    pub(crate) config: Arc<EngineConfig>,
    pub(crate) limiter: Arc<ratelimit::RateLimiter>,
    /// Password hashing's slots and queue (ADR 0024).
    pub(crate) hashing: Arc<security::Hashing>,
    /// Poked after a commit that created due work, so the scheduler runs at once; each
    /// FIX session watches it for its outbox (ADR 0025).
    pub(crate) wakes: Arc<scheduler::Wakes>,
    pub(crate) caches: Arc<cache::Caches>,
    pub(crate) heartbeat: Arc<scheduler::Heartbeat>,
    pub(crate) lane_passes: Arc<scheduler::LanePasses>,
    /// The other nodes on this database, when there can be any (ADR 0026).
    pub(crate) fanout: Option<Arc<dyn ports::Fanout>>,
    /// This node's name in announcements (random per start), so it skips its own.
    pub(crate) node: Arc<str>,
    /// Whether this node hears the other nodes' announcements now.
    pub(crate) listening: Arc<std::sync::atomic::AtomicBool>,
    /// What this node did since it started, for `/metrics`.
    pub counters: Arc<Counters>,
    /// Who has a realtime session on this node.
    pub presence: Arc<presence::Presence>,
}

impl<S: Store> Clone for Core<S> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<S: Store> Core<S> {
    pub fn new(
        store: S,
        clock: Arc<dyn Clock>,
        events: Arc<dyn EventPublisher>,
        mailer: Arc<dyn Mailer>,
        config: EngineConfig,
    ) -> Self {
        let limiter = Arc::new(ratelimit::RateLimiter::new(config.rate_limits.clone()));
        let fanout = store.fanout();
        let node: Arc<str> = uuid::Uuid::new_v4().simple().to_string()[..12].into();
        if let Some(fanout) = fanout.clone() {
            let node = node.to_string();
            store.fix_bell().tell_peers(move |company| {
                crate::fanout::tell(&*fanout, &node, events::Announced::FixQueued { company });
            });
        }
        Self(Arc::new(Shared {
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
            wakes: Arc::default(),
            caches: Arc::default(),
            heartbeat: Arc::default(),
            lane_passes: Arc::default(),
        }))
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

    /// A secret hashed as passwords are (argon2, off the async runtime, ADR 0024).
    pub async fn hash_password(&self, secret: String) -> Result<String, EngineError> {
        self.hashing.hash_password(secret).await
    }

    pub fn wake_handle(&self) -> Arc<scheduler::Wakes> {
        self.wakes.clone()
    }

    /// Changes whenever a commit, on this node or another, put messages in `company`'s FIX
    /// outbox.
    pub fn fix_outbox_changes(&self, company: CompanyId) -> tokio::sync::watch::Receiver<u64> {
        self.store.fix_bell().listen(company)
    }

    /// Publishes what a commit changed, after dropping the cache entries it makes
    /// stale: the caller's next read sees its own write.
    pub(crate) fn publish(&self, event: Event) {
        self.caches.apply(&event);
        self.announce(&event);
        self.events.publish(event);
    }

    /// Queues an e-mail inside the caller's transaction. Callers poke the scheduler
    /// after commit (`wake`) so it goes out at once.
    pub(crate) async fn enqueue_email(
        &self,
        tx: &mut S::Tx,
        now: DateTime<Utc>,
        to: &str,
        template: EmailTemplate,
    ) -> Result<Uuid, EngineError> {
        let (message, timer) = email_rows(&self.mail_domain(), now, to, template);
        tx.insert_outbox(&message).await?;
        tx.insert_timer(&timer).await?;
        Ok(message.outbox_id)
    }

    pub(crate) fn mail_domain(&self) -> String {
        let url = self.config.public_url.as_str();
        let rest = url.split_once("://").map_or(url, |(_, r)| r);
        let host = rest.split(['/', ':']).next().unwrap_or("");
        if host.is_empty() { "upstairs.local".into() } else { host.to_owned() }
    }

    /// Wakes every lane's loop (new due work was committed).
    pub(crate) fn poke(&self) {
        self.wakes.all();
    }

    /// One of the user's writes of this kind, within their throttle (ADR 0024; MiFID II
    /// RTS 7 asks venues to limit message rates per member).
    pub(crate) fn throttle(&self, actor: &Actor, kind: crate::ratelimit::Write) -> Result<(), EngineError> {
        self.limiter
            .write(actor.user.user_id, kind, self.clock.now())
            .map_err(|w| EngineError::too_many(TOO_MANY_WRITES, w))
    }

    /// The levels of a book, from the cache (ADR 0014): read in O(levels) on a miss.
    pub(crate) async fn cached_levels(&self, instrument_id: InstrumentId) -> Result<Arc<BookLevels>, EngineError> {
        let load = || async {
            let rows = self.store.single().await?.book_rows(instrument_id).await?;
            Ok::<_, StoreError>(Some(BookLevels::of(&rows)))
        };
        Ok(self.caches.books.get(instrument_id, load).await?.expect("a book is never absent"))
    }

    /// Says the book of an instrument changed; the edge reads it back, conflated (ADR 0011).
    pub fn publish_book(&self, instrument_id: InstrumentId) {
        self.publish(Event::book_changed(instrument_id));
    }

    pub(crate) fn publish_order(&self, o: &ChildOrder) {
        self.publish(Event::order_changed(o));
    }

    pub(crate) fn publish_parent(&self, p: &ParentOrder) {
        self.publish(Event::parent_order_changed(p));
    }

    /// An instrument, from the cache (ADR 0014).
    pub async fn cached_instrument(&self, id: InstrumentId) -> Result<Arc<Instrument>, EngineError> {
        let load = || async { self.store.single().await?.instrument(id).await };
        self.caches
            .instruments
            .get(id, load)
            .await?
            .ok_or_else(|| EngineError::NotFound("Instrument not found.".into()))
    }

    /// An instrument the caller may see (admins see every one; others the active ones
    /// of their kind, sandbox or not).
    pub(crate) async fn visible_instrument(
        &self,
        actor: &Actor,
        id: InstrumentId,
    ) -> Result<Arc<Instrument>, EngineError> {
        Some(self.cached_instrument(id).await?)
            .filter(|i| {
                actor.can(Permission::Admin) || (i.active && i.is_sandbox == actor.can(Permission::SandboxOnly))
            })
            .ok_or_else(|| EngineError::NotFound("Instrument not found.".into()))
    }

    /// The brokers a company's traders may route to, from the cache (ADR 0014).
    pub(crate) async fn cached_brokers(&self, company: CompanyId) -> Result<Arc<Vec<CompanyRef>>, EngineError> {
        let load =
            || async { Ok::<_, StoreError>(self.store.read().await?.company(company).await?.map(|c| c.brokers)) };
        Ok(self.caches.brokers.get(company, load).await?.unwrap_or_default())
    }

    /// [`Self::cached_instrument`] inside a transaction: a miss reads through `tx`, never
    /// through a second connection (a burst of transactions each waiting for a second
    /// connection of a spent pool would wait on each other until the pool times out).
    pub(crate) async fn instrument_in(&self, tx: &mut S::Tx, id: InstrumentId) -> Result<Arc<Instrument>, EngineError> {
        let load = || async move { tx.instrument(id).await };
        self.caches
            .instruments
            .get(id, load)
            .await?
            .ok_or_else(|| EngineError::NotFound("Instrument not found.".into()))
    }

    /// [`Self::cached_brokers`] inside a transaction (see [`Self::instrument_in`]).
    pub(crate) async fn brokers_in(
        &self,
        tx: &mut S::Tx,
        company: CompanyId,
    ) -> Result<Arc<Vec<CompanyRef>>, EngineError> {
        let load = || async move { Ok::<_, StoreError>(tx.company(company).await?.map(|c| c.brokers)) };
        Ok(self.caches.brokers.get(company, load).await?.unwrap_or_default())
    }

    /// Refuses a trading call of a stopped company; read in the caller's transaction,
    /// after its locks, so that it sees a stop committed before them.
    pub(crate) async fn require_trading(&self, tx: &mut S::Tx, company: CompanyId) -> Result<(), EngineError> {
        match tx.trading_stopped_since(company).await? {
            Some(_) => Err(trading_stopped()),
            None => Ok(()),
        }
    }
}

/// An e-mail for the outbox (its message id under `mail_domain`) and the timer that sends
/// it, for a use case that writes them with its other new rows ([`NewRows`]).
pub(crate) fn email_rows(
    mail_domain: &str,
    now: DateTime<Utc>,
    to: &str,
    template: EmailTemplate,
) -> (OutboxMessage, Timer) {
    let outbox_id = Uuid::now_v7();
    let email = OutgoingEmail { message_id: format!("<{outbox_id}@{mail_domain}>"), to: to.to_owned(), template };
    let message = OutboxMessage { outbox_id, email, created_at: now, sent_at: None, attempts: 0, last_error: None };
    let timer = Timer {
        timer_id: Uuid::now_v7(),
        kind: OUTBOX_DELIVER.into(),
        payload: json!({ "outbox_id": outbox_id }),
        due_at: now,
        dedupe_key: None,
        attempts: 0,
    };
    (message, timer)
}

/// Declares a feature service (ADR 0032): the shared core, reached through `Deref`, and
/// as fields the services of earlier features it calls, never a later one's
/// (`tests/layering.rs` holds the order).
macro_rules! service {
    ($(#[$meta:meta])* $name:ident { $($field:ident: $feature:ident),* $(,)? }) => {
        $(#[$meta])*
        pub struct $name<S: crate::Store> {
            core: crate::Core<S>,
            $(pub(crate) $field: $feature<S>,)*
        }

        impl<S: crate::Store> Clone for $name<S> {
            fn clone(&self) -> Self {
                Self { core: self.core.clone(), $($field: self.$field.clone(),)* }
            }
        }

        impl<S: crate::Store> std::ops::Deref for $name<S> {
            type Target = crate::Core<S>;
            fn deref(&self) -> &crate::Core<S> {
                &self.core
            }
        }

        impl<S: crate::Store> $name<S> {
            // One argument per collaborator: the list is the service's declared needs.
            #[allow(clippy::too_many_arguments)]
            pub(crate) fn new(core: &crate::Core<S>, $($field: &$feature<S>),*) -> Self {
                Self { core: core.clone(), $($field: $field.clone(),)* }
            }
        }
    };
}
pub(crate) use service;

/// After a commit that changed one order and told its trader why (a cancel on disconnect,
/// a price correction): the order, its parent, its book and the notice, in that order.
pub(crate) fn publish_order_told<S: Store>(
    core: &Core<S>,
    order: &ChildOrder,
    parent: Option<&ParentOrder>,
    told: Notification,
) {
    core.publish_order(order);
    if let Some(p) = parent {
        core.publish_parent(p);
    }
    core.publish_book(order.instrument_id);
    core.publish(Event::NotificationChanged { user_id: told.user_id, notification: told });
}

/// Holds the instrument's minimum block in `tx` (ADR 0057) while `seen`, the copy a use
/// case checked against, still has it; otherwise drops the cached copy from `caches` and
/// answers [`block_changed`], so that the call is made again against the new block.
pub(crate) async fn hold_seen_block<T: Tx>(
    caches: &cache::Caches,
    tx: &mut T,
    seen: &Instrument,
) -> Result<(), EngineError> {
    if tx.hold_block(seen.instrument_id).await? == seen.min_quantity {
        return Ok(());
    }
    caches.instruments.drop_key(&seen.instrument_id);
    Err(block_changed())
}

/// The instrument as it is now, read through `tx`, once rows written with another block
/// showed the cached copy `seen` stale (which is dropped from `caches`).
pub(crate) async fn instrument_now<T: Tx>(
    caches: &cache::Caches,
    tx: &mut T,
    seen: &Instrument,
) -> Result<Arc<Instrument>, EngineError> {
    caches.instruments.drop_key(&seen.instrument_id);
    let now = tx.instrument(seen.instrument_id).await?;
    Ok(Arc::new(now.ok_or_else(|| EngineError::NotFound("Instrument not found.".into()))?))
}

const BLOCK_CHANGED: &str = "The instrument's minimum block has changed. Try again.";

/// A use case checked against a minimum block that changed meanwhile (ADR 0057).
pub(crate) fn block_changed() -> EngineError {
    EngineError::Conflict { detail: BLOCK_CHANGED.into(), errors: vec![] }
}

/// Runs `call` again, up to twice more, while it answers [`block_changed`]: the cached
/// copy it checked against is dropped by then, so the next run checks against the new
/// block (ADR 0057).
pub(crate) async fn again_on_new_block<T, F, Fut>(mut call: F) -> Result<T, EngineError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, EngineError>>,
{
    let mut tries = 0;
    loop {
        match call().await {
            Err(EngineError::Conflict { detail, .. }) if detail == BLOCK_CHANGED && tries < 2 => tries += 1,
            done => return done,
        }
    }
}
