//! Taking liquidity (DESIGN §4): the dry run, one match request per resting order hit,
//! and what ends a request (the responder's answer or preference, the taker's
//! withdrawal, five minutes, a band move, the close). ADR 0015.

use chrono::{DateTime, Duration, Utc};
use rust_decimal::Decimal;
use serde_json::json;
use std::collections::BTreeSet;
use upstairs_domain::match_request::{MatchRequestEvent, MatchRequestState, transition as mr_transition};
use upstairs_domain::order::{Direction, OrderEvent, OrderState, Quantities, transition};
use upstairs_domain::quantity::{Reachable, allocate, least_fill};
use upstairs_domain::{AutoAccept, CompanyId, FieldError, MatchRequestId, OrderId, ParentOrderId, UserId};
use uuid::Uuid;

use crate::Store;
use crate::confirmations::Confirmations;
use crate::context::{Actor, action_log};
use crate::core::service;
use crate::counterparties::{Counterparties, Party};
use crate::error::{EngineError, StoreError};
use crate::keyed::Lookup;
use crate::model::*;
use crate::notifications::Notifications;
use crate::orders::Orders;
use crate::orders::{not_found_order, not_found_parent};
use crate::ports::*;
use crate::ratelimit::Write;

/// A match request's responder has this long to answer.
pub const RESPONSE_TIME: Duration = Duration::minutes(5);
/// `ACCEPT_WITH_DELAY` and `REJECT_WITH_DELAY` answer after this long.
pub const AUTO_RESPONSE_DELAY: Duration = Duration::seconds(15);
/// Timer kinds.
pub const EXPIRE: &str = "match_request.expire";
pub const AUTO_RESPONSE: &str = "match_request.auto_response";

const NOTHING_MATCHED: &str = "This trade could not be matched due to your trade criteria";

/// A take: `quantity` at `price` or better against the other side of the book.
#[derive(Clone, Debug)]
pub struct Take {
    pub requesting_parent_order_id: ParentOrderId,
    pub price: Decimal,
    pub quantity: upstairs_domain::quantity::Quantity,
    pub requesting_broker_id: CompanyId,
    pub residual: bool,
    pub dry_run: bool,
    /// The client's key for this write (ADR 0023); a dry run writes nothing.
    pub idempotency: Option<IdempotencyKey>,
}

/// One resting order a take would hit.
#[derive(Clone, Debug, PartialEq)]
pub struct Breakdown {
    pub price: Decimal,
    pub quantity: i64,
    pub responding_broker_name: String,
    pub responding_order_iceberg: bool,
}

#[derive(Clone, Debug)]
pub enum TakeOutcome {
    DryRun(Vec<Breakdown>),
    Requested(Vec<MatchRequest>),
}

/// How far a take reaches into a resting order: all of it, or (a preview) what the
/// book shows of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reach {
    Whole,
    Shown,
}

/// Who asked for an answer: a user, or the venue (a timer, the band, the close).
#[derive(Clone, Copy, Debug)]
pub(crate) enum By {
    User(UserId),
    Venue,
}

/// How many of the best resting orders a take reads first (see `Matches::reach`).
const FACING_FIRST: i64 = 16;

/// The party of a resting order, as the counterparty filters see it (ADR 0042).
fn them(f: &FacingOrder) -> Party {
    Party { company: f.order.company_id, user: f.order.created_by }
}

service!(
    /// Taking liquidity: match requests sent, answered, timed out; reliability.
    Matches { counterparties: Counterparties, notifications: Notifications, orders: Orders, confirmations: Confirmations }
);

