//! The audit trail and the idempotency keys it carries.

use chrono::{DateTime, Utc};
use serde_json::Value;
use upstairs_domain::{CompanyId, UserId};
use uuid::Uuid;

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
    /// What kind of thing changed, exactly (`order`, `instrument`, …).
    pub entity: Option<String>,
    /// What happened to it, exactly (`create`, `band`, …).
    pub operation: Option<String>,
    /// The acting user's company.
    pub company_id: Option<CompanyId>,
    /// Logged at or after this time, and before `until`.
    pub from: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
    /// Leave out the band moves the venue made by itself (a market-data feed, the demo's),
    /// so that people's actions stand out; an operator's band move stays.
    pub without_automatic_band_moves: bool,
    pub sort: ActionLogSort,
    /// Newest (or last) first.
    pub descending: bool,
    pub page: i64,
    pub size: i64,
}
