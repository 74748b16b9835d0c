//! Records the engine reads and writes through the store ports.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use upstairs_domain::match_request::MatchRequestState;
use upstairs_domain::notification::{NotificationType, Party};
pub use upstairs_domain::order::ParentState;
use upstairs_domain::order::{Direction, OrderState};
use upstairs_domain::rfq::{ResponseState, RfqState};
use upstairs_domain::{
    AutoAccept, CompanyId, InstrumentId, MatchRequestId, NotificationId, OrderId, ParentOrderId, RfqId, RfqResponseId,
    Role, SessionId, UiMetadataEntry, UserId,
};
use uuid::Uuid;

/// A company named by id, with its name for display.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompanyRef {
    pub company_id: CompanyId,
    pub name: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Company {
    pub company_id: CompanyId,
    pub name: String,
    pub full_name: String,
    /// Company types: `broker`, `liquidity-provider` (none for a trading firm).
    pub roles: Vec<String>,
    pub ems_identifier: Option<String>,
    pub account: Option<String>,
    /// Where trade confirmations for this broker go.
    pub trade_confirmation_email: Option<String>,
    pub trade_confirmation_via_email_enabled: bool,
    /// The SenderCompID of the company's FIX session (ADR 0025); none: no FIX.
    pub fix_comp_id: Option<String>,
    /// The argon2 hash of the Password (554) its Logon must carry; none: no Logon.
    pub fix_password_hash: Option<String>,
    /// Whether a FIX Logon may start both sequences again at 1 (ResetSeqNumFlag 141=Y);
    /// without it, such a Logon is refused.
    pub fix_reset_on_logon: bool,
    /// One of `brokers`.
    pub default_broker: Option<CompanyRef>,
    /// The brokers the company may use, in the order chosen.
    pub brokers: Vec<CompanyRef>,
    /// Since when its trading is stopped (the kill switch, ADR 0021); written only by
    /// the switch, never by an edit of the company.
    pub trading_stopped_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Company {
    /// A company with only a name (the bootstrap's and the tests' shape).
    pub fn named(name: &str, now: DateTime<Utc>) -> Self {
        Self {
            company_id: CompanyId::new(),
            name: name.to_owned(),
            full_name: name.to_owned(),
            roles: vec![],
            ems_identifier: None,
            account: None,
            trade_confirmation_email: None,
            trade_confirmation_via_email_enabled: false,
            fix_comp_id: None,
            fix_password_hash: None,
            fix_reset_on_logon: false,
            default_broker: None,
            brokers: vec![],
            trading_stopped_at: None,
            created_at: now,
            updated_at: now,
        }
    }

    pub fn is_type(&self, t: &str) -> bool {
        self.roles.iter().any(|r| r == t)
    }
}

pub const COMPANY_BROKER: &str = "broker";
pub const COMPANY_LIQUIDITY_PROVIDER: &str = "liquidity-provider";

/// An instrument tradable on the venue. Prices are exact decimals.
#[derive(Clone, Debug, PartialEq)]
pub struct Instrument {
    pub instrument_id: InstrumentId,
    pub name: String,
    /// e.g. `Dec26-Mar27`: the first 5 characters and the rest are the two leg labels.
    pub term: String,
    pub description: String,
    /// The minimum block size.
    pub min_quantity: i64,
    pub tick_size: Decimal,
    pub exchange_tick_size: Option<Decimal>,
    pub exchange_id: String,
    pub exchange: String,
    pub exchange_iso_code: String,
    pub exchange_instrument_id: Option<String>,
    pub bbg_code: Option<String>,
    pub country: String,
    pub currency: String,
    /// The exchange's best bid.
    pub min_tick_price: Decimal,
    /// The exchange's best offer.
    pub max_tick_price: Decimal,
    pub active: bool,
    pub is_sandbox: bool,
    pub reversed_spread: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Instrument {
    /// Whether `price` is inside the electronic band (both ends included).
    pub fn in_band(&self, price: Decimal) -> bool {
        self.min_tick_price <= price && price <= self.max_tick_price
    }
}

/// Sortable instrument columns (a closed set: it becomes SQL).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum InstrumentSort {
    #[default]
    Name,
    Term,
    ExchangeId,
    CreatedAt,
    UpdatedAt,
}

impl InstrumentSort {
    pub fn column(self) -> &'static str {
        match self {
            InstrumentSort::Name => "name",
            InstrumentSort::Term => "term",
            InstrumentSort::ExchangeId => "exchange_id",
            InstrumentSort::CreatedAt => "created_at",
            InstrumentSort::UpdatedAt => "updated_at",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Name, Self::Term, Self::ExchangeId, Self::CreatedAt, Self::UpdatedAt]
            .into_iter()
            .find(|c| c.column() == s)
    }
}

