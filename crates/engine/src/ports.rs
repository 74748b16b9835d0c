//! The ports the engine drives. Store traits are split by capability and combined in
//! [`Tx`], so a backend implements each on its transaction type.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use upstairs_domain::match_request::MatchRequestState;
use upstairs_domain::order::OrderState;
use upstairs_domain::rfq::{ResponseState, RfqState};
use upstairs_domain::{
    CompanyId, InstrumentId, MatchRequestId, NotificationId, OrderId, ParentOrderId, RfqId, SessionId, UserId,
};
use uuid::Uuid;

use crate::error::StoreError;
use crate::model::*;

pub type StoreResult<T> = Result<T, StoreError>;

/// Each company's FIX sessions, rung after a commit that put messages in the company's
/// outbox: the store rings it once the commit succeeded, and the engine tells the other
/// nodes, whose sessions it rings in turn (their poll is the fallback). Another company's
/// trading never wakes a session.
#[derive(Default)]
pub struct FixBell {
    bells: std::sync::Mutex<std::collections::HashMap<CompanyId, tokio::sync::watch::Sender<u64>>>,
    /// Tells the other nodes, where there are others (set once, by the engine).
    peers: std::sync::OnceLock<Box<dyn Fn(CompanyId) + Send + Sync>>,
}

impl FixBell {
    /// After a commit on this node: wakes the sessions listening for these companies, here
    /// and on the other nodes.
    pub fn ring(&self, companies: &[CompanyId]) {
        // Most commits queue nothing: no lock, no copy.
        if companies.is_empty() {
            return;
        }
        let mut once = companies.to_vec();
        once.sort_unstable();
        once.dedup();
        self.ring_here(&once);
        if let Some(tell) = self.peers.get() {
            once.into_iter().for_each(tell);
        }
    }

    /// Wakes this node's sessions of these companies only (another node committed).
    pub fn ring_here(&self, companies: &[CompanyId]) {
        if companies.is_empty() {
            return;
        }
        let bells = self.bells.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for c in companies {
            if let Some(bell) = bells.get(c) {
                bell.send_modify(|n| *n = n.wrapping_add(1));
            }
        }
    }

    /// How [`Self::ring`] tells the other nodes; the first one set stays.
    pub fn tell_peers(&self, tell: impl Fn(CompanyId) + Send + Sync + 'static) {
        let _ = self.peers.set(Box::new(tell));
    }

    /// Changes whenever a commit put messages in `company`'s outbox.
    pub fn listen(&self, company: CompanyId) -> tokio::sync::watch::Receiver<u64> {
        let mut bells = self.bells.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        bells.entry(company).or_insert_with(|| tokio::sync::watch::channel(0).0).subscribe()
    }
}

/// A database: hands out transactions.
#[async_trait]
pub trait Store: Clone + Send + Sync + 'static {
    type Tx: Tx;

    /// A transaction that will write. On SQLite it takes the write lock at once
    /// (`BEGIN IMMEDIATE`), so two writers never deadlock upgrading a read lock.
    async fn write(&self) -> StoreResult<Self::Tx>;

    /// A transaction that only reads.
    async fn read(&self) -> StoreResult<Self::Tx>;

    /// A connection for a read of one statement, outside any transaction (one statement
    /// sees one snapshot by itself): no `BEGIN`/`ROLLBACK` round trips on the hottest
    /// reads. Never use it for two statements that must agree, nor for a write.
    async fn single(&self) -> StoreResult<Self::Tx>;

    /// Rung after each commit that queued FIX messages, with their companies.
    fn fix_bell(&self) -> &std::sync::Arc<FixBell>;

    /// Files a frame of a company's FIX session under its number (replacing one filed
    /// there before), in one statement that is its own transaction: the session's next
    /// number becomes at least `seq + 1`, and the outbox message the frame carries is
    /// marked sent under `seq` (ADR 0030).
    async fn file_fix_message(&self, m: &FiledFixMessage) -> StoreResult<()>;

    /// Notes at `at` that a price came for an instrument whose band it repeats, in one
    /// statement that is its own transaction: false, writing nothing, when the band is
    /// another or the instrument is marked stale (ADR 0048).
    async fn touch_band(
        &self,
        id: InstrumentId,
        min: rust_decimal::Decimal,
        max: rust_decimal::Decimal,
        at: DateTime<Utc>,
    ) -> StoreResult<bool>;

    /// Puts a child order in, only into a parent in `parent_state`, together with its
    /// audit row: one transaction in one round trip, the order path's only write (ADR
    /// 0019). False, with nothing written, when the parent is in another state, or when
    /// the order shows by the instrument's minimum block ([`ChildOrder::shows_by_block`])
    /// and `block`, what it was shown with, is no longer the instrument's (ADR 0057: the
    /// write holds the instrument's block as [`OrderRepo::hold_block`] does);
    /// [`StoreError::Check`] when the parent's tradable quantity would fall below zero.
    async fn insert_order_audited(
        &self,
        o: &ChildOrder,
        block: i64,
        parent_state: ParentState,
        log: &ActionLog,
    ) -> StoreResult<bool>;

    /// A short name of the backend for logs ("sqlite", "postgres").
    fn backend(&self) -> &'static str;

    /// Whether a write transaction holds the only write lock from its start (SQLite's one
    /// writer), so that what it reads before taking row locks cannot change under it.
    fn one_writer(&self) -> bool {
        false
    }

    /// Carries announcements between the nodes on this database; `None` where this node
    /// is the only one there can be (SQLite: one file, one process).
    fn fanout(&self) -> Option<std::sync::Arc<dyn Fanout>> {
        None
    }

    /// Connections of the pool(s): (in use, open).
    fn pool_use(&self) -> (u32, u32);
}

