//! The keyed writes of the features still written on `Engine` (ADR 0023, 0032); each
//! moves beside its use case when its feature gets its own service.

use upstairs_domain::{CompanyId, InstrumentId, OrderId, ParentOrderId, RfqId, RfqResponseId};

use crate::context::Actor;
use crate::error::EngineError;
use crate::keyed::first;
use crate::matches::{Take, TakeOutcome};
use crate::model::*;
use crate::orders::{NewOrder, NewParentOrder, OrderDetail, ParentOrderDetail};
use crate::reference::{CompanyChanges, InstrumentChanges};
use crate::rfqs::{Answer, NewRfq, RfqView};
use crate::{Engine, Store};

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
}