#[derive(Clone, Debug, Default)]
pub struct InstrumentFilter {
    /// Case-insensitive part of the name.
    pub name: Option<String>,
    pub exchange_id: Option<String>,
    pub active: Option<bool>,
    pub is_sandbox: Option<bool>,
    pub sort: InstrumentSort,
    pub descending: bool,
    pub page: i64,
    pub size: i64,
}

#[derive(Clone, Debug, Default)]
pub struct UserFilter {
    /// Case-insensitive part of the e-mail.
    pub email: Option<String>,
    pub company_id: Option<CompanyId>,
    pub active: Option<bool>,
    pub page: i64,
    pub size: i64,
}

/// One page of a list and the total number of matching items.
#[derive(Clone, Debug, PartialEq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total_items: i64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct User {
    pub user_id: UserId,
    pub company_id: CompanyId,
    /// Stored lower-cased; unique.
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub roles: Vec<Role>,
    /// PHC string of the argon2id hash; none until the account is activated.
    pub password_hash: Option<String>,
    pub active: bool,
    pub verified: bool,
    pub auto_accept: Option<AutoAccept>,
    pub parent_order_limit_multiplier: Option<i64>,
    pub ui_metadata: Vec<UiMetadataEntry>,
    pub fix_integration: bool,
    pub ems_trader_id: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A user with the name of its company, as lists and the profile show it.
#[derive(Clone, Debug, PartialEq)]
pub struct UserView {
    pub user: User,
    pub company_name: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Session {
    pub session_id: SessionId,
    pub user_id: UserId,
    /// SHA-256 of the bearer token, hex.
    pub token_hash: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum LinkPurpose {
    Reset,
    Activation,
}

impl LinkPurpose {
    pub fn as_str(self) -> &'static str {
        match self {
            LinkPurpose::Reset => "RESET",
            LinkPurpose::Activation => "ACTIVATION",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "RESET" => Some(LinkPurpose::Reset),
            "ACTIVATION" => Some(LinkPurpose::Activation),
            _ => None,
        }
    }
}

/// A single-use e-mail link token (password reset or account activation).
#[derive(Clone, Debug, PartialEq)]
pub struct LinkToken {
    /// SHA-256 of the token, hex.
    pub token_hash: String,
    pub user_id: UserId,
    pub purpose: LinkPurpose,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub used_at: Option<DateTime<Utc>>,
}

/// One audit row: who did what to which entity.
#[derive(Clone, Debug, PartialEq)]
pub struct ActionLog {
    pub action_log_id: Uuid,
    pub entity: String,
    pub entity_id: Option<Uuid>,
    pub operation: String,
    pub user_id: Option<UserId>,
    pub created_at: DateTime<Utc>,
    pub details: Value,
    /// Set on the rows a keyed write created (ADR 0023): the database refuses a second
    /// row with the same user, key and part, so a retried write cannot act twice.
    pub keyed: Option<KeyedRow>,
}

impl ActionLog {
    /// This row as part `part` of the keyed write `key`, when the write has a key.
    pub fn keyed(mut self, key: Option<&IdempotencyKey>, part: i32) -> Self {
        self.keyed = key.map(|k| KeyedRow { key: k.clone(), part });
        self
    }
}

/// A client's `Idempotency-Key` for one write, with a digest of the request it came with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdempotencyKey {
    pub key: String,
    pub request_hash: String,
}

/// Which row of a keyed write an audit row is: `part` 0 is the first entity it created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyedRow {
    pub key: IdempotencyKey,
    pub part: i32,
}

/// One entity a keyed write created, as the audit row of it recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyedWrite {
    pub entity: String,
    pub entity_id: Option<Uuid>,
    pub request_hash: String,
}

/// An audit row as the Action logs page lists it: with the acting user's e-mail and
/// company (none for what the venue did by itself, e.g. the close).
#[derive(Clone, Debug, PartialEq)]
pub struct ActionLogEntry {
    pub log: ActionLog,
    pub email: Option<String>,
    pub company_name: Option<String>,
}

