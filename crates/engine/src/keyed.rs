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
    /// `lookup` says whether the key is read before `act` runs or only when it fails.
    pub(crate) async fn once<O, A, R, RF>(
        &self,
        actor: &Actor,
        key: Option<&IdempotencyKey>,
        lookup: Lookup,
        act: A,
        replay: R,
    ) -> Result<O, EngineError>
    where
        A: Future<Output = Result<O, EngineError>>,
        R: FnOnce(Vec<Uuid>) -> RF,
        RF: Future<Output = Result<O, EngineError>>,
    {
        if lookup == Lookup::First
            && let Some(k) = key
            && let Some(rows) = keyed_write(self, actor, k).await?
        {
            return replay(ids(rows)).await;
        }
        let acted = act.await;
        // Losing a race to another run: the database refused the repeat, or what it makes.
        let lost = matches!(acted, Err(EngineError::Repeated | EngineError::Conflict { .. }));
        match (acted, key) {
            (Err(e), Some(k)) if lost || lookup == Lookup::OnRefusal => match keyed_write(self, actor, k).await? {
                Some(rows) => replay(ids(rows)).await,
                None => Err(e),
            },
            (r, _) => r,
        }
    }
}

/// When a keyed write reads its key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// Before it acts: a repeat answers at once.
    First,
    /// Only when it fails (ADR 0059), for a write that records its key in the one
    /// transaction where it writes anything (an order, a take): a repeat of a write that
    /// was made fails, on its checks (the quantity is taken, the order is matched) or on
    /// the key's unique index, and answers what the first run created; a new key costs
    /// no read.
    OnRefusal,
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

/// The entities a keyed write created, in order.
fn ids(rows: Vec<KeyedWrite>) -> Vec<Uuid> {
    rows.into_iter().filter_map(|r| r.entity_id).collect()
}

/// The first entity a keyed write created.
pub(crate) fn first(ids: Vec<Uuid>) -> Result<Uuid, EngineError> {
    ids.into_iter().next().ok_or(EngineError::Repeated)
}
