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
        if let Some(k) = key
            && let Some(rows) = keyed_write(self, actor, k).await?
        {
            return replay(ids(rows)).await;
        }
        let lost = |e: &EngineError| matches!(e, EngineError::Repeated | EngineError::Conflict { .. });
        replay_if(self, actor, key, lost, act.await, replay).await
    }

    /// [`Self::once`] for a write that records its key in the one transaction where it
    /// writes anything (an order, a take; ADR 0059): `act` runs first, and the key is looked
    /// up only when it fails. A repeat of a write that was made fails, on its checks (the
    /// quantity is taken, the order is matched) or on the key's unique index, and answers
    /// what the first run created; a new key costs no read.
    pub(crate) async fn once_or_replay<O, A, R, RF>(
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
        replay_if(self, actor, key, |_| true, act.await, replay).await
    }
}

/// What an earlier run of the caller's write with this key created, in order; `None`
/// when the key is new. A key that came with a different request is refused.
async fn keyed_write<S: Store>(
    core: &Core<S>,
    actor: &Actor,
    key: &IdempotencyKey,
) -> Result<Option<Vec<KeyedWrite>>, EngineError> {
    let mut tx = core.store.single().await?;
    let rows = tx.keyed_writes(actor.user.user_id, &key.key).await?;
    if rows.is_empty() {
        return Ok(None);
    }
    if rows.iter().any(|r| r.request_hash != key.request_hash) {
        return Err(EngineError::KeyReused(KEY_REUSED.into()));
    }
    Ok(Some(rows))
}

/// What `act` answered, unless it failed as `lost` says and its key names an earlier
/// run: then what that run created.
async fn replay_if<S: Store, O, R, RF>(
    core: &Core<S>,
    actor: &Actor,
    key: Option<&IdempotencyKey>,
    lost: impl Fn(&EngineError) -> bool,
    acted: Result<O, EngineError>,
    replay: R,
) -> Result<O, EngineError>
where
    R: FnOnce(Vec<Uuid>) -> RF,
    RF: Future<Output = Result<O, EngineError>>,
{
    match (acted, key) {
        (Err(e), Some(k)) if lost(&e) => match keyed_write(core, actor, k).await? {
            Some(rows) => replay(ids(rows)).await,
            None => Err(e),
        },
        (r, _) => r,
    }
}

/// The entities a keyed write created, in order.
fn ids(rows: Vec<KeyedWrite>) -> Vec<Uuid> {
    rows.into_iter().filter_map(|r| r.entity_id).collect()
}

/// The first entity a keyed write created.
pub(crate) fn first(ids: Vec<Uuid>) -> Result<Uuid, EngineError> {
    ids.into_iter().next().ok_or(EngineError::Repeated)
}