/// Sortable action-log columns (a closed set: it becomes SQL).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ActionLogSort {
    #[default]
    CreatedAt,
    Entity,
    Operation,
    Email,
}

/// One page of the action log (admin).
#[derive(Clone, Debug, Default)]
pub struct ActionLogFilter {
    /// Case-insensitive part of the acting user's e-mail.
    pub email: Option<String>,
    pub sort: ActionLogSort,
    /// Newest (or last) first.
    pub descending: bool,
    pub page: i64,
    pub size: i64,
}

/// The Orders panel's filters and page (admin spec section 2); every filter optional.
#[derive(Clone, Debug, Default)]
pub struct AdminOrderFilter {
    pub order_id: Option<OrderId>,
    pub company_id: Option<CompanyId>,
    pub instrument_id: Option<InstrumentId>,
    pub states: Vec<OrderState>,
    /// Created at or after.
    pub from: Option<DateTime<Utc>>,
    /// Created before.
    pub until: Option<DateTime<Utc>>,
    pub page: i64,
    pub size: i64,
}

/// A child order as the Orders panel lists it: with who placed it, for which company,
/// on which instrument, through which broker.
#[derive(Clone, Debug, PartialEq)]
pub struct AdminOrder {
    pub order: ChildOrder,
    pub created_by_email: String,
    pub company_name: String,
    pub instrument_name: String,
    pub broker_name: String,
}

/// One side of a trade as billing lists it (admin spec section 3).
#[derive(Clone, Debug, PartialEq)]
pub struct BillingItem {
    pub company_name: String,
    pub first_name: String,
    pub last_name: String,
    pub user_id: UserId,
    pub broker_name: String,
    pub broker_id: CompanyId,
    pub match_request_id: MatchRequestId,
    pub order_id: OrderId,
    /// The parent order the side fills (ADR 0021).
    pub payment_order_id: ParentOrderId,
    pub match_request_created_at: DateTime<Utc>,
    pub instrument_name: String,
    pub bbg_code: Option<String>,
    pub exchange_instrument_id: Option<String>,
    pub exchange: String,
    pub exchange_iso_code: String,
    pub tick_size: Decimal,
    pub term: String,
    pub direction: Direction,
    pub quantity: i64,
    pub price: Decimal,
}

/// A named list of recipients for the orders digest (admin spec sections 2 and 3).
#[derive(Clone, Debug, PartialEq)]
pub struct Newsletter {
    pub newsletter_id: Uuid,
    /// The company whose admins keep it; `None` for the venue's own (ADR 0021).
    pub company_id: Option<CompanyId>,
    pub name: String,
    pub description: String,
    /// What the digest covers: `{"instrument_ids": [...]}`, or `None` for every active
    /// instrument.
    pub filter_criteria: Option<serde_json::Value>,
    pub recipients: Vec<NewsletterRecipient>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub last_sent_at: Option<DateTime<Utc>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NewsletterRecipient {
    pub user_id: UserId,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub company_name: String,
    pub roles: Vec<Role>,
}

/// Resting interest on one instrument, as the orders digest shows it: per side, the
/// price levels and what each shows, with no firm named (an iceberg counts as its
/// minimum block, as in the book).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DigestInstrument {
    pub name: String,
    pub term: String,
    pub min_block: i64,
    /// Best first: highest bid first, lowest offer first.
    pub bids: Vec<DigestLevel>,
    pub offers: Vec<DigestLevel>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DigestLevel {
    #[serde(with = "rust_decimal::serde::str")]
    pub price: Decimal,
    pub quantity: i64,
}

/// An e-mail as it will read, before it is sent.
#[derive(Clone, Debug, PartialEq)]
pub struct EmailPreview {
    pub subject: String,
    pub text: String,
    pub html: String,
}

/// What an e-mail says; the mail crate renders it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "template", rename_all = "snake_case")]
pub enum EmailTemplate {
    PasswordReset {
        first_name: String,
        link: String,
    },
    AccountActivation {
        first_name: String,
        link: String,
    },
    /// To the old address: the account's e-mail address was changed (`link`: sign in).
    EmailChanged {
        first_name: String,
        link: String,
    },
    /// A broker is asked to accept (then to confirm the fill of) a trade of its client.
    TradeConfirmation {
        step: ConfirmationStep,
        trade: TradeDetails,
        confirm_link: String,
        decline_link: String,
    },
    /// The orders digest of a newsletter: resting interest per instrument, no firm named.
    OrdersDigest {
        first_name: String,
        newsletter: String,
        description: String,
        instruments: Vec<DigestInstrument>,
        dashboard_link: String,
    },
}

/// What a broker's e-mail tells about a trade: its client's side only, and the broker
/// of the other side (brokers cross the trade between them); never the other firm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TradeDetails {
    pub broker_name: String,
    pub client_name: String,
    pub trader_name: String,
    pub instrument_name: String,
    pub direction: Direction,
    pub quantity: i64,
    pub price: Decimal,
    pub counterparty_broker_name: String,
    pub matched_at: DateTime<Utc>,
}

