//! The kill switch (MiFID II RTS 7's kill function; DESIGN section 4, ADR 0021): a venue
//! admin stops a company, or a company admin their own. Its working child orders, pending
//! match requests (either side), open RFQs and open quotes end at once; new orders are
//! refused until a venue admin releases it.
//!
//! The stop is committed first, so that nothing new starts; then the sweep ends what is
//! open, one use case at a time, each telling the counterparties as it does on its own.
//! A durable timer written with the stop runs the sweep again if the process dies
//! half-way; the sweep is idempotent.

use chrono::Duration;
use serde_json::json;
use std::collections::BTreeMap;
use upstairs_domain::match_request::{MatchRequestEvent, MatchRequestState};
use upstairs_domain::order::{OrderEvent, OrderState, transition};
use upstairs_domain::rfq::{ResponseEvent, ResponseState, RfqEvent, RfqState};
use upstairs_domain::{CompanyId, Permission, UserId};
use uuid::Uuid;

use crate::Store;
use crate::context::{Actor, audit, require};
use crate::core::service;
use crate::error::EngineError;
use crate::events::Event;
use crate::matches::By;
use crate::matches::Matches;
use crate::model::*;
use crate::orders::not_found_order;
use crate::ports::*;
use crate::rfqs::Rfqs;

/// The timer kind of the sweep's durable backstop.
pub const KILL_SWEEP: &str = "kill_switch.sweep";

/// How long the inline sweep has before its backstop timer runs it again.
const BACKSTOP_AFTER: i64 = 2;

/// What one sweep ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Swept {
    pub rfqs: usize,
    pub quotes: usize,
    pub match_requests: usize,
    pub orders: usize,
}

fn not_found_company() -> EngineError {
    EngineError::NotFound("Company not found.".into())
}

service!(
    /// The kill switch: a firm stopped, its orders swept, released.
    KillSwitch { matches: Matches, rfqs: Rfqs }
);

