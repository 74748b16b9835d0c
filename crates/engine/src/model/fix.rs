//! FIX sessions, their outbox and their filed frames.

use chrono::{DateTime, Utc};
use upstairs_domain::CompanyId;

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

/// The market-data session as the node holding it last said (ADR 0049), for the FIX
/// sessions screen.
#[derive(Clone, Debug, PartialEq)]
pub struct MarketDataSession {
    pub node_id: String,
    /// The provider's FIX acceptor, `host:port`.
    pub provider: String,
    pub sender_comp_id: String,
    pub target_comp_id: String,
    pub logged_on: bool,
    /// When it last logged on or off.
    pub since: DateTime<Utc>,
    /// When the provider's last price came; none since it logged on.
    pub last_price_at: Option<DateTime<Utc>>,
    /// The symbols it subscribed to.
    pub symbols: i32,
    pub updated_at: DateTime<Utc>,
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
    /// Instruments the stale-price guard holds (ADR 0048).
    pub stale_instruments: i64,
}