/// The two steps a broker confirms, each with its own link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ConfirmationStep {
    Accept,
    Fill,
}

impl ConfirmationStep {
    pub fn as_str(self) -> &'static str {
        match self {
            ConfirmationStep::Accept => "ACCEPT",
            ConfirmationStep::Fill => "FILL",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "ACCEPT" => Some(ConfirmationStep::Accept),
            "FILL" => Some(ConfirmationStep::Fill),
            _ => None,
        }
    }
}

/// One side's link for one step: stored hashed, bound to the order and the step.
#[derive(Clone, Debug, PartialEq)]
pub struct BrokerConfirmation {
    pub token_hash: String,
    pub order_id: OrderId,
    pub match_request_id: MatchRequestId,
    pub broker_id: CompanyId,
    pub step: ConfirmationStep,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// When and how the broker answered; `None` while open.
    pub answered: Option<(DateTime<Utc>, bool)>,
}

/// What replaces a secret link in the copy kept after delivery.
pub const REDACTED_LINK: &str = "[redacted after delivery]";
/// What replaces a secret link where the outbox is shown outside the demo.
pub const HIDDEN_LINK: &str = "[link hidden]";

impl EmailTemplate {
    /// The links the e-mail carries, the main one first.
    pub fn links(&self) -> Vec<&str> {
        match self {
            EmailTemplate::PasswordReset { link, .. }
            | EmailTemplate::AccountActivation { link, .. }
            | EmailTemplate::EmailChanged { link, .. } => vec![link],
            EmailTemplate::TradeConfirmation { confirm_link, decline_link, .. } => vec![confirm_link, decline_link],
            EmailTemplate::OrdersDigest { dashboard_link, .. } => vec![dashboard_link],
        }
    }

    /// The same message with its secret link removed, kept once the e-mail is sent.
    pub fn redacted(&self) -> Self {
        self.with_secret_links(REDACTED_LINK)
    }

    /// The same message with its secret links replaced by [`HIDDEN_LINK`], as the outbox
    /// shows it outside the demo: that a link was sent, never the link.
    pub fn links_hidden(&self) -> Self {
        self.with_secret_links(HIDDEN_LINK)
    }

    /// Whether a link of the message was removed or hidden (it is not a URL any more).
    pub fn has_hidden_links(&self) -> bool {
        self.links().iter().any(|l| !l.starts_with("http"))
    }

    fn with_secret_links(&self, placeholder: &str) -> Self {
        let r = || placeholder.to_owned();
        match self {
            EmailTemplate::PasswordReset { first_name, .. } => {
                EmailTemplate::PasswordReset { first_name: first_name.clone(), link: r() }
            }
            EmailTemplate::AccountActivation { first_name, .. } => {
                EmailTemplate::AccountActivation { first_name: first_name.clone(), link: r() }
            }
            EmailTemplate::TradeConfirmation { step, trade, .. } => EmailTemplate::TradeConfirmation {
                step: *step,
                trade: trade.clone(),
                confirm_link: r(),
                decline_link: r(),
            },
            // Their links are public pages (the dashboard, sign-in): nothing secret to remove.
            EmailTemplate::OrdersDigest { .. } | EmailTemplate::EmailChanged { .. } => self.clone(),
        }
    }
}

/// An e-mail ready to send. The Message-ID is fixed when it is queued, so a resend
/// after a crash carries the same one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutgoingEmail {
    pub message_id: String,
    pub to: String,
    pub template: EmailTemplate,
}

#[derive(Clone, Debug, PartialEq)]
pub struct OutboxMessage {
    pub outbox_id: Uuid,
    pub email: OutgoingEmail,
    pub created_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
    pub attempts: i32,
    pub last_error: Option<String>,
}

