//! Idempotent writes (ADR 0023): a write sent with a client's key records the key on the
//! audit row of each entity it creates, in the same transaction; a retry finds them.
//! Part of the shared core (ADR 0032): each feature runs its keyed writes through it.

use std::future::Future;
use uuid::Uuid;

use crate::context::Actor;
use crate::error::EngineError;
use crate::model::*;
use crate::ports::*;
use crate::{Core, Store};

pub const KEY_REUSED: &str = "This Idempotency-Key was already used with a different request.";

impl<S: Store> Core<S> {
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

    /// Runs a keyed write once. A key seen before answers what its first run created, read
    /// back by `replay` (the ids in the order created); a new key or none runs `act`. Two
    /// runs racing with one key: the database lets one write, the other replays it (also
    /// when the loser first trips over what the winner made, e.g. a user's e-mail: 409).
    pub(crate) async fn once<O, A, R, RF>(
        &self,
        actor: &Actor,
        key: Option<&IdempotencyKey>,
        act: A,
        replay: R,
    ) -> Result<O, EngineError>
    where
        A: Future<Output = Result<O, EngineError>>,
        R: FnOnce(Vec<Uuid>) -> RF,
        RF: Future<Output = Result<O, EngineError>>,
    {
        let ids = |rows: Vec<KeyedWrite>| rows.into_iter().filter_map(|r| r.entity_id).collect::<Vec<_>>();
        if let Some(k) = key
            && let Some(rows) = self.keyed_write(actor, k).await?
        {
            return replay(ids(rows)).await;
        }
        match act.await {
            Err(e @ (EngineError::Repeated | EngineError::Conflict { .. })) => {
                let rows = match key {
                    Some(k) => self.keyed_write(actor, k).await?,
                    None => None,
                };
                replay(ids(rows.ok_or(e)?)).await
            }
            r => r,
        }
    }
}

/// The first entity a keyed write created.
pub(crate) fn first(ids: Vec<Uuid>) -> Result<Uuid, EngineError> {
    ids.into_iter().next().ok_or(EngineError::Repeated)
}
