//! Idempotent writes (ADR 0023): a write sent with a client's key records the key on the
//! audit row of each entity it creates, in the same transaction; a retry finds them.

use crate::context::Actor;
use crate::error::EngineError;
use crate::model::{IdempotencyKey, KeyedWrite};
use crate::ports::*;
use crate::{Engine, Store};

pub const KEY_REUSED: &str = "This Idempotency-Key was already used with a different request.";

impl<S: Store> Engine<S> {
    /// What an earlier run of the caller's write with this key created, in order; `None`
    /// when the key is new. A key that came with a different request is refused.
    pub async fn keyed_write(
        &self,
        actor: &Actor,
        key: &IdempotencyKey,
    ) -> Result<Option<Vec<KeyedWrite>>, EngineError> {
        let mut tx = self.store.single().await?;
        let rows = tx.keyed_writes(actor.user.user_id, &key.key).await?;
        if rows.is_empty() {
            return Ok(None);
        }
        if rows.iter().any(|r| r.request_hash != key.request_hash) {
            return Err(EngineError::KeyReused(KEY_REUSED.into()));
        }
        Ok(Some(rows))
    }
}