/// Announcements between the nodes sharing one database (PostgreSQL LISTEN/NOTIFY, ADR 0026).
#[async_trait]
pub trait Fanout: Send + Sync + 'static {
    /// Queues `payload` (one line) for every node listening (this one too); sent in
    /// order, soon after the commit it follows, packed with others. Never waits: a full
    /// queue drops and counts it.
    fn announce(&self, payload: String);
    /// A listening connection of its own.
    async fn listen(&self) -> StoreResult<Box<dyn FanoutListener>>;
    /// Announcements dropped because the queue was full, since start.
    fn dropped(&self) -> u64;
}

#[async_trait]
pub trait FanoutListener: Send {
    /// The next packet of payloads, one per line, in the order announced; `None` when
    /// the connection was lost (announcements made meanwhile are lost with it: listen again).
    async fn recv(&mut self) -> StoreResult<Option<String>>;
}

#[async_trait]
pub trait Tx:
    CompanyRepo
    + InstrumentRepo
    + OrderRepo
    + MatchRequestRepo
    + BrokerConfirmationRepo
    + NotificationRepo
    + RfqRepo
    + UserRepo
    + SessionRepo
    + LinkTokenRepo
    + AuditRepo
    + RowsRepo
    + OutboxRepo
    + TimerRepo
    + NewsletterRepo
    + FixRepo
    + AllocationRepo
    + Send
{
    async fn commit(self) -> StoreResult<()>;
}

#[async_trait]
pub trait CompanyRepo {
    /// Inserts the company and its broker list (the names in `CompanyRef`s are ignored).
    async fn insert_company(&mut self, c: &Company) -> StoreResult<()>;
    /// Writes every mutable column and replaces the broker list.
    async fn update_company(&mut self, c: &Company) -> StoreResult<()>;
    async fn company(&mut self, id: CompanyId) -> StoreResult<Option<Company>>;
    /// Reads ahead, into this transaction's memo, the companies and the users it has not
    /// read yet (one statement for each kind), so that [`Self::company`] and
    /// `UserRepo::user` then answer them without one. Nothing outside a transaction.
    async fn read_ahead(&mut self, companies: &[CompanyId], users: &[UserId]) -> StoreResult<()>;
    async fn company_by_name(&mut self, name: &str) -> StoreResult<Option<Company>>;
    async fn count_companies(&mut self) -> StoreResult<i64>;
    /// Ordered by name.
    async fn companies(&mut self, page: i64, size: i64) -> StoreResult<Page<Company>>;
    /// Companies having the type (e.g. `liquidity-provider`), ordered by name.
    async fn companies_of_type(&mut self, company_type: &str) -> StoreResult<Vec<Company>>;
    /// Stops (`Some(since)`) or releases (`None`) a company's trading: the kill switch.
    async fn set_trading_stopped(
        &mut self,
        id: CompanyId,
        since: Option<DateTime<Utc>>,
        at: DateTime<Utc>,
    ) -> StoreResult<()>;
    /// Since when a company's trading is stopped; `None` while it trades (or is unknown).
    async fn trading_stopped_since(&mut self, id: CompanyId) -> StoreResult<Option<DateTime<Utc>>>;
    /// Locks every active parent order of a company until commit (the kill switch's
    /// sweep waits for the order writes in flight; a no-op on SQLite's single writer).
    async fn lock_parent_orders_of_company(&mut self, id: CompanyId) -> StoreResult<()>;
    /// The companies with a user holding `role` (the venue's own: its staff's).
    async fn companies_with_role(&mut self, role: upstairs_domain::Role) -> StoreResult<Vec<CompanyId>>;
    /// Every counterparty filter, in one statement.
    async fn counterparty_filters(&mut self) -> StoreResult<Vec<CounterpartyFilter>>;
    /// Writes an owner's filter whole (its blocked firms replaced).
    async fn replace_counterparty_filter(&mut self, f: &CounterpartyFilter) -> StoreResult<()>;
}