impl<S: Store> KillSwitch<S> {
    /// Stops a company's trading and ends everything it has open. Pressing it again
    /// keeps the first stop's time and sweeps again.
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id, company = %id))]
    pub async fn stop_company(&self, actor: &Actor, id: CompanyId) -> Result<Company, EngineError> {
        if !actor.can(Permission::Admin) {
            require(actor, Permission::StopOwnCompany)?;
            if actor.user.company_id != id {
                return Err(not_found_company());
            }
        }
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let mut company = tx.company(id).await?.ok_or_else(not_found_company)?;
        let timer = Timer {
            timer_id: Uuid::now_v7(),
            kind: KILL_SWEEP.into(),
            payload: json!({"company_id": id, "by": actor.user.user_id}),
            due_at: now + Duration::minutes(BACKSTOP_AFTER),
            dedupe_key: Some(format!("{KILL_SWEEP}:{id}")),
            attempts: 0,
        };
        tx.insert_timer(&timer).await?;
        if company.trading_stopped_at.is_none() {
            tx.set_trading_stopped(id, Some(now), now).await?;
            audit(
                &mut tx,
                now,
                Some(actor.user.user_id),
                "company",
                Some(id.0),
                "kill_switch_on",
                json!({"company": company.name, "by_venue_admin": actor.can(Permission::Admin)}),
            )
            .await?;
            company.trading_stopped_at = Some(now);
            company.updated_at = now;
        }
        tx.commit().await?;
        self.publish(Event::CompanyChanged { company_id: id });
        let swept = self.sweep_stopped_company(id, Some(actor.user.user_id)).await?;
        tracing::info!(?swept, "kill switch: company stopped");
        // Done inline: the backstop has nothing left to do.
        let mut tx = self.store.write().await?;
        tx.delete_timer(timer.timer_id).await?;
        tx.commit().await?;
        Ok(company)
    }

    /// Lets a stopped company trade again (venue admins only). What the stop ended stays
    /// ended.
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id, company = %id))]
    pub async fn release_company(&self, actor: &Actor, id: CompanyId) -> Result<Company, EngineError> {
        require(actor, Permission::Admin)?;
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let mut company = tx.company(id).await?.ok_or_else(not_found_company)?;
        let Some(since) = company.trading_stopped_at else {
            return Err(EngineError::Conflict {
                detail: "This company's trading is not stopped.".into(),
                errors: vec![],
            });
        };
        tx.set_trading_stopped(id, None, now).await?;
        audit(
            &mut tx,
            now,
            Some(actor.user.user_id),
            "company",
            Some(id.0),
            "kill_switch_off",
            json!({"company": company.name, "stopped_at": since}),
        )
        .await?;
        tx.commit().await?;
        self.publish(Event::CompanyChanged { company_id: id });
        company.trading_stopped_at = None;
        company.updated_at = now;
        Ok(company)
    }

    /// Since when the caller's company is stopped, if it is (what its traders are shown).
    pub async fn own_trading_stopped_since(
        &self,
        actor: &Actor,
    ) -> Result<Option<chrono::DateTime<chrono::Utc>>, EngineError> {
        Ok(self.store.single().await?.trading_stopped_since(actor.user.company_id).await?)
    }

    /// Runs the sweep's backstop timer.
    pub(crate) async fn run_kill_sweep_timer(&self, timer: &Timer) -> Result<(), EngineError> {
        let uuid = |key: &str| timer.payload.get(key).and_then(|v| v.as_str()).and_then(|s| Uuid::parse_str(s).ok());
        let id = uuid("company_id")
            .map(CompanyId)
            .ok_or_else(|| EngineError::Internal(format!("{} timer without company_id", timer.kind)))?;
        if self.store.single().await?.trading_stopped_since(id).await?.is_some() {
            let swept = self.sweep_stopped_company(id, uuid("by").map(UserId)).await?;
            tracing::info!(?swept, company = %id, "kill switch: backstop sweep");
        }
        Ok(())
    }

    /// Ends everything a stopped company has open; each step tolerates a race lost to
    /// another writer (the thing ended meanwhile) and the whole runs until a pass finds
    /// nothing left.
    async fn sweep_stopped_company(&self, id: CompanyId, by: Option<UserId>) -> Result<Swept, EngineError> {
        // Wait for the company's order writes in flight: each holds its parent's lock from
        // before it read the stop until it commits (ADR 0021). After this, every read sees them.
        let mut tx = self.store.write().await?;
        tx.lock_parent_orders_of_company(id).await?;
        tx.commit().await?;
        let mut total = Swept::default();
        for _ in 0..3 {
            let pass = self.sweep_pass(id, by).await?;
            total.rfqs += pass.rfqs;
            total.quotes += pass.quotes;
            total.match_requests += pass.match_requests;
            total.orders += pass.orders;
            if pass == Swept::default() {
                break;
            }
        }
        Ok(total)
    }

    async fn sweep_pass(&self, id: CompanyId, by: Option<UserId>) -> Result<Swept, EngineError> {
        let mut swept = Swept::default();
        let now = self.clock.now();
        let tolerated = |r: Result<(), EngineError>, n: &mut usize| match r {
            Ok(()) => {
                *n += 1;
                Ok(())
            }
            Err(EngineError::Conflict { .. } | EngineError::NotFound(_)) => Ok(()),
            Err(e) => Err(e),
        };
        // Its own RFQs: withdrawn, the reserved quantity back to the parent, providers told.
        let rfqs = self.store.single().await?.rfqs_of_company(id, RfqState::Open, None).await?;
        for r in rfqs {
            let done = self.rfqs.end_rfq(r.rfq_id, RfqEvent::Cancel, by, now).await.map(|_| ());
            tolerated(done, &mut swept.rfqs)?;
        }
        // Its quotes to other firms' RFQs: declined, the requesters told.
        let open = [ResponseState::AwaitingResponse, ResponseState::Responded];
        let responses = self.store.single().await?.rfq_responses_of_company(id, &open, None, None, i64::MAX).await?;
        for before in responses {
            let done = self.withdraw_response(before, by).await;
            tolerated(done, &mut swept.quotes)?;
        }
        // Pending match requests on either side: withdrawn as the taker, rejected as the
        // responder; the counterparty's order works on and they are told.
        let pending = self.store.single().await?.match_requests_in_state(MatchRequestState::Pending).await?;
        let who = by.map_or(By::Venue, By::User);
        for m in pending.into_iter().filter(|m| crate::matches::party(m, id)) {
            let event =
                if m.requesting_company_id == id { MatchRequestEvent::Cancel } else { MatchRequestEvent::Reject };
            let done = self.matches.end_match_request(m, event, who).await.map(|_| ());
            tolerated(done, &mut swept.match_requests)?;
        }
        swept.orders = self.cancel_working_orders_of(id, by).await?;
        Ok(swept)
    }

    /// Withdraws one open response of a stopped provider (a decline, the requester told).
    async fn withdraw_response(&self, seen: RfqResponse, by: Option<UserId>) -> Result<(), EngineError> {
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let Some(rfq) = tx.rfq(seen.rfq_id).await? else { return Ok(()) };
        if rfq.state != RfqState::Open {
            return Err(EngineError::Conflict { detail: "The RFQ ended meanwhile.".into(), errors: vec![] });
        }
        let before = tx
            .rfq_responses(&[seen.rfq_id])
            .await?
            .into_iter()
            .find(|r| r.rfq_response_id == seen.rfq_response_id)
            .ok_or_else(|| EngineError::NotFound("Response not found.".into()))?;
        let after = RfqResponse { updated_at: now, ..before.clone() };
        self.rfqs.record_answer(tx, &rfq, (before, after), ResponseEvent::Decline, by, now, None).await.map(|_| ())
    }

    /// Cancels a stopped company's working child orders, their quantity back to their
    /// parents, in one transaction under the parents' locks. Returns how many.
    async fn cancel_working_orders_of(&self, id: CompanyId, by: Option<UserId>) -> Result<usize, EngineError> {
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let filter = OrderFilter { company_id: Some(id), states: vec![OrderState::Working], ..Default::default() };
        let seen = tx.orders(&filter).await?;
        let mut by_parent: BTreeMap<_, Vec<_>> = BTreeMap::new();
        for o in seen {
            by_parent.entry(o.parent_order_id).or_default().push(o.order_id);
        }
        let mut cancelled = Vec::new();
        // Every parent in one statement (ids ascending) before the first order is written,
        // as a take and an answer lock theirs: none waits for a parent while holding an
        // order or a book level that another writer, or a change of block, needs (ADR 0057).
        let ids = by_parent.keys().copied().collect();
        let parents: Vec<_> = tx.lock_parent_orders(&ids).await?.into_iter().map(|v| v.parent).collect();
        for orders in by_parent.into_values() {
            for order in orders {
                let before = tx.order(order).await?.ok_or_else(not_found_order)?;
                // Only what still works: what the steps above ended is not cancelled twice.
                if before.state != OrderState::Working {
                    continue;
                }
                let state =
                    transition(before.state, OrderEvent::Cancel).map_err(|e| EngineError::Internal(e.to_string()))?;
                let after = ChildOrder { state, updated_at: now, ..before.clone() };
                tx.update_order(&before, &after).await?;
                cancelled.push(after);
            }
        }
        if cancelled.is_empty() {
            return Ok(0);
        }
        audit(
            &mut tx,
            now,
            by,
            "order",
            None,
            "kill_switch_cancel",
            json!({"company_id": id, "orders": cancelled.iter().map(|o| o.order_id).collect::<Vec<_>>()}),
        )
        .await?;
        tx.commit().await?;
        let mut instruments: Vec<_> = cancelled.iter().map(|o| o.instrument_id).collect();
        instruments.sort();
        instruments.dedup();
        for o in &cancelled {
            self.publish_order(o);
        }
        for p in &parents {
            self.publish_parent(p);
        }
        for i in instruments {
            self.publish_book(i);
        }
        Ok(cancelled.len())
    }
}
