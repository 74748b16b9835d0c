//! Durable timers.

use chrono::{DateTime, Utc};
use serde_json::Value;
use uuid::Uuid;

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