impl<S: Store> Matches<S> {
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id, parent = %take.requesting_parent_order_id))]
    pub async fn take(&self, actor: &Actor, take: Take) -> Result<TakeOutcome, EngineError> {
        let key = take.idempotency.clone().filter(|_| !take.dry_run);
        self.once(actor, key.as_ref(), Lookup::OnRefusal, self.take_inner(actor, take), |ids| async move {
            let mut requests = Vec::with_capacity(ids.len());
            for id in ids {
                requests.push(self.match_request(actor, upstairs_domain::MatchRequestId(id)).await?);
            }
            Ok(TakeOutcome::Requested(requests))
        })
        .await
    }

    /// The dry run (`dry_run`), or one match request per resting order hit, in one
    /// transaction: the hit part of each resting order is locked (`AWAITING_MATCH`, split
    /// off when partial), the taker gets one `AWAITING_MATCH` child order per request.
    pub(crate) async fn take_inner(&self, actor: &Actor, take: Take) -> Result<TakeOutcome, EngineError> {
        crate::context::require_trade(actor)?;
        if take.dry_run {
            // Throttled like a write (ADR 0027): a preview costs a read of the book.
            let allowed = self.throttle(actor, Write::Previews);
            self.counters.count_preview(actor.user.company_id, allowed.is_ok());
            allowed?;
        } else {
            self.throttle(actor, Write::MatchRequests)?;
        }
        crate::core::again_on_new_block(|| self.take_once(actor, &take)).await
    }

    async fn take_once(&self, actor: &Actor, take: &Take) -> Result<TakeOutcome, EngineError> {
        let now = self.clock.now();
        // The instrument's exchange decides (ADR 0052); read before any transaction
        // opens, as the caches below: a cold cache takes a connection of its own.
        let parent = self.orders.cached_parent(actor, take.requesting_parent_order_id).await?;
        let calendar =
            crate::calendars::calendar_of(self, &*self.cached_instrument(parent.instrument_id).await?).await?;
        calendar.require_open(now)?;
        // Orders placed up to its last close are over, even while its timer has yet to
        // run (a late close after a restart expires them; ADR 0017).
        let day_from = calendar.calendar.previous_close(now);
        let today = |mut facing: Vec<FacingOrder>| {
            facing.retain(|f| day_from.is_none_or(|close| f.order.created_at > close));
            facing
        };
        let filters = self.counterparties.all().await?;
        if take.dry_run {
            let mut tx = self.store.read().await?;
            let view = self.orders.own_parent(&mut tx, actor, take.requesting_parent_order_id, false).await?;
            let instrument = self.check_take(&mut tx, actor, &view, take).await?;
            // A preview tells no more than the book shows (ADR 0027): it allocates against
            // each iceberg's shown block, never its hidden size; the take itself may reach more.
            let direction = view.parent.direction;
            let hit = |side: &[FacingOrder]| self.hits(&instrument, direction, take, side, None, Reach::Shown);
            let (side, mut hits) =
                self.reach(&mut tx, actor, &filters, take, &today, instrument.min_quantity, hit).await?;
            // Rows shown with another block than this node's copy: the copy is stale, and
            // the preview allocates by the block the book shows (ADR 0057).
            if side.iter().any(|f| f.shown != f.order.shown(instrument.min_quantity)) {
                let now = crate::core::instrument_now(&self.caches, &mut tx, &instrument).await?;
                let hit = |side: &[FacingOrder]| self.hits(&now, direction, take, side, None, Reach::Shown);
                hits = self.reach(&mut tx, actor, &filters, take, &today, now.min_quantity, hit).await?.1;
            }
            let mut out = Vec::with_capacity(hits.len());
            for (FacingOrder { order: o, .. }, quantity) in hits {
                out.push(Breakdown {
                    price: o.price.normalize(),
                    quantity,
                    responding_broker_name: self.broker_name(&mut tx, o.company_id, o.broker_id).await?,
                    responding_order_iceberg: o.iceberg,
                });
            }
            return Ok(TakeOutcome::DryRun(out));
        }

        let mut tx = self.store.write().await?;
        let (own, company) = (take.requesting_parent_order_id, actor.user.company_id);
        // One read of the side the take may reach names the parents it would change; they
        // are locked with the taker's own in one order (ids ascending), so two takes, or a
        // take and an answer, never wait on each other in a cycle; then the side is read
        // again under the locks. The checks run on the locked parent.
        let cached = self.instrument_in(&mut tx, parent.instrument_id).await?;
        let hit = |side: &[FacingOrder]| self.hits(&cached, parent.direction, take, side, None, Reach::Whole);
        let (seen, first) = self.reach(&mut tx, actor, &filters, take, &today, cached.min_quantity, hit).await?;
        let mut parents = BTreeSet::new();
        if !seen.is_empty() {
            // A take its terms refuse (broker, price, size, instrument) locks no other
            // firm's parent: only the taker's, whose checks then answer as they always do.
            if let Err(refused) = self.check_terms(&mut tx, actor, &cached, take, i64::MAX).await {
                let locked = tx.lock_take_parents(company, own, &BTreeSet::new()).await?;
                let view = locked.into_iter().next().ok_or_else(not_found_parent)?;
                self.check_take(&mut tx, actor, &view, take).await?;
                return Err(refused);
            }
            parents.extend(first.iter().map(|(o, _)| o.order.parent_order_id));
        }
        let locked = tx.lock_take_parents(company, own, &parents).await?;
        let view = locked.iter().find(|v| v.parent.parent_order_id == own).cloned().ok_or_else(not_found_parent)?;
        let instrument = self.check_take(&mut tx, actor, &view, take).await?;
        self.require_trading(&mut tx, company).await?;
        let direction = view.parent.direction;
        let hit = |side: &[FacingOrder]| self.hits(&instrument, direction, take, side, Some(&parents), Reach::Whole);
        // With one writer at a time (SQLite) nothing changed since the first read.
        let hits = match (parents.is_empty(), self.store.one_writer()) {
            (true, _) => Vec::new(),
            (false, true) => hit(&seen)?,
            (false, false) => self.reach(&mut tx, actor, &filters, take, &today, instrument.min_quantity, hit).await?.1,
        };
        if hits.is_empty() {
            return Err(conflict(NOTHING_MATCHED));
        }
        // What an iceberg taken in part shows of its rest is by the block held before the
        // first order is written (ADR 0057).
        if hits.iter().any(|(f, quantity)| f.order.iceberg && *quantity < f.order.quantity) {
            crate::core::hold_seen_block(&self.caches, &mut tx, &instrument).await?;
        }

        let mut requests = Vec::with_capacity(hits.len());
        let mut changed = Vec::new();
        let mut notices = Vec::new();
        let mut rows = NewRows::default();
        let mut left = take.quantity.get();
        for (FacingOrder { order: resting, auto_accept, .. }, quantity) in hits {
            left -= quantity;
            // The responder's side: the hit part locked, split off when partial.
            let locked = if quantity == resting.quantity {
                let mut o = resting.clone();
                o.state = transition(o.state, OrderEvent::Lock).map_err(internal)?;
                o.updated_at = now;
                tx.update_order(&resting, &o).await?;
                o
            } else {
                let mut rest = resting.clone();
                rest.quantity -= quantity;
                rest.updated_at = now;
                tx.update_order(&resting, &rest).await?;
                changed.push(rest);
                let o = ChildOrder {
                    order_id: OrderId::new(),
                    state: transition(resting.state, OrderEvent::Lock).map_err(internal)?,
                    quantity,
                    created_at: now,
                    updated_at: now,
                    ..resting.clone()
                };
                tx.insert_order(&o).await?;
                o
            };
            let mine = ChildOrder {
                order_id: OrderId::new(),
                parent_order_id: view.parent.parent_order_id,
                company_id: view.parent.company_id,
                created_by: actor.user.user_id,
                instrument_id: instrument.instrument_id,
                direction: view.parent.direction,
                state: OrderState::AwaitingMatch,
                price: resting.price,
                quantity,
                iceberg: false,
                residual: take.residual,
                min_execution: None,
                broker_id: take.requesting_broker_id,
                created_at: now,
                updated_at: now,
            };
            tx.insert_order(&mine).await?;
            let request = MatchRequest {
                match_request_id: MatchRequestId::new(),
                instrument_id: instrument.instrument_id,
                direction: view.parent.direction,
                price: resting.price,
                take_price: take.price.normalize(),
                quantity,
                requesting_order_id: mine.order_id,
                requesting_company_id: mine.company_id,
                requesting_user_id: actor.user.user_id,
                responding_order_id: locked.order_id,
                responding_company_id: locked.company_id,
                responding_user_id: locked.created_by,
                iceberg: resting.iceberg,
                state: MatchRequestState::Pending,
                created_at: now,
                expires_at: now + RESPONSE_TIME,
                updated_at: now,
                rfq_id: None,
                auto_answer: auto_answer(now, auto_accept),
                answered_automatically: false,
                answered_at: None,
                tick_size: instrument.tick_size,
                min_quantity: instrument.min_quantity,
            };
            let notice = crate::notifications::received(&request);
            let log = action_log(
                now,
                Some(actor.user.user_id),
                "match_request",
                Some(request.match_request_id.0),
                "create",
                json!({"price": request.price, "quantity": quantity, "requesting_order_id": mine.order_id,
                       "responding_order_id": locked.order_id}),
            );
            let part = i32::try_from(requests.len()).unwrap_or(i32::MAX);
            rows.timers.extend(answer_timers(&request));
            rows.notifications.push(notice.clone());
            rows.action_logs.push(log.keyed(take.idempotency.as_ref(), part));
            rows.match_requests.push(request.clone());
            notices.push(notice);
            changed.push(locked);
            changed.push(mine);
            requests.push(request);
        }
        // What did not match works at the take price (residual) or stays with the parent.
        if left >= instrument.min_quantity && take.residual {
            let o = ChildOrder {
                order_id: OrderId::new(),
                parent_order_id: view.parent.parent_order_id,
                company_id: view.parent.company_id,
                created_by: actor.user.user_id,
                instrument_id: instrument.instrument_id,
                direction: view.parent.direction,
                state: OrderState::Working,
                price: take.price.normalize(),
                quantity: left,
                iceberg: false,
                residual: true,
                min_execution: None,
                broker_id: take.requesting_broker_id,
                created_at: now,
                updated_at: now,
            };
            tx.insert_order(&o).await?;
            changed.push(o);
        }
        tx.insert_rows(&rows).await?;
        tx.commit().await?;
        self.counters.match_requests.fetch_add(requests.len() as u64, std::sync::atomic::Ordering::Relaxed);
        self.wakes.after(&rows.timers, now);
        self.publish_changes(&changed, locked.into_iter().map(|v| v.parent));
        self.notifications.publish_notifications(notices);
        Ok(TakeOutcome::Requested(requests))
    }

    /// The caller's match requests in `state`, as taker or responder, newest first.
    pub async fn match_requests(
        &self,
        actor: &Actor,
        state: MatchRequestState,
    ) -> Result<Vec<MatchRequest>, EngineError> {
        Ok(self.store.single().await?.match_requests_of_user(actor.user.user_id, state).await?)
    }

    /// One match request the caller takes part in (its company's, else not found).
    pub async fn match_request(&self, actor: &Actor, id: MatchRequestId) -> Result<MatchRequest, EngineError> {
        let m = self.store.single().await?.match_request(id).await?;
        m.filter(|m| party(m, actor.user.company_id)).ok_or_else(not_found)
    }

    /// The responder accepts or rejects; the taker withdraws (`CANCELLED`).
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id, match_request = %id))]
    pub async fn answer_match_request(
        &self,
        actor: &Actor,
        id: MatchRequestId,
        state: MatchRequestState,
    ) -> Result<MatchRequest, EngineError> {
        crate::context::require_trade(actor)?;
        self.throttle(actor, Write::MatchRequests)?;
        let m = self.match_request(actor, id).await?;
        let event = match state {
            MatchRequestState::Accepted | MatchRequestState::Rejected => {
                if m.responding_user_id != actor.user.user_id {
                    return Err(EngineError::Forbidden("Only the recipient can accept or reject it.".into()));
                }
                if state == MatchRequestState::Accepted { MatchRequestEvent::Accept } else { MatchRequestEvent::Reject }
            }
            MatchRequestState::Cancelled => {
                if m.requesting_user_id != actor.user.user_id {
                    return Err(EngineError::Forbidden("Only the requester can withdraw it.".into()));
                }
                MatchRequestEvent::Cancel
            }
            _ => {
                return Err(EngineError::invalid_many(vec![FieldError::new(
                    "state",
                    "Must be ACCEPTED, REJECTED or CANCELLED",
                )]));
            }
        };
        if event != MatchRequestEvent::Cancel {
            crate::calendars::calendar_of(self, &*self.cached_instrument(m.instrument_id).await?)
                .await?
                .require_open(self.clock.now())?;
        }
        self.end_match_request(m, event, By::User(actor.user.user_id)).await
    }

    /// Ends a pending match request by `event` and moves both orders accordingly:
    /// accepted, both `MATCHED`; rejected or timed out, the responder's order cancelled
    /// (its quantity back to its parent) and the taker's working on (residual) or
    /// cancelled; withdrawn or out of the band, the responder's order back in the book
    /// and the taker's cancelled.
    ///
    /// `m` is the request as the caller read it, outside the transaction and before the
    /// parents' locks, so the next order and take on them wait only for the writes (ADR
    /// 0031): the compare-and-sets below refuse a request or an order that changed since.
    pub(crate) async fn end_match_request(
        &self,
        m: MatchRequest,
        event: MatchRequestEvent,
        by: By,
    ) -> Result<MatchRequest, EngineError> {
        let now = self.clock.now();
        let id = m.match_request_id;
        let mut tx = self.store.write().await?;
        let (mine, theirs) = (m.requesting_order_id, m.responding_order_id);
        // A band that moved away from the price since (its sweep of pending requests runs
        // after the move commits) cancels instead of matching.
        let event = match event {
            MatchRequestEvent::Accept => {
                let i = tx.instrument(m.instrument_id).await?.ok_or_else(|| internal("instrument gone"))?;
                // Stale prices hold the accept: the request waits, as the band it needs (ADR 0048).
                if i.is_stale(now) {
                    return Err(crate::context::stale_prices(&i));
                }
                if i.in_band(m.price) { event } else { MatchRequestEvent::PriceOutOfTick }
            }
            e => e,
        };
        let to = mr_transition(m.state, event).map_err(|_| no_longer_pending())?;
        let both = tx.orders_by_id(&[mine, theirs]).await?;
        let find = |id| both.iter().find(|o| o.order_id == id).cloned().ok_or_else(not_found_order);
        let (requesting, responding) = (find(mine)?, find(theirs)?);
        let (for_requesting, for_responding) = match event {
            MatchRequestEvent::Accept => (OrderEvent::Match, OrderEvent::Match),
            MatchRequestEvent::Reject | MatchRequestEvent::TimeOut => {
                (if requesting.residual { OrderEvent::Release } else { OrderEvent::Decline }, OrderEvent::Decline)
            }
            MatchRequestEvent::Cancel | MatchRequestEvent::PriceOutOfTick => (OrderEvent::Decline, OrderEvent::Release),
            MatchRequestEvent::BrokerAccept { .. }
            | MatchRequestEvent::BrokerFill { .. }
            | MatchRequestEvent::BrokerReject => {
                return Err(EngineError::Internal(format!("{event:?} does not end a match request")));
            }
        };
        let mut changes = Vec::with_capacity(2);
        for (before, e) in [(requesting, for_requesting), (responding, for_responding)] {
            let mut after = before.clone();
            // An order the close took meanwhile cannot be answered for (ADR 0017); nor one
            // whose request was ended meanwhile, after the caller read it.
            after.state = match transition(before.state, e) {
                Ok(state) => state,
                Err(_) => {
                    let ended = tx.match_request(id).await?.is_none_or(|now| now.state != m.state);
                    return Err(if ended { no_longer_pending() } else { no_longer_answerable() });
                }
            };
            after.updated_at = now;
            if e == OrderEvent::Release && after.order_id == mine {
                // The taker's residual works on at the price they asked for.
                after.price = m.take_price;
            }
            changes.push((before, after));
        }
        if event == MatchRequestEvent::Accept {
            Confirmations::<S>::read_named(&mut tx, changes.iter().map(|(o, _)| o)).await?;
        }
        let mut locked: Vec<ParentOrder> =
            tx.lock_parents_of_match_request(id).await?.into_iter().map(|v| v.parent).collect();
        tx.update_match_request_state(id, m.state, to, now).await.map_err(|e| match e {
            StoreError::Stale(_) => no_longer_pending(),
            e => e.into(),
        })?;
        // The venue accepts or rejects only by the responder's preference (its timer).
        let automatic =
            matches!(by, By::Venue) && matches!(event, MatchRequestEvent::Accept | MatchRequestEvent::Reject);
        if automatic {
            tx.mark_answered_automatically(id).await?;
        }
        let ended = MatchRequest { state: to, updated_at: now, answered_automatically: automatic, ..m };
        let mut rows = NewRows::default();
        let notices = self.notifications.notify_ended(&mut tx, &mut rows, &ended, event, now).await?;
        // An iceberg back in the book shows by the instrument's block now, held before the
        // first order is written (ADR 0057), not by the request's copy of it.
        if changes.iter().any(|(_, after)| after.shows_by_block()) {
            tx.hold_block(m.instrument_id).await?;
        }
        let mut changed = Vec::with_capacity(2);
        for (before, after) in changes {
            tx.update_order(&before, &after).await.map_err(|e| match e {
                StoreError::Stale(_) => no_longer_answerable(),
                e => e.into(),
            })?;
            changed.push(after);
        }
        if event == MatchRequestEvent::Accept {
            self.confirmations.ask_brokers(&mut tx, &mut rows, &ended, &changed, ConfirmationStep::Accept, now).await?;
            self.orders.settle_parents(&mut tx, &mut locked, now).await?;
        }
        let actor = match by {
            By::User(u) => Some(u),
            By::Venue => None,
        };
        let details = json!({"event": format!("{event:?}")});
        rows.action_logs.push(action_log(now, actor, "match_request", Some(id.0), to.as_str(), details));
        tx.insert_rows(&rows).await?;
        tx.commit().await?;
        if event == MatchRequestEvent::Accept {
            self.counters.matches.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.wakes.after(&rows.timers, now);
        }
        self.publish_changes(&changed, locked);
        self.notifications.publish_notifications(notices);
        Ok(ended)
    }

    /// Runs a match-request timer: expiry, or an auto-response. A request that is no
    /// longer pending has nothing left to do.
    pub(crate) async fn run_match_request_timer(&self, timer: &Timer) -> Result<(), EngineError> {
        let id = timer
            .payload
            .get("match_request_id")
            .and_then(|v| v.as_str())
            .and_then(|s| Uuid::parse_str(s).ok())
            .map(MatchRequestId)
            .ok_or_else(|| EngineError::Internal(format!("{} timer without match_request_id", timer.kind)))?;
        let event = if timer.kind == EXPIRE {
            MatchRequestEvent::TimeOut
        } else if timer.payload.get("accept").and_then(|v| v.as_bool()) == Some(true) {
            MatchRequestEvent::Accept
        } else {
            MatchRequestEvent::Reject
        };
        let Some(m) = self.store.single().await?.match_request(id).await? else { return Ok(()) };
        match self.end_match_request(m, event, By::Venue).await {
            Ok(_) | Err(EngineError::Conflict { .. }) | Err(EngineError::NotFound(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Ends the pending match requests that an order being cancelled takes part in: the
    /// taker cancelling their side withdraws it; the responder cancelling theirs rejects it.
    pub(crate) async fn end_match_requests_of(&self, actor: &Actor, order: OrderId) -> Result<(), EngineError> {
        let pending = self.store.single().await?.match_requests_of_order(order, MatchRequestState::Pending).await?;
        for m in pending {
            let event =
                if m.requesting_order_id == order { MatchRequestEvent::Cancel } else { MatchRequestEvent::Reject };
            match self.end_match_request(m, event, By::User(actor.user.user_id)).await {
                Ok(_) | Err(EngineError::Conflict { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Whether the request's price is inside its instrument's band as stored now.
    /// Ends every pending match request of `instrument` whose price left the band.
    pub(crate) async fn cancel_out_of_band(&self, instrument: &Instrument) -> Result<(), EngineError> {
        let pending = self.store.single().await?.match_requests_in_state(MatchRequestState::Pending).await?;
        for m in
            pending.into_iter().filter(|m| m.instrument_id == instrument.instrument_id && !instrument.in_band(m.price))
        {
            match self.end_match_request(m, MatchRequestEvent::PriceOutOfTick, By::Venue).await {
                Ok(_) | Err(EngineError::Conflict { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The resting orders `take` would hit, with how much of each: the other side at
    /// `take.price` or better, best price then oldest first, never the taker's company,
    /// allocated by the domain's rule ([`allocate`]) against each order's whole quantity
    /// or, for a preview, what the book shows of it. `only` keeps the orders of locked
    /// parents.
    fn hits(
        &self,
        instrument: &Instrument,
        direction: Direction,
        take: &Take,
        working: &[FacingOrder],
        only: Option<&BTreeSet<ParentOrderId>>,
        reach: Reach,
    ) -> Result<Vec<(FacingOrder, i64)>, EngineError> {
        // Orders left outside a moved band cannot match (DESIGN §4).
        let acceptable = |p: Decimal| {
            let in_band = instrument.in_band(p);
            in_band
                && match direction {
                    Direction::Buy => p <= take.price,
                    Direction::Sell => p >= take.price,
                }
        };
        let (wanted, block) = (take.quantity.get(), instrument.min_quantity);
        // The side as read: its prices the book shows, in reach, best first for the
        // taker; then each price's orders, oldest first, until the take is met.
        let mut prices: Vec<Decimal> = working
            .iter()
            .filter(|f| f.shown > 0 && acceptable(f.order.price))
            .map(|f| f.order.price.normalize())
            .collect();
        prices.sort();
        prices.dedup();
        if direction == Direction::Sell {
            prices.reverse();
        }
        let mut candidates: Vec<FacingOrder> = Vec::new();
        let mut hits = Vec::new();
        for price in prices {
            candidates.extend(
                working
                    .iter()
                    .filter(|f| {
                        let o = &f.order;
                        o.price.normalize() == price && only.is_none_or(|locked| locked.contains(&o.parent_order_id))
                    })
                    .cloned(),
            );
            // An order's own minimum execution size counts against its whole quantity,
            // also in a preview, which then leaves out without a word an order the take
            // is too small for (ADR 0041).
            let reachable: Vec<Reachable> = candidates
                .iter()
                .map(|f| Reachable {
                    has: match reach {
                        // What the book shows of it, as its row says (ADR 0057): never
                        // more, whatever block this node has cached.
                        Reach::Shown => f.shown,
                        _ => f.order.quantity,
                    },
                    least: least_fill(block, f.order.min_execution, f.order.quantity),
                })
                .collect();
            hits = allocate(wanted, block, &reachable);
            let taken = hits.iter().try_fold(0i64, |sum, &(_, q)| sum.checked_add(q)).ok_or_else(|| internal("sum"))?;
            if wanted - taken < block {
                break;
            }
        }
        Ok(hits.into_iter().map(|(i, q)| (candidates[i].clone(), q)).collect())
    }

    /// The side `take` may reach, screened for the taker (counterparty filters, `today`'s
    /// orders), and the hits `hit` finds on it: the best [`FACING_FIRST`] orders, and all of
    /// them only when those leave the take unfilled (a take reads what it reaches, not the
    /// depth of the book; `hits` allocates best first, so a first part that fills the take
    /// gets what the whole side would).
    #[allow(clippy::too_many_arguments)]
    async fn reach(
        &self,
        tx: &mut S::Tx,
        actor: &Actor,
        filters: &[CounterpartyFilter],
        take: &Take,
        today: &impl Fn(Vec<FacingOrder>) -> Vec<FacingOrder>,
        block: i64,
        hit: impl Fn(&[FacingOrder]) -> Result<Vec<(FacingOrder, i64)>, EngineError>,
    ) -> Result<(Vec<FacingOrder>, Vec<(FacingOrder, i64)>), EngineError> {
        let mut most = Some(FACING_FIRST);
        loop {
            let read =
                tx.orders_facing(take.requesting_parent_order_id, actor.user.company_id, take.price, most).await?;
            let all = most.is_none_or(|most| (read.len() as i64) < most);
            let side = today(self.counterparties.screen_in(tx, actor, filters, read, them).await?);
            let hits = hit(&side)?;
            let taken: i64 = hits.iter().map(|(_, quantity)| quantity).sum();
            if all || take.quantity.get() - taken < block {
                return Ok((side, hits));
            }
            most = None;
        }
    }

    /// The checks of a take on its (locked) parent: the parent, the broker, price and size.
    async fn check_take(
        &self,
        tx: &mut S::Tx,
        actor: &Actor,
        view: &ParentOrderView,
        take: &Take,
    ) -> Result<std::sync::Arc<Instrument>, EngineError> {
        if view.parent.state != ParentState::Active {
            return Err(conflict("This parent order is no longer active."));
        }
        let instrument = self.instrument_in(tx, view.parent.instrument_id).await?;
        let tradable = Quantities::of(view.parent.quantity, view.working, view.matched).map_or(0, |q| q.tradable);
        self.check_terms(tx, actor, &instrument, take, tradable).await?;
        Ok(instrument)
    }

    /// The checks of a take that its parent's state does not decide: may the actor trade
    /// the instrument, the broker, price and size (up to `tradable`), the instrument active.
    async fn check_terms(
        &self,
        tx: &mut S::Tx,
        actor: &Actor,
        instrument: &Instrument,
        take: &Take,
        tradable: i64,
    ) -> Result<(), EngineError> {
        if !crate::context::may_trade(actor, instrument) {
            return Err(not_found_parent());
        }
        crate::context::require_fresh_prices(tx, instrument, self.clock.now()).await?;
        let mut errors = Vec::new();
        if !self.brokers_in(tx, actor.user.company_id).await?.iter().any(|b| b.company_id == take.requesting_broker_id)
        {
            errors.push(FieldError::new("requesting_broker_id", "Choose one of the eligible brokers"));
        }
        crate::orders::check_price_and_quantity(instrument, take.price, take.quantity, tradable, &mut errors);
        for e in &mut errors {
            if e.field == "limit_price" {
                e.field = "price".into();
            }
        }
        if !errors.is_empty() {
            return Err(EngineError::invalid_many(errors));
        }
        if !instrument.active {
            return Err(conflict("This instrument is not active."));
        }
        Ok(())
    }

    /// The name of a resting order's broker (the dry run shows it, nothing more).
    async fn broker_name(&self, tx: &mut S::Tx, company: CompanyId, broker: CompanyId) -> Result<String, EngineError> {
        let brokers = self.brokers_in(tx, company).await?;
        if let Some(b) = brokers.iter().find(|b| b.company_id == broker) {
            return Ok(b.name.clone());
        }
        let c = tx.company(broker).await?;
        Ok(c.map(|c| c.name).unwrap_or_default())
    }

    /// After a commit: every changed order, the parents (as locked and changed), the book.
    fn publish_changes(&self, orders: &[ChildOrder], parents: impl IntoIterator<Item = ParentOrder>) {
        for o in orders {
            self.publish_order(o);
        }
        for p in parents {
            self.publish_parent(&p);
        }
        if let Some(o) = orders.first() {
            self.publish_book(o.instrument_id);
        }
    }
}

/// Whether `company` takes part in `m`.
pub fn party(m: &MatchRequest, company: CompanyId) -> bool {
    m.requesting_company_id == company || m.responding_company_id == company
}

fn not_found() -> EngineError {
    EngineError::NotFound("Match request not found.".into())
}

fn conflict(detail: &str) -> EngineError {
    EngineError::Conflict { detail: detail.into(), errors: vec![] }
}

fn no_longer_pending() -> EngineError {
    conflict("This match request is no longer pending.")
}

fn no_longer_answerable() -> EngineError {
    conflict("This match request can no longer be answered.")
}

fn internal(e: impl std::fmt::Display) -> EngineError {
    EngineError::Internal(e.to_string())
}

/// When and how the responder's preference `auto` answers a match request sent at `sent`.
fn auto_answer(sent: DateTime<Utc>, auto: Option<AutoAccept>) -> Option<AutoAnswer> {
    match auto? {
        AutoAccept::Instant => Some(AutoAnswer { at: sent, accept: true }),
        AutoAccept::AcceptWithDelay => Some(AutoAnswer { at: sent + AUTO_RESPONSE_DELAY, accept: true }),
        AutoAccept::RejectWithDelay => Some(AutoAnswer { at: sent + AUTO_RESPONSE_DELAY, accept: false }),
    }
}

/// The expiry of a new match request, and the responder's auto-answer when they chose one.
fn answer_timers(m: &MatchRequest) -> Vec<Timer> {
    let payload = |accept: Option<bool>| match accept {
        Some(a) => json!({"match_request_id": m.match_request_id, "accept": a}),
        None => json!({"match_request_id": m.match_request_id}),
    };
    let timer = |kind: &str, due_at, accept| Timer {
        timer_id: Uuid::now_v7(),
        kind: kind.into(),
        payload: payload(accept),
        due_at,
        dedupe_key: None,
        attempts: 0,
    };
    let mut timers = vec![timer(EXPIRE, m.expires_at, None)];
    if let Some(a) = m.auto_answer {
        timers.push(timer(AUTO_RESPONSE, a.at, Some(a.accept)));
    }
    timers
}
