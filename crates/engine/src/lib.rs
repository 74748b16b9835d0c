//! Use cases of the venue and the ports they need (store, clock, mailer, events).
//! Every use case reads, checks and writes inside one transaction; its audit row and
//! its outgoing e-mails are written in that same transaction.

pub mod accounts;
pub mod action_logs;
pub mod admin_orders;
pub mod allocations;
pub mod book;
mod cache;
pub mod calendars;
pub mod clock;
pub mod confirmations;
pub mod context;
pub mod core;
pub mod counterparties;
pub mod disconnects;
pub mod error;
pub mod events;
pub mod exchanges;
pub mod fanout;
pub mod fix;
pub mod keyed;
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
pub mod reports;
pub mod rfqs;
pub mod scheduler;
pub mod scorecards;
pub mod security;
pub mod users;
pub mod withdrawals;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

pub use clock::{Clock, ManualClock, SystemClock};
pub use core::Core;
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
    /// How long a trader's connections may all be gone before a cancel on disconnect
    /// (ADR 0043), in seconds.
    pub const DISCONNECT_GRACE_SECS: u64 = 10;
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
    /// How long a trader's connections may all be gone before their orders are pulled,
    /// when they chose it (ADR 0043).
    pub disconnect_grace: Duration,
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
            disconnect_grace: Duration::from_secs(defaults::DISCONNECT_GRACE_SECS),
        }
    }
}

/// The venue's use cases: the shared core and one service per feature, each a public
/// field (`engine.orders.create_order(…)`), in the order they depend on each other
/// (ADR 0032). The core's steps are reached through it too (`engine.clock()`).
pub struct Engine<S: Store> {
    core: Core<S>,
    pub accounts: accounts::Accounts<S>,
    pub users: users::Users<S>,
    pub counterparties: counterparties::Counterparties<S>,
    pub notifications: notifications::Notifications<S>,
    pub orders: orders::Orders<S>,
    pub confirmations: confirmations::Confirmations<S>,
    pub allocations: allocations::Allocations<S>,
    pub matches: matches::Matches<S>,
    pub rfqs: rfqs::Rfqs<S>,
    pub reference: reference::Reference<S>,
    pub exchanges: exchanges::Exchanges<S>,
    pub withdrawals: withdrawals::Withdrawals<S>,
    pub kill_switch: kill_switch::KillSwitch<S>,
    pub disconnects: disconnects::Disconnects<S>,
    pub fix: fix::Fix<S>,
    pub newsletters: newsletters::Newsletters<S>,
    pub admin_orders: admin_orders::AdminOrders<S>,
    pub action_logs: action_logs::ActionLogs<S>,
    pub scorecards: scorecards::Scorecards<S>,
    pub scheduler: scheduler::Scheduler<S>,
}

impl<S: Store> Clone for Engine<S> {
    fn clone(&self) -> Self {
        Self {
            core: self.core.clone(),
            accounts: self.accounts.clone(),
            users: self.users.clone(),
            counterparties: self.counterparties.clone(),
            notifications: self.notifications.clone(),
            orders: self.orders.clone(),
            confirmations: self.confirmations.clone(),
            allocations: self.allocations.clone(),
            matches: self.matches.clone(),
            rfqs: self.rfqs.clone(),
            reference: self.reference.clone(),
            exchanges: self.exchanges.clone(),
            withdrawals: self.withdrawals.clone(),
            kill_switch: self.kill_switch.clone(),
            disconnects: self.disconnects.clone(),
            fix: self.fix.clone(),
            newsletters: self.newsletters.clone(),
            admin_orders: self.admin_orders.clone(),
            action_logs: self.action_logs.clone(),
            scorecards: self.scorecards.clone(),
            scheduler: self.scheduler.clone(),
        }
    }
}

impl<S: Store> std::ops::Deref for Engine<S> {
    type Target = Core<S>;
    fn deref(&self) -> &Core<S> {
        &self.core
    }
}

impl<S: Store> Engine<S> {
    /// The core, then each feature in the order they depend on each other (ADR 0032).
    pub fn new(
        store: S,
        clock: Arc<dyn Clock>,
        events: Arc<dyn EventPublisher>,
        mailer: Arc<dyn Mailer>,
        config: EngineConfig,
    ) -> Self {
        let core = Core::new(store, clock, events, mailer, config);
        let fix_reports = reports::FixReports::new(&core);
        let accounts = accounts::Accounts::new(&core);
        let users = users::Users::new(&core, &accounts);
        let counterparties = counterparties::Counterparties::new(&core);
        let notifications = notifications::Notifications::new(&core);
        let orders = orders::Orders::new(&core, &fix_reports);
        let confirmations = confirmations::Confirmations::new(&core, &fix_reports, &orders);
        let allocations = allocations::Allocations::new(&core, &fix_reports, &confirmations);
        let matches = matches::Matches::new(&core, &counterparties, &notifications, &orders, &confirmations);
        let rfqs = rfqs::Rfqs::new(&core, &counterparties, &notifications, &orders, &confirmations);
        let reference = reference::Reference::new(&core, &counterparties, &matches);
        let exchanges = exchanges::Exchanges::new(&core, &orders);
        let withdrawals = withdrawals::Withdrawals::new(&core, &fix_reports, &notifications, &orders, &matches, &rfqs);
        let kill_switch = kill_switch::KillSwitch::new(&core, &matches, &rfqs);
        let disconnects = disconnects::Disconnects::new(&core, &matches);
        let fix = fix::Fix::new(&core, &fix_reports, &orders, &confirmations, &withdrawals);
        let newsletters = newsletters::Newsletters::new(&core);
        let admin_orders = admin_orders::AdminOrders::new(&core);
        let action_logs = action_logs::ActionLogs::new(&core);
        let scorecards = scorecards::Scorecards::new(&core);
        let scheduler = scheduler::Scheduler::new(
            &core,
            &orders,
            &matches,
            &rfqs,
            &withdrawals,
            &kill_switch,
            &disconnects,
            &reference,
        );
        Self {
            core,
            accounts,
            users,
            counterparties,
            notifications,
            orders,
            confirmations,
            allocations,
            matches,
            rfqs,
            reference,
            exchanges,
            withdrawals,
            kill_switch,
            disconnects,
            fix,
            newsletters,
            admin_orders,
            action_logs,
            scorecards,
            scheduler,
        }
    }
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