#[async_trait]
pub trait InstrumentRepo {
    async fn insert_instrument(&mut self, i: &Instrument) -> StoreResult<()>;
    async fn update_instrument(&mut self, i: &Instrument) -> StoreResult<()>;
    async fn instrument(&mut self, id: InstrumentId) -> StoreResult<Option<Instrument>>;
    /// Reads an instrument to change it and holds off every other writer of its row until
    /// commit (a row lock on PostgreSQL; SQLite's write transaction already holds the only
    /// write lock), so that no read-modify-write of it overwrites another.
    async fn lock_instrument(&mut self, id: InstrumentId) -> StoreResult<Option<Instrument>>;
    async fn instruments(&mut self, filter: &InstrumentFilter) -> StoreResult<Page<Instrument>>;
    /// Keeps the band an instrument has from `at` on (the scorecards measure against it);
    /// a second move at the same instant replaces the first.
    async fn record_band(&mut self, i: &Instrument, at: DateTime<Utc>) -> StoreResult<()>;
    /// The bands `instrument` had from `from` to `to`: the one in force at `from`, then
    /// every move, oldest first, as (since, min, max).
    async fn band_history(
        &mut self,
        instrument: InstrumentId,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> StoreResult<Vec<(DateTime<Utc>, rust_decimal::Decimal, rust_decimal::Decimal)>>;
    /// Forgets the band moves before `before`, keeping each instrument's band in force
    /// then; how many it forgot.
    async fn prune_band_history(&mut self, before: DateTime<Utc>) -> StoreResult<u64>;
    /// Keeps a version of an instrument's settings.
    async fn insert_instrument_setting(&mut self, s: &InstrumentSetting) -> StoreResult<()>;
    /// Every version of an instrument's settings, the latest `effective_from` first (the
    /// latest made first among those of one time).
    async fn instrument_settings(&mut self, instrument: InstrumentId) -> StoreResult<Vec<InstrumentSetting>>;
    async fn instrument_setting(&mut self, id: uuid::Uuid) -> StoreResult<Option<InstrumentSetting>>;
    /// Removes a version not yet applied; false when there is none such.
    async fn delete_instrument_setting(&mut self, id: uuid::Uuid) -> StoreResult<bool>;
    /// Marks a version not yet applied as applied at `at`; false when there is none such
    /// (cancelled meanwhile, or applied already).
    async fn apply_instrument_setting(&mut self, id: uuid::Uuid, at: DateTime<Utc>) -> StoreResult<bool>;
    /// Every exchange by MIC, each with the number of instruments naming it.
    async fn exchanges(&mut self) -> StoreResult<Vec<(Exchange, i64)>>;
    async fn exchange(&mut self, mic: &str) -> StoreResult<Option<Exchange>>;
    /// Creates the exchange, or replaces the one of its MIC (keeping its `created_at`).
    async fn save_exchange(&mut self, e: &Exchange) -> StoreResult<()>;
    /// Whether there was one to delete.
    async fn delete_exchange(&mut self, mic: &str) -> StoreResult<bool>;
}

#[async_trait]
pub trait OrderRepo {
    /// Reads a parent order and serialises changes to its quantities until commit (a
    /// row lock on PostgreSQL; SQLite's write transaction already holds the only write lock).
    async fn lock_parent_order(&mut self, id: ParentOrderId) -> StoreResult<Option<ParentOrderView>>;
    /// [`Self::lock_parent_order`] for several parents in one statement, locked in id
    /// order (as every path locking several parents does).
    async fn lock_parent_orders(
        &mut self,
        ids: &std::collections::BTreeSet<ParentOrderId>,
    ) -> StoreResult<Vec<ParentOrderView>>;
    /// Parent orders by id, in one statement, in id order, without a lock: those found.
    async fn parent_orders_by_id(
        &mut self,
        ids: &std::collections::BTreeSet<ParentOrderId>,
    ) -> StoreResult<Vec<ParentOrderView>>;
    /// The parents a take changes, locked in id order in one statement: `own` when it is
    /// `company`'s, and those of `others` that are not `company`'s.
    async fn lock_take_parents(
        &mut self,
        company: CompanyId,
        own: ParentOrderId,
        others: &std::collections::BTreeSet<ParentOrderId>,
    ) -> StoreResult<Vec<ParentOrderView>>;
    /// [`Self::lock_parent_orders`] of the parents of both orders of a match request;
    /// none when there is no such request.
    async fn lock_parents_of_match_request(&mut self, id: MatchRequestId) -> StoreResult<Vec<ParentOrderView>>;
    async fn insert_parent_order(&mut self, p: &ParentOrder) -> StoreResult<()>;
    async fn update_parent_order_state(
        &mut self,
        id: ParentOrderId,
        state: ParentState,
        at: DateTime<Utc>,
    ) -> StoreResult<()>;
    /// [`Self::update_parent_order_state`] of several parents, in one statement.
    async fn update_parent_order_states(
        &mut self,
        changes: &[(ParentOrderId, ParentState)],
        at: DateTime<Utc>,
    ) -> StoreResult<()>;
    async fn parent_order(&mut self, id: ParentOrderId) -> StoreResult<Option<ParentOrderView>>;
    /// A company's parent orders in the given states, newest first.
    async fn parent_orders(&mut self, company: CompanyId, states: &[ParentState]) -> StoreResult<Vec<ParentOrderView>>;
    /// The instrument's minimum block, held until this transaction ends (ADR 0057): a
    /// change of block ([`InstrumentRepo::update_instrument`] with another block) waits
    /// for this transaction, or this for it, and then reads the new block; no other change
    /// of the instrument waits for it, nor it for them (ADR 0060). Read once per transaction and
    /// instrument. A transaction that will write a resting iceberg after other child
    /// orders calls it before its first write, so that it never waits for a change of
    /// block while holding what that change writes.
    async fn hold_block(&mut self, id: InstrumentId) -> StoreResult<i64>;
    /// Inserts a child order and adds it to its parent's counters and, when it rests,
    /// to the book's levels (what [`ChildOrder::shown`] says; a resting iceberg with the
    /// block [`Self::hold_block`] holds), in this transaction.
    async fn insert_order(&mut self, o: &ChildOrder) -> StoreResult<()>;
    /// Writes state, price, quantity, iceberg, residual and updated_at of `after`, only
    /// if the stored order is still `before` (compare-and-set: otherwise
    /// [`StoreError::Stale`]), and moves the parent's counters and the book's levels
    /// from `before` to `after` (shown as [`Self::insert_order`] says).
    async fn update_order(&mut self, before: &ChildOrder, after: &ChildOrder) -> StoreResult<()>;
    /// Writes each order's shown part again by the block [`Self::hold_block`] holds, as
    /// [`Self::update_order`] of an order to itself would, in one statement per thousand
    /// orders: only where the stored order is still as given. Answers the orders it did
    /// not write (changed since, or gone).
    async fn show_by_block(&mut self, orders: &[ChildOrder]) -> StoreResult<Vec<OrderId>>;
    async fn order(&mut self, id: OrderId) -> StoreResult<Option<ChildOrder>>;
    /// Child orders by id, in one statement: those found, in no particular order.
    async fn orders_by_id(&mut self, ids: &[OrderId]) -> StoreResult<Vec<ChildOrder>>;
    /// Newest first.
    async fn orders(&mut self, filter: &OrderFilter) -> StoreResult<Vec<ChildOrder>>;
    /// The book of an instrument as its kept levels: resting quantity per price, side
    /// and company, an iceberg counting as at most the instrument's minimum block.
    /// O(levels), whatever the number of resting orders.
    async fn book_rows(&mut self, instrument: InstrumentId) -> StoreResult<Vec<BookRow>>;
    /// The working orders a take through the parent `parent` may reach, the best price
    /// for the parent first, each price's oldest first, at most `most` of them (all with
    /// `None`): on the other side of its instrument, of other companies than `company`,
    /// priced no worse than `limit` for the parent (a sell at or below it for a buy, a buy
    /// at or above it for a sell; a few beyond it may come too); none when the parent is
    /// not `company`'s. Each with its creator's auto-answer preference and what the book
    /// shows of it, in one statement.
    async fn orders_facing(
        &mut self,
        parent: ParentOrderId,
        company: CompanyId,
        limit: rust_decimal::Decimal,
        most: Option<i64>,
    ) -> StoreResult<Vec<FacingOrder>>;
    /// One page of every company's child orders, newest first, with who placed each,
    /// for which company, on which instrument and through which broker; and how many match.
    async fn admin_orders(&mut self, filter: &AdminOrderFilter) -> StoreResult<Page<AdminOrder>>;
    /// The orders in `states` created up to `created_until`, oldest first.
    async fn orders_in_states(
        &mut self,
        states: &[OrderState],
        created_until: DateTime<Utc>,
    ) -> StoreResult<Vec<ChildOrder>>;
}

#[async_trait]
pub trait UserRepo {
    async fn insert_user(&mut self, u: &User) -> StoreResult<()>;
    /// Writes every mutable column of `u` (identified by `user_id`).
    async fn update_user(&mut self, u: &User) -> StoreResult<()>;
    async fn user(&mut self, id: UserId) -> StoreResult<Option<UserView>>;
    /// `email` must be lower-cased.
    async fn user_by_email(&mut self, email: &str) -> StoreResult<Option<UserView>>;
    /// Ordered by e-mail.
    async fn users(&mut self, filter: &UserFilter) -> StoreResult<Page<UserView>>;
    /// Holds `node`'s presence lease on each of `holders` until `until` (ADR 0043).
    async fn renew_presence(&mut self, node: &str, holders: &[Holder], until: DateTime<Utc>) -> StoreResult<()>;
    /// Ends `node`'s leases on `holders` at `at`, when their last session there closed.
    async fn release_presence(&mut self, node: &str, holders: &[Holder], at: DateTime<Utc>) -> StoreResult<()>;
    /// Removes every lease (any node's) that lapsed by `now`: each one's holder and end.
    async fn take_lapsed_presence(&mut self, now: DateTime<Utc>) -> StoreResult<Vec<(Holder, DateTime<Utc>)>>;
    /// Whether any node holds a lease on `holder` beyond `now`.
    async fn present(&mut self, holder: Holder, now: DateTime<Utc>) -> StoreResult<bool>;
    /// Holds the venue-wide lease `name` for `node` until `until`, when it is free at `now`
    /// (lapsed, or never taken) or `node`'s already; false when another node holds it.
    async fn hold_lease(
        &mut self,
        name: &str,
        node: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> StoreResult<bool>;
    /// Lets go of the lease `name`, if `node` holds it.
    async fn release_lease(&mut self, name: &str, node: &str) -> StoreResult<()>;
    /// Saves the market-data session's state, replacing the one saved before.
    async fn save_market_data_session(&mut self, s: &MarketDataSession) -> StoreResult<()>;
    /// The market-data session as saved, whether its node holds the lease `lease` beyond
    /// `now`, and how many instruments are stale; none when no session ever ran.
    async fn market_data_session(
        &mut self,
        lease: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<(MarketDataSession, bool, i64)>>;
}

#[async_trait]
pub trait SessionRepo {
    async fn insert_session(&mut self, s: &Session) -> StoreResult<()>;
    /// The session of a token and its user, in one statement.
    async fn session_user(&mut self, token_hash: &str) -> StoreResult<Option<(Session, UserView)>>;
    async fn delete_session(&mut self, id: SessionId) -> StoreResult<()>;
    /// Revokes every session of a user; returns how many.
    async fn delete_sessions_of_user(&mut self, user: UserId) -> StoreResult<u64>;
    async fn delete_expired_sessions(&mut self, now: DateTime<Utc>) -> StoreResult<u64>;
}

#[async_trait]
pub trait LinkTokenRepo {
    async fn insert_link_token(&mut self, t: &LinkToken) -> StoreResult<()>;
    async fn link_token(&mut self, token_hash: &str) -> StoreResult<Option<LinkToken>>;
    /// Uses the token up when it is unused and unexpired at `now` (and made for `purpose`,
    /// when given), as one compare-and-set: of two concurrent claims one gets the token,
    /// the other `None`.
    async fn claim_link_token(
        &mut self,
        token_hash: &str,
        now: DateTime<Utc>,
        purpose: Option<LinkPurpose>,
    ) -> StoreResult<Option<LinkToken>>;
    /// Marks every unused token of the user used; returns how many.
    async fn use_link_tokens_of_user(&mut self, user: UserId, now: DateTime<Utc>) -> StoreResult<u64>;
    /// Removes tokens that expired or were used before `before`.
    async fn delete_stale_link_tokens(&mut self, before: DateTime<Utc>) -> StoreResult<u64>;
}

#[async_trait]
pub trait AuditRepo {
    async fn insert_action_log(&mut self, a: &ActionLog) -> StoreResult<()>;
    /// Newest first.
    async fn action_logs(&mut self, limit: i64) -> StoreResult<Vec<ActionLog>>;
    /// One page of the action log with each acting user's e-mail and company, filtered
    /// and sorted (ties newest first), and how many rows match.
    async fn action_log_page(&mut self, filter: &ActionLogFilter) -> StoreResult<Page<ActionLogEntry>>;
    /// What a keyed write of the user created, in the order it created it (ADR 0023):
    /// each row's entity, its id and the request digest it was made with.
    async fn keyed_writes(&mut self, user: UserId, key: &str) -> StoreResult<Vec<KeyedWrite>>;
}

#[async_trait]
pub trait OutboxRepo {
    async fn insert_outbox(&mut self, m: &OutboxMessage) -> StoreResult<()>;
    async fn outbox(&mut self, id: Uuid) -> StoreResult<Option<OutboxMessage>>;
    /// Records delivery and replaces the stored message by `redacted`.
    async fn mark_outbox_sent(&mut self, id: Uuid, at: DateTime<Utc>, redacted: &OutgoingEmail) -> StoreResult<()>;
    async fn record_outbox_failure(&mut self, id: Uuid, error: &str) -> StoreResult<()>;
    /// Newest first.
    /// Every message, newest first, one page of `size`.
    async fn outbox_messages(&mut self, page: i64, size: i64) -> StoreResult<Page<OutboxMessage>>;
}

#[async_trait]
pub trait TimerRepo {
    /// What waits: undelivered e-mails and FIX messages, timers due at `now`.
    async fn backlog(&mut self, now: DateTime<Utc>) -> StoreResult<Backlog>;
    /// Inserts a timer; with a `dedupe_key` that already has a pending timer, does nothing
    /// and returns false.
    async fn insert_timer(&mut self, t: &Timer) -> StoreResult<bool>;
    /// Claims up to `limit` timers of `kinds` due at `now` that no one holds, holding them
    /// until `lease_until`, and counts the attempt. Safe with several nodes.
    async fn claim_due_timers(
        &mut self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        limit: i64,
        kinds: &[&str],
    ) -> StoreResult<Vec<Timer>>;
    /// Holds a claimed timer until `lease_until`, if the claim that counted `attempts` is
    /// still the latest (no other run has claimed it since); false otherwise.
    async fn renew_timer_lease(&mut self, id: Uuid, attempts: i32, lease_until: DateTime<Utc>) -> StoreResult<bool>;
    async fn delete_timer(&mut self, id: Uuid) -> StoreResult<()>;
    /// Releases a claimed timer to run again at `due_at`.
    async fn reschedule_timer(&mut self, id: Uuid, due_at: DateTime<Utc>) -> StoreResult<()>;
    /// Moves the pending timer of `dedupe_key` to `due_at` when that is later than its due
    /// time (a later cause of the same timer; one running now is deleted when done).
    async fn postpone_timer(&mut self, dedupe_key: &str, due_at: DateTime<Utc>) -> StoreResult<()>;
    /// Moves the pending timer of `dedupe_key` to `due_at` when that is earlier than its
    /// due time (a cause that now comes sooner).
    async fn advance_timer(&mut self, dedupe_key: &str, due_at: DateTime<Utc>) -> StoreResult<()>;
    async fn pending_timers(&mut self) -> StoreResult<Vec<Timer>>;
    /// Removes the timer of `dedupe_key` (a close an exchange's new hours replace).
    async fn delete_timers_of(&mut self, dedupe_key: &str) -> StoreResult<()>;
    /// Makes every timer of `kind` that nobody holds due at `now` at the latest;
    /// returns how many moved.
    async fn bring_forward(&mut self, kind: &str, now: DateTime<Utc>) -> StoreResult<u64>;
}

/// Sends one e-mail (SMTP or a file). Errors are retried by the outbox.
#[async_trait]
pub trait Mailer: Send + Sync + 'static {
    async fn send(&self, email: &OutgoingEmail) -> Result<(), String>;
    /// What the e-mail will say (subject, text, HTML), without sending it.
    fn preview(&self, email: &OutgoingEmail) -> EmailPreview;
    /// Whether the transport keeps its own copy of each message with its links (the
    /// demo's files): then the outbox keeps them too rather than redacting them.
    fn keeps_copies(&self) -> bool {
        false
    }
}

#[async_trait]
pub trait RowsRepo {
    /// Writes a batch of new rows ([`NewRows`]): in one statement where the backend can
    /// write several tables in one (PostgreSQL), else one after the other. Nothing when
    /// the batch is empty; a timer whose dedupe key this transaction wrote already is left out.
    async fn insert_rows(&mut self, rows: &NewRows) -> StoreResult<()>;
}

#[async_trait]
pub trait MatchRequestRepo {
    async fn insert_match_request(&mut self, m: &MatchRequest) -> StoreResult<()>;
    /// The match requests made from `from` to `to`, both included, that
    /// `company` is a party of (every one when `None`), oldest first.
    async fn match_requests_between(
        &mut self,
        company: Option<CompanyId>,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> StoreResult<Vec<MatchRequest>>;
    /// The quantity of the resting orders placed from `from` to `to`, both included, by
    /// `company` (every firm when `None`), per state: child orders that were never a
    /// taker's, nor an RFQ's trade (the scorecards' fill rate of resting interest).
    async fn rested_between(
        &mut self,
        company: Option<CompanyId>,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> StoreResult<Vec<(OrderState, i64)>>;
    /// Moves a match request from `from` to `to` (compare-and-set: `StoreError::Stale`
    /// when it is no longer in `from`).
    async fn update_match_request_state(
        &mut self,
        id: MatchRequestId,
        from: MatchRequestState,
        to: MatchRequestState,
        at: DateTime<Utc>,
    ) -> StoreResult<()>;
    /// Records that the responder's preference answered the match request.
    async fn mark_answered_automatically(&mut self, id: MatchRequestId) -> StoreResult<()>;
    async fn match_request(&mut self, id: MatchRequestId) -> StoreResult<Option<MatchRequest>>;
    /// The match requests in `state` whose requesting or responding order is `order`.
    async fn match_requests_of_order(
        &mut self,
        order: OrderId,
        state: MatchRequestState,
    ) -> StoreResult<Vec<MatchRequest>>;
    /// Every match request in `state`, oldest first (the close; a band move).
    async fn match_requests_in_state(&mut self, state: MatchRequestState) -> StoreResult<Vec<MatchRequest>>;
    /// How many match requests each responder (users or companies, by `by`) received since
    /// `since`, per state; a request the close timed out before its own deadline is left out.
    async fn received_by_state(
        &mut self,
        by: Responders<'_>,
        since: DateTime<Utc>,
    ) -> StoreResult<Vec<(Uuid, MatchRequestState, i64)>>;
    /// Both sides of every match request that became a trade (newest first, the taker's
    /// side before the responder's): what billing lists.
    async fn billing_items(&mut self, states: &[MatchRequestState]) -> StoreResult<Vec<BillingItem>>;
    /// A user's match requests in `state`, as taker or responder, newest first.
    async fn match_requests_of_user(
        &mut self,
        user: UserId,
        state: MatchRequestState,
    ) -> StoreResult<Vec<MatchRequest>>;
}

#[async_trait]
pub trait BrokerConfirmationRepo {
    async fn insert_broker_confirmation(&mut self, c: &BrokerConfirmation) -> StoreResult<()>;
    /// The brokers' links made from `from` to `to` (included) for the orders of `company`
    /// (every one when `None`).
    async fn broker_confirmations_between(
        &mut self,
        company: Option<CompanyId>,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> StoreResult<Vec<BrokerConfirmation>>;
    async fn broker_confirmation(&mut self, token_hash: &str) -> StoreResult<Option<BrokerConfirmation>>;
    /// The link of one order for one step (the newest, should there be several).
    async fn broker_confirmation_of_order(
        &mut self,
        order: OrderId,
        step: ConfirmationStep,
    ) -> StoreResult<Option<BrokerConfirmation>>;
    /// Records the broker's answer once (compare-and-set: `StoreError::Stale` when the
    /// link was already answered).
    async fn answer_broker_confirmation(
        &mut self,
        token_hash: &str,
        answer: bool,
        at: DateTime<Utc>,
    ) -> StoreResult<()>;
    /// The links of one match for one step, one per side.
    async fn broker_confirmations_of_match(
        &mut self,
        id: MatchRequestId,
        step: ConfirmationStep,
    ) -> StoreResult<Vec<BrokerConfirmation>>;
}

#[async_trait]
pub trait NotificationRepo {
    async fn insert_notification(&mut self, n: &Notification) -> StoreResult<()>;
    /// Writes `read`, `archived` and `updated_at` (the reader's flags), nothing else: a
    /// status the venue writes meanwhile stays.
    async fn update_notification_flags(&mut self, n: &Notification) -> StoreResult<()>;
    /// Writes `status` and `updated_at` (what the venue tells), nothing else: the reader's
    /// flags written meanwhile stay.
    async fn set_notification_status(
        &mut self,
        id: NotificationId,
        status: MatchRequestState,
        at: DateTime<Utc>,
    ) -> StoreResult<()>;
    /// [`Self::set_notification_status`] of a match request's notifications of one type,
    /// in one statement: those changed, as they are now.
    async fn set_match_request_notifications_status(
        &mut self,
        id: MatchRequestId,
        of_type: upstairs_domain::notification::NotificationType,
        status: MatchRequestState,
        at: DateTime<Utc>,
    ) -> StoreResult<Vec<Notification>>;
    async fn notification(&mut self, id: NotificationId) -> StoreResult<Option<Notification>>;
    /// A user's notifications (only archived or only not, when given), by creation time.
    async fn notifications_of_user(
        &mut self,
        user: UserId,
        archived: Option<bool>,
        newest_first: bool,
        page: i64,
        size: i64,
    ) -> StoreResult<Page<Notification>>;
    async fn notifications_of_match_request(&mut self, id: MatchRequestId) -> StoreResult<Vec<Notification>>;
    async fn notifications_of_rfq(&mut self, id: RfqId) -> StoreResult<Vec<Notification>>;
}

#[async_trait]
pub trait RfqRepo {
    async fn insert_rfq(&mut self, r: &Rfq) -> StoreResult<()>;
    /// The providers' responses to the RFQs made from `from` to `to` (included) that
    /// `company` asked or was asked (every one when `None`): each with the requester's
    /// company and when it was first quoted.
    async fn quotes_between(
        &mut self,
        company: Option<CompanyId>,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> StoreResult<Vec<QuoteTimes>>;
    /// Moves an RFQ from `from` to `to` (compare-and-set: `StoreError::Stale` when it
    /// is no longer in `from`).
    async fn update_rfq_state(&mut self, id: RfqId, from: RfqState, to: RfqState, at: DateTime<Utc>)
    -> StoreResult<()>;
    async fn rfq(&mut self, id: RfqId) -> StoreResult<Option<Rfq>>;
    /// A company's RFQs in `state` (of one parent, when given), newest first.
    async fn rfqs_of_company(
        &mut self,
        company: CompanyId,
        state: RfqState,
        parent: Option<ParentOrderId>,
    ) -> StoreResult<Vec<Rfq>>;
    /// Every RFQ in `state`, oldest first (the close).
    async fn rfqs_in_state(&mut self, state: RfqState) -> StoreResult<Vec<Rfq>>;
    async fn rfqs(&mut self, ids: &[RfqId]) -> StoreResult<Vec<Rfq>>;
    async fn insert_rfq_response(&mut self, r: &RfqResponse) -> StoreResult<()>;
    /// Writes a response's state, quote, quoter, broker, match and `updated_at` while it
    /// is still as `before` (same state, same `updated_at`; compare-and-set:
    /// `StoreError::Stale` otherwise), so a quote changed meanwhile is never accepted.
    async fn update_rfq_response(&mut self, before: &RfqResponse, after: &RfqResponse) -> StoreResult<()>;
    /// The responses to these RFQs, oldest first.
    async fn rfq_responses(&mut self, rfqs: &[RfqId]) -> StoreResult<Vec<RfqResponse>>;
    /// A provider's responses in `states` (to RFQs on one instrument, when given, and
    /// created at `since` or later, when given), newest RFQ first, at most `limit`.
    async fn rfq_responses_of_company(
        &mut self,
        company: CompanyId,
        states: &[ResponseState],
        instrument: Option<InstrumentId>,
        since: Option<DateTime<Utc>>,
        limit: i64,
    ) -> StoreResult<Vec<RfqResponse>>;
}

#[async_trait]
pub trait NewsletterRepo {
    async fn insert_newsletter(&mut self, n: &Newsletter) -> StoreResult<()>;
    /// Every newsletter with its recipients, newest first: of one company only when
    /// `company` is given (a company admin's), else all of them.
    async fn newsletters(&mut self, company: Option<CompanyId>) -> StoreResult<Vec<Newsletter>>;
    async fn newsletter(&mut self, id: Uuid) -> StoreResult<Option<Newsletter>>;
    /// Adds users (already there: left as they are); returns how many were new.
    async fn add_newsletter_recipients(&mut self, id: Uuid, users: &[UserId], at: DateTime<Utc>) -> StoreResult<u64>;
    /// False when the user was not a recipient.
    async fn remove_newsletter_recipient(&mut self, id: Uuid, user: UserId) -> StoreResult<bool>;
    async fn mark_newsletter_sent(&mut self, id: Uuid, at: DateTime<Utc>) -> StoreResult<()>;
}

/// Companies' accounts and the allocations of trades to them (ADR 0045).
#[async_trait]
pub trait AllocationRepo {
    /// Refuses (`Conflict`) a second account of the company with the same code.
    async fn insert_account(&mut self, a: &CompanyAccount) -> StoreResult<()>;
    /// Writes the name, whether active, and when.
    async fn update_account(&mut self, a: &CompanyAccount) -> StoreResult<()>;
    async fn account(&mut self, id: uuid::Uuid) -> StoreResult<Option<CompanyAccount>>;
    /// A company's accounts, by code.
    async fn accounts(&mut self, company: CompanyId) -> StoreResult<Vec<CompanyAccount>>;
    async fn allocation(&mut self, order: OrderId) -> StoreResult<Option<Allocation>>;
    /// The allocations of a trader's trades (only the order's own trader writes one), the
    /// latest first.
    async fn allocations_by(&mut self, trader: UserId) -> StoreResult<Vec<Allocation>>;
    /// Writes the allocation whole (a new order's first, or the next version).
    async fn put_allocation(&mut self, a: &Allocation) -> StoreResult<()>;
}

/// The FIX gateway's sessions, sent messages and outbox (ADR 0025).
#[async_trait]
pub trait FixRepo {
    /// The company's session, made with both sequences at 1 when it has none, and locked
    /// until the transaction ends (its caller writes it back).
    async fn fix_session(&mut self, company: CompanyId, now: DateTime<Utc>) -> StoreResult<FixSession>;
    /// The company's session as stored, if it has one (nothing written).
    async fn read_fix_session(&mut self, company: CompanyId) -> StoreResult<Option<FixSession>>;
    /// Records a refused NewOrderSingle (kept as first refused).
    async fn refuse_fix_order(
        &mut self,
        company: CompanyId,
        cl_ord_id: &str,
        reason: &str,
        at: DateTime<Utc>,
    ) -> StoreResult<()>;
    /// Why a ClOrdID was refused, if it was.
    async fn fix_refusal(&mut self, company: CompanyId, cl_ord_id: &str) -> StoreResult<Option<String>>;
    /// Writes the session's counters, markers and state.
    async fn update_fix_session(&mut self, s: &FixSession) -> StoreResult<()>;
    /// Forgets every frame of the company's session (a sequence reset).
    async fn delete_fix_messages(&mut self, company: CompanyId) -> StoreResult<()>;
    /// The frames filed in `begin..=end`, in order, at most `limit`.
    async fn fix_messages(
        &mut self,
        company: CompanyId,
        begin: i64,
        end: i64,
        limit: i64,
    ) -> StoreResult<Vec<StoredFixMessage>>;
    async fn insert_fix_outbox(&mut self, m: &FixOutboxMessage) -> StoreResult<()>;
    /// The company's messages not sent yet, oldest first, at most `limit`.
    async fn pending_fix_outbox(&mut self, company: CompanyId, limit: i64) -> StoreResult<Vec<FixOutboxMessage>>;
    /// Records the number a message went out under; false when it was not pending.
    async fn mark_fix_outbox_sent(
        &mut self,
        company: CompanyId,
        id: &str,
        seq: i64,
        at: DateTime<Utc>,
    ) -> StoreResult<bool>;
    /// Every company with a FIX CompID, with its session, by name.
    async fn fix_sessions(&mut self) -> StoreResult<Vec<FixSessionListed>>;
    async fn company_by_fix_comp_id(&mut self, comp_id: &str) -> StoreResult<Option<CompanyId>>;
    /// Marks logged off (and held by no node) every session whose node's hold lapsed
    /// before `lapsed_before`, or that no node holds; with `None`, every session: what a
    /// node finds at its start.
    async fn log_off_fix_sessions(&mut self, lapsed_before: Option<DateTime<Utc>>) -> StoreResult<()>;
    async fn insert_fix_parent_order(
        &mut self,
        parent: ParentOrderId,
        company: CompanyId,
        cl_ord_id: &str,
    ) -> StoreResult<()>;
    /// The company and ClOrdID of a parent order an execution system sent.
    async fn fix_parent_order(&mut self, parent: ParentOrderId) -> StoreResult<Option<(CompanyId, String)>>;
    /// [`Self::fix_parent_order`] of several parents in one statement: (parent, company,
    /// ClOrdID) of those an execution system sent.
    async fn fix_parent_orders(
        &mut self,
        parents: &[ParentOrderId],
    ) -> StoreResult<Vec<(ParentOrderId, CompanyId, String)>>;
    async fn fix_parent_by_cl_ord_id(
        &mut self,
        company: CompanyId,
        cl_ord_id: &str,
    ) -> StoreResult<Option<ParentOrderId>>;
}

/// Whose received match requests to count.
#[derive(Clone, Copy, Debug)]
pub enum Responders<'a> {
    Users(&'a [UserId]),
    Companies(&'a [CompanyId]),
}