/// A durable timer: a job of some kind that becomes due at a time.
#[derive(Clone, Debug, PartialEq)]
pub struct Timer {
    pub timer_id: Uuid,
    pub kind: String,
    pub payload: Value,
    pub due_at: DateTime<Utc>,
    /// At most one pending timer per key (e.g. the recurring clean-up).
    pub dedupe_key: Option<String>,
    pub attempts: i32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ParentOrder {
    pub parent_order_id: ParentOrderId,
    pub company_id: CompanyId,
    pub created_by: UserId,
    pub instrument_id: InstrumentId,
    pub direction: Direction,
    pub quantity: i64,
    pub broker_instructions: Option<String>,
    pub state: ParentState,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A parent order with the sums of its child orders.
#[derive(Clone, Debug, PartialEq)]
pub struct ParentOrderView {
    pub parent: ParentOrder,
    /// Quantity of child orders working, locked for a match or reserved for an RFQ.
    pub working: i64,
    pub matched: i64,
}

/// A resting order a take may reach, with its creator's auto-answer preference.
#[derive(Debug, Clone, PartialEq)]
pub struct FacingOrder {
    pub order: ChildOrder,
    pub auto_accept: Option<AutoAccept>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ChildOrder {
    pub order_id: OrderId,
    pub parent_order_id: ParentOrderId,
    pub company_id: CompanyId,
    pub created_by: UserId,
    pub instrument_id: InstrumentId,
    pub direction: Direction,
    pub state: OrderState,
    pub price: Decimal,
    pub quantity: i64,
    /// The book shows only the instrument's minimum block of it.
    pub iceberg: bool,
    /// After a partial match, whether the rest keeps working (true) or returns to the parent.
    pub residual: bool,
    pub broker_id: CompanyId,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl ChildOrder {
    /// What this order adds to its parent's (working, matched) counters, by its state.
    pub fn parent_counts(&self) -> (i64, i64) {
        (
            if self.state.is_working() { self.quantity } else { 0 },
            if self.state.is_matched() { self.quantity } else { 0 },
        )
    }

    /// Whether it rests in the anonymous book.
    pub fn rests(&self) -> bool {
        self.state == OrderState::Working
    }
}

#[derive(Clone, Debug, Default)]
pub struct OrderFilter {
    /// Always set by the engine: a company sees only its own orders.
    pub company_id: Option<CompanyId>,
    pub instrument_id: Option<InstrumentId>,
    pub created_by: Option<UserId>,
    pub parent_order_id: Option<ParentOrderId>,
    pub states: Vec<OrderState>,
    /// The newest this many at most (lists a client asks for); `None` reads all.
    pub limit: Option<i64>,
}

/// The most orders, or parent orders, one list answers: the newest.
pub const MAX_ORDERS_LISTED: i64 = 1000;

/// Working quantity shown in the book at one price, side and company (icebergs count
/// as the minimum block).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BookRow {
    pub price: Decimal,
    pub direction: Direction,
    pub company_id: CompanyId,
    pub shown: i64,
}

/// A taker's request to match one resting order (DESIGN §4). While `PENDING`, the
/// taker's child order and the locked part of the resting order are `AWAITING_MATCH`.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchRequest {
    pub match_request_id: MatchRequestId,
    pub instrument_id: InstrumentId,
    /// The taker's side.
    pub direction: Direction,
    pub price: Decimal,
    /// The price the taker asked for (a residual works on at it).
    pub take_price: Decimal,
    pub quantity: i64,
    pub requesting_order_id: OrderId,
    pub requesting_company_id: CompanyId,
    pub requesting_user_id: UserId,
    pub responding_order_id: OrderId,
    pub responding_company_id: CompanyId,
    pub responding_user_id: UserId,
    /// Whether the resting order is an iceberg.
    pub iceberg: bool,
    pub state: MatchRequestState,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The RFQ whose accepted quote made this match (ADR 0020); `None` for a take.
    pub rfq_id: Option<RfqId>,
}

/// What a notification tells of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    MatchRequest(MatchRequestId),
    Rfq(RfqId),
}

/// What one user is told about a match request or an RFQ (spec section 3).
#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    pub notification_id: NotificationId,
    pub user_id: UserId,
    pub notification_type: NotificationType,
    /// The state of its match request when it last changed (an RFQ's, in the same
    /// names: `PENDING` while open, then `ACCEPTED`, `TIMED_OUT`, `CANCELLED` or `REJECTED`).
    pub status: MatchRequestState,
    pub instrument_id: InstrumentId,
    pub subject: Subject,
    /// The recipient's side of the match request or RFQ.
    pub role: Party,
    pub read: bool,
    pub archived: bool,
    pub created_at: DateTime<Utc>,
    /// When its match request times out (or timed out).
    pub expired_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A request for quote (DESIGN §4, ADR 0020): `quantity` of the parent, reserved by
/// `order_id` while it is open, asked of the providers its responses name.
#[derive(Clone, Debug, PartialEq)]
pub struct Rfq {
    pub rfq_id: RfqId,
    pub parent_order_id: ParentOrderId,
    /// The child order reserving the quantity (`AWAITING_RFQ_ACCEPTANCE`).
    pub order_id: OrderId,
    pub instrument_id: InstrumentId,
    /// The requester's side.
    pub direction: Direction,
    pub company_id: CompanyId,
    pub user_id: UserId,
    pub quantity: i64,
    pub two_way: bool,
    /// Whether the requester's company is hidden from the providers.
    pub anonymous: bool,
    pub state: RfqState,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// One price and quantity of a quote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuoteSide {
    pub price: Decimal,
    pub quantity: i64,
}

/// One addressed provider's response to an RFQ.
#[derive(Clone, Debug, PartialEq)]
pub struct RfqResponse {
    pub rfq_response_id: RfqResponseId,
    pub rfq_id: RfqId,
    pub company_id: CompanyId,
    pub state: ResponseState,
    /// Who quoted (last), and for which of their brokers.
    pub user_id: Option<UserId>,
    pub broker_id: Option<CompanyId>,
    /// The provider buys at this (the requester sells).
    pub buy: Option<QuoteSide>,
    /// The provider sells at this (the requester buys).
    pub sell: Option<QuoteSide>,
    /// The match an accepted quote made.
    pub match_request_id: Option<MatchRequestId>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A company's FIX session as stored (ADR 0025): the sequence numbers both ways and what
/// a restart needs to carry on.
#[derive(Clone, Debug, PartialEq)]
pub struct FixSession {
    pub company_id: CompanyId,
    pub next_sender_seq: i64,
    pub next_target_seq: i64,
    /// The highest inbound MsgSeqNum acted on in full (0: none).
    pub app_watermark: i64,
    pub reset_owed: bool,
    pub logged_on: bool,
    pub last_message_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    /// The node holding the session, until when unless it renews (ADR 0026).
    pub owner_node: Option<String>,
    pub owner_until: Option<DateTime<Utc>>,
}

/// A company with a FIX CompID and its session, if it ever had one (the sessions screen).
#[derive(Clone, Debug, PartialEq)]
pub struct FixSessionListed {
    pub company_id: CompanyId,
    pub company_name: String,
    pub fix_comp_id: String,
    pub session: Option<FixSession>,
}

/// A message waiting for a company's FIX session, as the engine wrote it (ADR 0030: the
/// gateway turns it into FIX when it sends it).
#[derive(Clone, Debug, PartialEq)]
pub struct FixOutboxMessage {
    /// Also the message's own id on the wire (a trade report's or an execution report's).
    pub fix_outbox_id: String,
    pub company_id: CompanyId,
    pub report: crate::reports::FixReport,
    pub created_at: DateTime<Utc>,
    pub sent_seq: Option<i64>,
}

/// A frame about to be sent, to be filed under its number with the outbox message it
/// carries, if any (ADR 0030).
#[derive(Clone, Debug, PartialEq)]
pub struct FiledFixMessage {
    pub company_id: CompanyId,
    pub seq: i64,
    pub msg_type: String,
    pub frame: Vec<u8>,
    pub fix_outbox_id: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A sequenced message the venue sent, kept for ResendRequests.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredFixMessage {
    pub seq: i64,
    pub msg_type: String,
    pub frame: Vec<u8>,
}

/// What waits in the database, as `/metrics` shows it: undelivered e-mails and FIX
/// messages, due timers, each with its oldest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Backlog {
    pub emails: i64,
    pub oldest_email: Option<DateTime<Utc>>,
    pub fix_messages: i64,
    pub oldest_fix_message: Option<DateTime<Utc>>,
    pub timers_due: i64,
    pub oldest_due: Option<DateTime<Utc>>,
}
