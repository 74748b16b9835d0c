//! Idempotent writes (ADR 0023): a write sent with a client's key records the key on the
//! audit row of each entity it creates, in the same transaction; a retry finds them.

use std::future::Future;
use upstairs_domain::{CompanyId, InstrumentId, OrderId, ParentOrderId, RfqId, RfqResponseId, UserId};
use uuid::Uuid;

use crate::context::Actor;
use crate::error::EngineError;
use crate::matches::{Take, TakeOutcome};
use crate::model::*;
use crate::newsletters::NewNewsletter;
use crate::orders::{NewOrder, NewParentOrder, OrderDetail, ParentOrderDetail};
use crate::ports::*;
use crate::reference::{CompanyChanges, InstrumentChanges};
use crate::rfqs::{Answer, NewRfq, RfqView};
use crate::users::NewUser;
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

    /// Runs a keyed write once. A key seen before answers what its first run created, read
    /// back by `replay` (the ids in the order created); a new key or none runs `act`. Two
    /// runs racing with one key: the database lets one write, the other replays it (also
    /// when the loser first trips over what the winner made, e.g. a user's e-mail: 409).
    async fn once<O, A, R, RF>(
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
fn first(ids: Vec<Uuid>) -> Result<Uuid, EngineError> {
    ids.into_iter().next().ok_or(EngineError::Repeated)
}

/// The writes a client may retry with an `Idempotency-Key`: each runs once per key, a
/// retry answers what the first run created (ADR 0023). One engine call per request.
impl<S: Store> Engine<S> {
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id, parent = %take.requesting_parent_order_id))]
    pub async fn take(&self, actor: &Actor, take: Take) -> Result<TakeOutcome, EngineError> {
        let key = take.idempotency.clone().filter(|_| !take.dry_run);
        self.once(actor, key.as_ref(), self.take_inner(actor, take), |ids| async move {
            let mut requests = Vec::with_capacity(ids.len());
            for id in ids {
                requests.push(self.match_request(actor, upstairs_domain::MatchRequestId(id)).await?);
            }
            Ok(TakeOutcome::Requested(requests))
        })
        .await
    }

    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id))]
    pub async fn create_parent_order(
        &self,
        actor: &Actor,
        input: NewParentOrder,
    ) -> Result<ParentOrderDetail, EngineError> {
        let key = input.idempotency.clone();
        self.once(actor, key.as_ref(), self.create_parent_order_inner(actor, input), |ids| async move {
            self.parent_order(actor, ParentOrderId(first(ids)?)).await
        })
        .await
    }

    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id, parent = %input.parent_order_id))]
    pub async fn create_order(&self, actor: &Actor, input: NewOrder) -> Result<OrderDetail, EngineError> {
        let key = input.idempotency.clone();
        self.once(actor, key.as_ref(), self.create_order_inner(actor, input), |ids| async move {
            self.order(actor, OrderId(first(ids)?)).await
        })
        .await
    }

    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id, parent = %input.parent_order_id))]
    pub async fn create_rfq(&self, actor: &Actor, input: NewRfq) -> Result<RfqView, EngineError> {
        let key = input.idempotency.clone();
        self.once(actor, key.as_ref(), self.create_rfq_inner(actor, input), |ids| async move {
            self.rfq(actor, RfqId(first(ids)?)).await
        })
        .await
    }

    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id, rfq = %id))]
    pub async fn answer_rfq(
        &self,
        actor: &Actor,
        id: RfqId,
        answer: Answer,
        key: Option<IdempotencyKey>,
    ) -> Result<RfqResponse, EngineError> {
        let k = key.clone();
        self.once(actor, k.as_ref(), self.answer_rfq_inner(actor, id, answer, key), |ids| async move {
            self.rfq_response_of(actor, id, RfqResponseId(first(ids)?)).await
        })
        .await
    }

    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id))]
    pub async fn create_company(
        &self,
        actor: &Actor,
        changes: CompanyChanges,
        key: Option<&IdempotencyKey>,
    ) -> Result<Company, EngineError> {
        self.once(actor, key, self.create_company_inner(actor, changes, key), |ids| async move {
            self.company(actor, CompanyId(first(ids)?)).await
        })
        .await
    }

    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id))]
    pub async fn create_instrument(
        &self,
        actor: &Actor,
        changes: InstrumentChanges,
        key: Option<&IdempotencyKey>,
    ) -> Result<Instrument, EngineError> {
        self.once(actor, key, self.create_instrument_inner(actor, changes, key), |ids| async move {
            self.instrument(actor, InstrumentId(first(ids)?)).await
        })
        .await
    }

    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id))]
    pub async fn create_user(
        &self,
        actor: &Actor,
        input: NewUser,
        key: Option<&IdempotencyKey>,
    ) -> Result<UserView, EngineError> {
        self.once(actor, key, self.create_user_inner(actor, input, key), |ids| async move {
            self.user(actor, UserId(first(ids)?)).await
        })
        .await
    }

    pub async fn create_newsletter(
        &self,
        actor: &Actor,
        input: NewNewsletter,
        key: Option<&IdempotencyKey>,
    ) -> Result<Newsletter, EngineError> {
        self.once(actor, key, self.create_newsletter_inner(actor, input, key), |ids| async move {
            self.newsletter(actor, first(ids)?).await
        })
        .await
    }
}
