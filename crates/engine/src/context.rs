//! What every use case needs: the acting user, the permission check, list limits and
//! the audit row written in the use case's transaction.

use chrono::{DateTime, Utc};
use upstairs_domain::role::has_permission;
use upstairs_domain::{FieldError, Permission, SessionId, UserId};
use uuid::Uuid;

use crate::error::EngineError;
use crate::model::*;
use crate::ports::*;

/// The signed-in caller of a use case.
#[derive(Clone, Debug)]
pub struct Actor {
    pub user: User,
    pub company_name: String,
    pub session_id: SessionId,
}

impl Actor {
    pub fn can(&self, p: Permission) -> bool {
        has_permission(&self.user.roles, p)
    }

    pub fn view(&self) -> UserView {
        UserView { user: self.user.clone(), company_name: self.company_name.clone() }
    }
}

/// Where a request came from, for rate limits and the audit trail.
#[derive(Clone, Debug, Default)]
pub struct ClientInfo {
    pub address: String,
}

/// A text field left blank means no value.
pub(crate) fn blank_to_none(v: Option<String>) -> Option<String> {
    v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

/// Refuses the call unless the actor holds the permission.
pub(crate) fn require(actor: &Actor, p: Permission) -> Result<(), EngineError> {
    if actor.can(p) { Ok(()) } else { Err(EngineError::Forbidden("You do not have permission to do this.".into())) }
}

/// The largest page size a list answers.
pub(crate) const MAX_PAGE_SIZE: i64 = 500;
/// The last page number a list takes: the row offset `page × size` must fit 64 bits.
pub(crate) const MAX_PAGE: i64 = i64::MAX / MAX_PAGE_SIZE;

/// Checks a page request: a page number below 0 or a size outside 1..=[`MAX_PAGE_SIZE`]
/// is refused rather than read as another page. Returns the page, capped where its
/// offset would no longer fit 64 bits (there is nothing to read past it anyway).
pub(crate) fn checked_page(page: i64, size: i64) -> Result<i64, EngineError> {
    let mut errors = Vec::new();
    if page < 0 {
        errors.push(FieldError::new("page", "The page must be 0 or more"));
    }
    if !(1..=MAX_PAGE_SIZE).contains(&size) {
        errors.push(FieldError::new("size", format!("The size must be from 1 to {MAX_PAGE_SIZE}")));
    }
    if errors.is_empty() { Ok(page.min(MAX_PAGE)) } else { Err(EngineError::invalid_many(errors)) }
}

/// Writes the action-log row of a change, in the transaction that makes it.
pub async fn audit<T: Tx>(
    tx: &mut T,
    now: DateTime<Utc>,
    actor: Option<UserId>,
    entity: &str,
    entity_id: Option<Uuid>,
    operation: &str,
    details: serde_json::Value,
) -> Result<(), EngineError> {
    tx.insert_action_log(&action_log(now, actor, entity, entity_id, operation, details)).await?;
    Ok(())
}

/// An audit row, for a write that stores it itself ([`crate::ports::Store::insert_order_audited`]).
pub(crate) fn action_log(
    now: DateTime<Utc>,
    actor: Option<UserId>,
    entity: &str,
    entity_id: Option<Uuid>,
    operation: &str,
    details: serde_json::Value,
) -> ActionLog {
    ActionLog {
        action_log_id: Uuid::now_v7(),
        entity: entity.to_owned(),
        entity_id,
        operation: operation.to_owned(),
        user_id: actor,
        created_at: now,
        details,
        keyed: None,
    }
}

/// The latest time both databases keep and a reader means: 9999-12-31T23:59:59Z.
pub(crate) fn latest_time() -> DateTime<Utc> {
    "9999-12-31T23:59:59Z".parse::<DateTime<Utc>>().unwrap_or(DateTime::<Utc>::MAX_UTC)
}

pub(crate) fn require_trade(actor: &Actor) -> Result<(), EngineError> {
    if actor.can(Permission::Trade) { Ok(()) } else { Err(EngineError::Forbidden("Your account cannot trade.".into())) }
}

/// Whether the actor may trade this instrument: a sandbox user sandbox instruments
/// only, any other trader live ones only (a colleague's parent order included).
pub(crate) fn may_trade(actor: &Actor, instrument: &Instrument) -> bool {
    instrument.is_sandbox == actor.can(Permission::SandboxOnly)
}

/// The refusal of a take or an accept on an instrument whose prices are stale.
pub(crate) fn stale_prices(i: &Instrument) -> EngineError {
    EngineError::Conflict {
        detail: format!(
            "Prices for {} are stale: no exchange price since {} UTC. Trading resumes when prices return.",
            i.name,
            i.band_seen_at.format("%H:%M:%S")
        ),
        errors: vec![],
    }
}

/// Refuses a trade on an instrument whose prices are stale at `now` (ADR 0048). A cached
/// copy may hold an older price time than the store (the feed's price that leaves the
/// band as it was drops no cache): one that looks stale is read again before it refuses.
pub(crate) async fn require_fresh_prices<T: Tx>(
    tx: &mut T,
    i: &Instrument,
    now: DateTime<Utc>,
) -> Result<(), EngineError> {
    if !i.is_stale(now) {
        return Ok(());
    }
    match tx.instrument(i.instrument_id).await? {
        Some(fresh) if fresh.is_stale(now) => Err(stale_prices(&fresh)),
        _ => Ok(()),
    }
}
