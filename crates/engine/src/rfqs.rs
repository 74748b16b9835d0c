//! Requests for quote (DESIGN §4, ADR 0020): the requester reserves a quantity of a
//! parent order and asks chosen liquidity providers for a price; each provider quotes
//! (again, until acceptance) or declines; the requester accepts one quote before the
//! deadline, which makes a match like a take's and goes to both brokers; the deadline,
//! the close or the requester's withdrawal end it otherwise and free the quantity.

use chrono::{DateTime, Duration, Utc};
use serde_json::json;
use std::collections::HashMap;
use upstairs_domain::match_request::MatchRequestState;
use upstairs_domain::notification::{NotificationType, Party};
use upstairs_domain::order::{Direction, OrderEvent, OrderState, Quantities, transition as order_transition};
use upstairs_domain::price::on_tick;
use upstairs_domain::rfq::{
    DEADLINE_MINUTES, ResponseEvent, ResponseState, RfqEvent, RfqState, response_transition, transition,
};
use upstairs_domain::{
    CompanyId, FieldError, InstrumentId, MatchRequestId, NotificationId, OrderId, ParentOrderId, Permission, RfqId,
    RfqResponseId, UserId,
};
use uuid::Uuid;

use crate::Store;
use crate::calendars::calendar_for;
use crate::confirmations::Confirmations;
use crate::context::{Actor, action_log, audit};
use crate::core::service;
use crate::counterparties::Counterparties;
use crate::error::EngineError;
use crate::events::Event;
use crate::keyed::{Lookup, first};
use crate::model::*;
use crate::notifications::Notifications;
use crate::orders::Orders;
use crate::orders::not_found_parent;
use crate::ports::*;
use crate::ratelimit::Write;

/// Timer kind: an RFQ's deadline.
pub const EXPIRE: &str = "rfq.expire";
/// The most responses a provider's list returns.
pub const MAX_LISTED: i64 = 200;
/// An accept naming a quote the provider has changed since.
pub const QUOTE_CHANGED: &str = "The quote has changed: check the new price and accept again.";
/// An accept of a quote the band has moved away from.
pub const QUOTE_OUT_OF_BAND: &str = "The market has moved away from this quote: ask for a new one.";

/// What the requester asks.
#[derive(Clone, Debug)]
pub struct NewRfq {
    pub parent_order_id: ParentOrderId,
    pub quantity: upstairs_domain::quantity::Quantity,
    pub two_way: bool,
    pub anonymous: bool,
    pub liquidity_provider_ids: Vec<CompanyId>,
    pub expires_in_seconds: i64,
    /// The requester's broker for the trade; the company's default when not given.
    pub broker_id: Option<CompanyId>,
    /// The client's key for this write (ADR 0023).
    pub idempotency: Option<IdempotencyKey>,
}

/// A provider's answer.
#[derive(Clone, Debug)]
pub enum Answer {
    /// A price and quantity on each side asked for: `buy` is the provider buying (the
    /// requester sells), `sell` the provider selling.
    Quote {
        buy: Option<QuoteSide>,
        sell: Option<QuoteSide>,
        broker_id: Option<CompanyId>,
    },
    Decline,
}

/// An RFQ as its requester sees it: every response, with its provider's name.
#[derive(Clone, Debug)]
pub struct RfqView {
    pub rfq: Rfq,
    pub responses: Vec<(RfqResponse, String)>,
}

/// An RFQ as an addressed provider sees it: never the requester's parent, order or user;
/// their company only when the RFQ is not anonymous; the direction only of a one-way RFQ.
#[derive(Clone, Debug)]
pub struct IncomingRfq {
    pub rfq_id: RfqId,
    pub instrument_id: InstrumentId,
    /// The requester's side; `None` for a two-way RFQ, which asks both without saying.
    pub direction: Option<Direction>,
    pub quantity: i64,
    pub two_way: bool,
    pub requester_name: Option<String>,
    pub state: RfqState,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// The provider's own response.
    pub response: RfqResponse,
}

service!(
    /// Requests for quotes: sent, answered, accepted, ended.
    Rfqs { counterparties: Counterparties, notifications: Notifications, orders: Orders, confirmations: Confirmations }
);

impl<S: Store> Rfqs<S> {
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id, parent = %input.parent_order_id))]
    pub async fn create_rfq(&self, actor: &Actor, input: NewRfq) -> Result<RfqView, EngineError> {
        let key = input.idempotency.clone();
        self.once(actor, key.as_ref(), Lookup::First, self.create_rfq_inner(actor, input), |ids| async move {
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
        self.once(actor, k.as_ref(), Lookup::First, self.answer_rfq_inner(actor, id, answer, key), |ids| async move {
            self.rfq_response_of(actor, id, RfqResponseId(first(ids)?)).await
        })
        .await
    }

    /// Sends an RFQ: its quantity reserved from the parent by one child order
    /// (`AWAITING_RFQ_ACCEPTANCE`), one response per provider awaiting it, the deadline
    /// timer, and a notification to every trader of each provider.
    pub(crate) async fn create_rfq_inner(&self, actor: &Actor, input: NewRfq) -> Result<RfqView, EngineError> {
        crate::context::require_trade(actor)?;
        self.throttle(actor, Write::Rfqs)?;
        let now = self.clock.now();
        let parent = self.orders.cached_parent(actor, input.parent_order_id).await?;
        let instrument = self.cached_instrument(parent.instrument_id).await?;
        crate::calendars::calendar_of(self, &instrument).await?.require_open(now)?;
        if !crate::context::may_trade(actor, &instrument) {
            return Err(crate::orders::not_found_parent());
        }
        let mut errors = Vec::new();
        let quantity = input.quantity.get();
        if quantity < instrument.min_quantity {
            errors.push(FieldError::new("quantity", format!("Min block size: {}", instrument.min_quantity)));
        } else if quantity > parent.quantity {
            errors.push(FieldError::new("quantity", "Exceeds available quantity"));
        }
        let minutes = input.expires_in_seconds / 60;
        if input.expires_in_seconds % 60 != 0 || !DEADLINE_MINUTES.contains(&minutes) {
            errors.push(FieldError::new("expires_in_seconds", "Must be a whole number of minutes from 1 to 15"));
        }
        let mut providers = input.liquidity_provider_ids.clone();
        providers.sort();
        providers.dedup();
        // A provider the counterparty filters screen out is as unknown as one that is not
        // a provider (ADR 0042).
        let known: Vec<Company> = self.counterparties.providers(actor).await?;
        if providers.is_empty() {
            errors.push(FieldError::new("liquidity_provider_ids", "Choose at least one liquidity provider"));
        } else if providers.iter().any(|p| *p == actor.user.company_id || !known.iter().any(|k| k.company_id == *p)) {
            errors.push(FieldError::new("liquidity_provider_ids", "Choose liquidity providers from the list"));
        }
        let broker = self
            .trade_broker(&mut self.store.single().await?, actor.user.company_id, input.broker_id, &mut errors)
            .await?;
        if !errors.is_empty() {
            return Err(EngineError::invalid_many(errors));
        }
        if !instrument.active {
            return Err(conflict("This instrument is not active."));
        }

        let mut tx = self.store.write().await?;
        let view = self.orders.own_parent(&mut tx, actor, input.parent_order_id, true).await?;
        if view.parent.state != ParentState::Active {
            return Err(conflict("This parent order is no longer active."));
        }
        self.require_trading(&mut tx, actor.user.company_id).await?;
        let tradable = Quantities::of(view.parent.quantity, view.working, view.matched).map_or(0, |q| q.tradable);
        if quantity > tradable {
            return Err(EngineError::invalid_many(vec![FieldError::new("quantity", "Exceeds available quantity")]));
        }
        let order = ChildOrder {
            order_id: OrderId::new(),
            parent_order_id: view.parent.parent_order_id,
            company_id: view.parent.company_id,
            created_by: actor.user.user_id,
            instrument_id: instrument.instrument_id,
            direction: view.parent.direction,
            state: OrderState::AwaitingRfqAcceptance,
            // No price until a quote is accepted; the order never rests.
            price: rust_decimal::Decimal::ZERO,
            quantity,
            iceberg: false,
            residual: false,
            min_execution: None,
            broker_id: broker,
            created_at: now,
            updated_at: now,
        };
        tx.insert_order(&order).await?;
        let rfq = Rfq {
            rfq_id: RfqId::new(),
            parent_order_id: view.parent.parent_order_id,
            order_id: order.order_id,
            instrument_id: instrument.instrument_id,
            direction: view.parent.direction,
            company_id: actor.user.company_id,
            user_id: actor.user.user_id,
            quantity,
            two_way: input.two_way,
            anonymous: input.anonymous,
            state: RfqState::Open,
            created_at: now,
            expires_at: now + Duration::seconds(input.expires_in_seconds),
            updated_at: now,
        };
        tx.insert_rfq(&rfq).await?;
        let mut responses = Vec::with_capacity(providers.len());
        // The providers' traders' notices, the deadline and the audit row: one write.
        let mut rows = NewRows::default();
        for p in &providers {
            let r = RfqResponse {
                rfq_response_id: RfqResponseId::new(),
                rfq_id: rfq.rfq_id,
                company_id: *p,
                state: ResponseState::AwaitingResponse,
                user_id: None,
                broker_id: None,
                buy: None,
                sell: None,
                match_request_id: None,
                created_at: now,
                updated_at: now,
            };
            tx.insert_rfq_response(&r).await?;
            for user in self.traders_of(&mut tx, *p).await? {
                rows.notifications.push(notice(&rfq, user, Party::Responder, NotificationType::RfqReceived, now));
            }
            let name = known.iter().find(|k| k.company_id == *p).map(|k| k.name.clone()).unwrap_or_default();
            responses.push((r, name));
        }
        rows.timers.push(Timer {
            timer_id: Uuid::now_v7(),
            kind: EXPIRE.into(),
            payload: json!({"rfq_id": rfq.rfq_id}),
            due_at: rfq.expires_at,
            dedupe_key: None,
            attempts: 0,
        });
        let log = action_log(
            now,
            Some(actor.user.user_id),
            "rfq",
            Some(rfq.rfq_id.0),
            "create",
            json!({"parent_order_id": rfq.parent_order_id, "order_id": order.order_id, "quantity": rfq.quantity,
                   "two_way": rfq.two_way, "anonymous": rfq.anonymous, "liquidity_provider_ids": providers,
                   "expires_at": rfq.expires_at}),
        );
        rows.action_logs.push(log.keyed(input.idempotency.as_ref(), 0));
        tx.insert_rows(&rows).await?;
        // Who hears of it: the requester and the providers' traders, each told above.
        let listeners: Vec<(UserId, Party)> = std::iter::once((rfq.user_id, Party::Requester))
            .chain(rows.notifications.iter().map(|n| (n.user_id, Party::Responder)))
            .collect();
        tx.commit().await?;
        self.poke();
        self.publish_order(&order);
        self.publish_parent(&view.parent);
        self.publish_rfq(&rfq, &listeners);
        self.notifications.publish_notifications(rows.notifications);
        Ok(RfqView { rfq, responses })
    }

    /// The caller's company's RFQs in `state` (of one parent, when given), newest first.
    pub async fn rfqs(
        &self,
        actor: &Actor,
        state: RfqState,
        parent: Option<ParentOrderId>,
    ) -> Result<Vec<RfqView>, EngineError> {
        let mut tx = self.store.read().await?;
        let rfqs = tx.rfqs_of_company(actor.user.company_id, state, parent).await?;
        self.with_responses(&mut tx, rfqs).await
    }

    /// One RFQ of the caller's company.
    pub async fn rfq(&self, actor: &Actor, id: RfqId) -> Result<RfqView, EngineError> {
        let mut tx = self.store.read().await?;
        let rfq = tx.rfq(id).await?.filter(|r| r.company_id == actor.user.company_id).ok_or_else(not_found)?;
        Ok(self.with_responses(&mut tx, vec![rfq]).await?.remove(0))
    }

    /// The caller's company's response to an RFQ, by its id (a quote read back for a retry).
    pub async fn rfq_response_of(
        &self,
        actor: &Actor,
        rfq: RfqId,
        response: RfqResponseId,
    ) -> Result<RfqResponse, EngineError> {
        let mut tx = self.store.single().await?;
        let found = tx.rfq_responses(&[rfq]).await?.into_iter().find(|r| r.rfq_response_id == response);
        found
            .filter(|r| r.company_id == actor.user.company_id)
            .ok_or_else(|| EngineError::NotFound("No such RFQ response.".into()))
    }

    /// The RFQs addressed to the caller's company whose response is in `state` (on one
    /// instrument, when given), newest first; without a state, the open ones, then the
    /// ended ones of RFQs sent since the start of their instrument's trading day (its
    /// exchange's calendar, ADR 0052).
    pub async fn incoming_rfqs(
        &self,
        actor: &Actor,
        state: Option<ResponseState>,
        instrument: Option<InstrumentId>,
    ) -> Result<Vec<IncomingRfq>, EngineError> {
        let company = actor.user.company_id;
        let Some(state) = state else {
            return self.incoming_today(company, instrument).await;
        };
        let mut tx = self.store.read().await?;
        let responses = tx.rfq_responses_of_company(company, &[state], instrument, None, MAX_LISTED).await?;
        self.addressed(&mut tx, responses).await
    }

    /// [`Self::incoming_rfqs`] without a state. The ended ones are read from the earliest
    /// start of any calendar's day, then each kept from the start of its own.
    async fn incoming_today(
        &self,
        company: CompanyId,
        instrument: Option<InstrumentId>,
    ) -> Result<Vec<IncomingRfq>, EngineError> {
        let now = self.clock.now();
        // Read before the transaction, as the caches below: a cold cache takes a
        // connection of its own.
        let exchanges = crate::calendars::exchange_calendars(self).await?;
        let day_start = |mic: &str| calendar_for(&exchanges, &self.config.calendar, mic).calendar.day_start(now);
        let venue_day = self.config.calendar.day_start(now);
        let earliest = exchanges.iter().map(|e| day_start(&e.mic)).fold(venue_day, DateTime::min);
        let (open, ended): (Vec<_>, Vec<_>) = ResponseState::ALL.into_iter().partition(|s| s.is_open());
        let mut tx = self.store.read().await?;
        let open = tx.rfq_responses_of_company(company, &open, instrument, None, MAX_LISTED).await?;
        let ended = tx.rfq_responses_of_company(company, &ended, instrument, Some(earliest), MAX_LISTED).await?;
        let mut out = self.addressed(&mut tx, open).await?;
        for rfq in self.addressed(&mut tx, ended).await? {
            let mic = &self.instrument_in(&mut tx, rfq.instrument_id).await?.exchange_iso_code;
            if rfq.created_at >= day_start(mic) {
                out.push(rfq);
            }
        }
        Ok(out)
    }

    /// What the listeners' screens show of changed RFQs, for `user`'s frames (ADR 0029):
    /// those of `requested` their company sent, each with its responses, and those of
    /// `addressed` sent to their company, as addressed to it; and the company's name.
    pub async fn pushed(
        &self,
        user: UserId,
        requested: &[RfqId],
        addressed: &[RfqId],
    ) -> Result<(Vec<RfqView>, Vec<IncomingRfq>, String), EngineError> {
        let mut tx = self.store.read().await?;
        let Some(me) = tx.user(user).await? else { return Ok((Vec::new(), Vec::new(), String::new())) };
        let company = me.user.company_id;
        let sent = tx.rfqs(requested).await?.into_iter().filter(|r| r.company_id == company).collect();
        let sent = self.with_responses(&mut tx, sent).await?;
        let ours = tx.rfq_responses(addressed).await?.into_iter().filter(|r| r.company_id == company).collect();
        let asked = self.addressed(&mut tx, ours).await?;
        Ok((sent, asked, me.company_name))
    }

    /// Each response's RFQ as addressed to the response's company.
    async fn addressed(&self, tx: &mut S::Tx, responses: Vec<RfqResponse>) -> Result<Vec<IncomingRfq>, EngineError> {
        let ids: Vec<RfqId> = responses.iter().map(|r| r.rfq_id).collect();
        let rfqs: HashMap<RfqId, Rfq> = tx.rfqs(&ids).await?.into_iter().map(|r| (r.rfq_id, r)).collect();
        let mut names: HashMap<CompanyId, String> = HashMap::new();
        let mut out = Vec::with_capacity(responses.len());
        for response in responses {
            let Some(rfq) = rfqs.get(&response.rfq_id) else { continue };
            let requester_name = if rfq.anonymous {
                None
            } else {
                if let std::collections::hash_map::Entry::Vacant(e) = names.entry(rfq.company_id) {
                    e.insert(tx.company(rfq.company_id).await?.map(|c| c.name).unwrap_or_default());
                }
                names.get(&rfq.company_id).cloned()
            };
            out.push(IncomingRfq {
                rfq_id: rfq.rfq_id,
                instrument_id: rfq.instrument_id,
                direction: (!rfq.two_way).then_some(rfq.direction),
                quantity: rfq.quantity,
                two_way: rfq.two_way,
                requester_name,
                state: rfq.state,
                created_at: rfq.created_at,
                expires_at: rfq.expires_at,
                response,
            });
        }
        Ok(out)
    }

    /// A provider quotes (again) or declines, while the RFQ is open.
    pub(crate) async fn answer_rfq_inner(
        &self,
        actor: &Actor,
        id: RfqId,
        answer: Answer,
        key: Option<IdempotencyKey>,
    ) -> Result<RfqResponse, EngineError> {
        crate::context::require_trade(actor)?;
        self.throttle(actor, Write::Quotes)?;
        let now = self.clock.now();
        // Read before the transaction opens: a cold cache takes a connection of its own.
        let exchanges = crate::calendars::exchange_calendars(self).await?;
        let mut tx = self.store.write().await?;
        let rfq = tx.rfq(id).await?.ok_or_else(not_found)?;
        let instrument = self.instrument_in(&mut tx, rfq.instrument_id).await?;
        calendar_for(&exchanges, &self.config.calendar, &instrument.exchange_iso_code).require_open(now)?;
        let responses = tx.rfq_responses(&[id]).await?;
        let before = responses.into_iter().find(|r| r.company_id == actor.user.company_id).ok_or_else(not_found)?;
        if rfq.state != RfqState::Open || now >= rfq.expires_at {
            return Err(conflict("This RFQ is no longer open."));
        }
        let mut after = before.clone();
        after.updated_at = now;
        let event = match answer {
            Answer::Decline => ResponseEvent::Decline,
            Answer::Quote { buy, sell, broker_id } => {
                let instrument = self.instrument_in(&mut tx, rfq.instrument_id).await?;
                if !crate::context::may_trade(actor, &instrument) {
                    return Err(not_found());
                }
                let mut errors = Vec::new();
                check_quote(&rfq, &instrument, buy, sell, &mut errors);
                let broker = self.trade_broker(&mut tx, actor.user.company_id, broker_id, &mut errors).await?;
                if !errors.is_empty() {
                    return Err(EngineError::invalid_many(errors));
                }
                after.buy = buy;
                after.sell = sell;
                after.broker_id = Some(broker);
                after.user_id = Some(actor.user.user_id);
                ResponseEvent::Quote
            }
        };
        if event == ResponseEvent::Quote {
            self.require_trading(&mut tx, actor.user.company_id).await?;
        }
        self.record_answer(tx, &rfq, (before, after), event, Some(actor.user.user_id), now, key.as_ref()).await
    }

    /// Writes a provider's quote or decline of an open RFQ, tells the requester and
    /// audits it, then publishes: the end of [`Self::answer_rfq`], and the kill switch's
    /// withdrawal of a stopped provider's responses (`by` the switch's actor).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn record_answer(
        &self,
        mut tx: S::Tx,
        rfq: &Rfq,
        (before, mut after): (RfqResponse, RfqResponse),
        event: ResponseEvent,
        by: Option<UserId>,
        now: DateTime<Utc>,
        key: Option<&IdempotencyKey>,
    ) -> Result<RfqResponse, EngineError> {
        let id = rfq.rfq_id;
        after.state = response_transition(before.state, event)
            .map_err(|_| conflict("This response can no longer be changed."))?;
        tx.update_rfq_response(&before, &after).await?;
        let (mut notices, mut rows) = (Vec::new(), NewRows::default());
        if event == ResponseEvent::Quote && before.state == ResponseState::AwaitingResponse {
            let n = notice(rfq, rfq.user_id, Party::Requester, NotificationType::RfqQuoteReceived, now);
            rows.notifications.push(n.clone());
            notices.push(n);
        }
        if event == ResponseEvent::Decline {
            notices.extend(
                self.end_notices(&mut tx, rfq, |_| MatchRequestState::Rejected, Some(before.company_id), now).await?,
            );
        }
        let log = action_log(
            now,
            by,
            "rfq_response",
            Some(after.rfq_response_id.0),
            after.state.as_str(),
            json!({"rfq_id": id, "buy": after.buy.map(side_json), "sell": after.sell.map(side_json)}),
        );
        rows.action_logs.push(log.keyed(key, 0));
        tx.insert_rows(&rows).await?;
        let listeners = self.rfq_listeners(&mut tx, rfq, &[before.company_id]).await?;
        let all_declined = event == ResponseEvent::Decline
            && tx.rfq_responses(&[id]).await?.iter().all(|r| r.state == ResponseState::RejectedByResponder);
        tx.commit().await?;
        self.publish_rfq(rfq, &listeners);
        self.notifications.publish_notifications(notices);
        if all_declined {
            // Nothing is left to wait for: the RFQ ends and its quantity returns to the
            // parent (ADR 0036). Should this not run, the deadline still ends it.
            match self.end_rfq(id, RfqEvent::AllDeclined, None, now).await {
                Ok(_) | Err(EngineError::Conflict { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(after)
    }

    /// The requester accepts one received quote while the RFQ is open: a match at the
    /// quote's price and quantity on the side that trades against them (ADR 0020).
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id, rfq = %id))]
    pub async fn accept_quote(
        &self,
        actor: &Actor,
        id: RfqId,
        response_id: RfqResponseId,
        seen_quote: Option<QuoteSide>,
    ) -> Result<RfqView, EngineError> {
        crate::context::require_trade(actor)?;
        self.throttle(actor, Write::Rfqs)?;
        let now = self.clock.now();
        let exchanges = crate::calendars::exchange_calendars(self).await?;
        let mut tx = self.store.write().await?;
        let seen = tx.rfq(id).await?.filter(|r| r.company_id == actor.user.company_id).ok_or_else(not_found)?;
        let instrument = self.instrument_in(&mut tx, seen.instrument_id).await?;
        calendar_for(&exchanges, &self.config.calendar, &instrument.exchange_iso_code).require_open(now)?;
        let locked = tx.lock_parent_order(seen.parent_order_id).await?.ok_or_else(not_found_parent)?;
        // Read again under the lock: what they are now is what the compare-and-sets expect.
        let rfq = tx.rfq(id).await?.ok_or_else(not_found)?;
        let responses = tx.rfq_responses(&[id]).await?;
        let chosen = responses.iter().find(|r| r.rfq_response_id == response_id).cloned().ok_or_else(not_found)?;
        if rfq.state != RfqState::Open || now >= rfq.expires_at {
            return Err(conflict("This RFQ is no longer open."));
        }
        self.require_trading(&mut tx, actor.user.company_id).await?;
        // A quote a stopped provider left behind (it raced the switch) is not accepted.
        self.require_trading(&mut tx, chosen.company_id).await.map_err(|_| {
            conflict("This liquidity provider has stopped trading: its quote can no longer be accepted.")
        })?;
        if chosen.state != ResponseState::Responded {
            return Err(conflict("Only a received quote can be accepted."));
        }
        let side = match rfq.direction {
            Direction::Buy => chosen.sell,
            Direction::Sell => chosen.buy,
        };
        let (Some(side), Some(lp_user), Some(lp_broker)) = (side, chosen.user_id, chosen.broker_id) else {
            return Err(EngineError::Internal(format!("quote {response_id} without the side asked for")));
        };
        if seen_quote.is_some_and(|q| q.price != side.price || q.quantity != side.quantity) {
            return Err(conflict(QUOTE_CHANGED));
        }
        // A band that moved away from the quote since it was given: no trade outside it.
        let band = tx.instrument(rfq.instrument_id).await?.ok_or_else(|| internal("instrument gone"))?;
        if !crate::context::may_trade(actor, &band) {
            return Err(not_found());
        }
        if band.is_stale(now) {
            return Err(crate::context::stale_prices(&band));
        }
        if !band.in_band(side.price) {
            return Err(conflict(QUOTE_OUT_OF_BAND));
        }

        // The requester's reserved order matches at the quote (the part not quoted
        // returns to the parent); the provider's side is a new parent, filled at once.
        let reserved = tx.order(rfq.order_id).await?.ok_or_else(|| internal("reserved order gone"))?;
        let mut mine = reserved.clone();
        mine.state = order_transition(reserved.state, OrderEvent::Match).map_err(internal)?;
        mine.price = side.price;
        mine.quantity = side.quantity;
        mine.updated_at = now;
        tx.update_order(&reserved, &mine).await?;
        let lp_parent = ParentOrder {
            parent_order_id: ParentOrderId::new(),
            company_id: chosen.company_id,
            created_by: lp_user,
            instrument_id: rfq.instrument_id,
            direction: rfq.direction.opposite(),
            quantity: side.quantity,
            broker_instructions: None,
            min_execution: None,
            state: ParentState::Filled,
            created_at: now,
            updated_at: now,
        };
        tx.insert_parent_order(&lp_parent).await?;
        let theirs = ChildOrder {
            order_id: OrderId::new(),
            parent_order_id: lp_parent.parent_order_id,
            company_id: chosen.company_id,
            created_by: lp_user,
            instrument_id: rfq.instrument_id,
            direction: lp_parent.direction,
            state: OrderState::Matched,
            price: side.price,
            quantity: side.quantity,
            iceberg: false,
            residual: false,
            min_execution: None,
            broker_id: lp_broker,
            created_at: now,
            updated_at: now,
        };
        tx.insert_order(&theirs).await?;
        let m = MatchRequest {
            match_request_id: MatchRequestId::new(),
            instrument_id: rfq.instrument_id,
            direction: rfq.direction,
            price: side.price,
            take_price: side.price,
            quantity: side.quantity,
            requesting_order_id: mine.order_id,
            requesting_company_id: rfq.company_id,
            requesting_user_id: rfq.user_id,
            responding_order_id: theirs.order_id,
            responding_company_id: chosen.company_id,
            responding_user_id: lp_user,
            iceberg: false,
            state: MatchRequestState::Accepted,
            created_at: now,
            expires_at: now,
            updated_at: now,
            rfq_id: Some(rfq.rfq_id),
            auto_answer: None,
            answered_automatically: false,
            // The quote's acceptance is its answer.
            answered_at: Some(now),
            tick_size: band.tick_size,
            min_quantity: band.min_quantity,
        };
        let mut rows = NewRows { match_requests: vec![m.clone()], ..Default::default() };
        self.confirmations
            .ask_brokers(&mut tx, &mut rows, &m, &[mine.clone(), theirs.clone()], ConfirmationStep::Accept, now)
            .await?;
        tx.insert_rows(&rows).await?;

        let mut ended = Vec::with_capacity(responses.len());
        for before in &responses {
            let event = if before.rfq_response_id == response_id {
                ResponseEvent::Accept
            } else if before.state.is_open() {
                ResponseEvent::AcceptedElsewhere
            } else {
                ended.push(before.clone());
                continue;
            };
            let mut after = before.clone();
            after.state = response_transition(before.state, event).map_err(internal)?;
            after.updated_at = now;
            if event == ResponseEvent::Accept {
                after.match_request_id = Some(m.match_request_id);
            }
            tx.update_rfq_response(before, &after).await?;
            ended.push(after);
        }
        let done = RfqState::Completed;
        transition(rfq.state, RfqEvent::Accept).map_err(internal)?;
        tx.update_rfq_state(id, rfq.state, done, now).await?;
        let rfq = Rfq { state: done, updated_at: now, ..rfq };
        let mut parent = locked.parent.clone();
        self.orders.settle_parents(&mut tx, std::slice::from_mut(&mut parent), now).await?;

        // The winner's and the requester's notices say it traded; the other providers'
        // that theirs were not taken.
        let traded = [chosen.company_id, rfq.company_id];
        let mut notices = self
            .end_notices(
                &mut tx,
                &rfq,
                |c| {
                    if c.is_some_and(|c| traded.contains(&c)) {
                        MatchRequestState::Accepted
                    } else {
                        MatchRequestState::Rejected
                    }
                },
                None,
                now,
            )
            .await?;
        let n = notice(&rfq, lp_user, Party::Responder, NotificationType::RfqQuoteAccepted, now);
        let n = Notification { status: MatchRequestState::Accepted, ..n };
        // The winner's notice and the audit row: one write.
        let tail = NewRows {
            notifications: vec![n.clone()],
            action_logs: vec![action_log(
                now,
                Some(actor.user.user_id),
                "rfq",
                Some(id.0),
                "accept",
                json!({"rfq_response_id": response_id, "match_request_id": m.match_request_id,
                       "price": side.price, "quantity": side.quantity}),
            )],
            ..Default::default()
        };
        tx.insert_rows(&tail).await?;
        notices.push(n);
        let providers: Vec<CompanyId> = responses.iter().map(|r| r.company_id).collect();
        let listeners = self.rfq_listeners(&mut tx, &rfq, &providers).await?;
        let names = self.provider_names(&mut tx, &ended).await?;
        tx.commit().await?;
        self.counters.matches.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.poke();
        for o in [&mine, &theirs] {
            self.publish_order(o);
        }
        self.publish_parent(&parent);
        self.publish_parent(&lp_parent);
        self.publish_rfq(&rfq, &listeners);
        self.notifications.publish_notifications(notices);
        Ok(RfqView { rfq, responses: ended.into_iter().zip(names).collect() })
    }

    /// The requester withdraws an open RFQ: its quantity returns to the parent.
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id, rfq = %id))]
    pub async fn cancel_rfq(&self, actor: &Actor, id: RfqId) -> Result<RfqView, EngineError> {
        crate::context::require_trade(actor)?;
        self.throttle(actor, Write::Rfqs)?;
        let rfq = self.store.single().await?.rfq(id).await?;
        rfq.filter(|r| r.company_id == actor.user.company_id).ok_or_else(not_found)?;
        self.end_rfq(id, RfqEvent::Cancel, Some(actor.user.user_id), self.clock.now()).await
    }

    /// Ends the open RFQs of a parent order being cancelled.
    pub(crate) async fn cancel_rfqs_of(&self, actor: &Actor, parent: ParentOrderId) -> Result<(), EngineError> {
        let open =
            self.store.single().await?.rfqs_of_company(actor.user.company_id, RfqState::Open, Some(parent)).await?;
        for r in open {
            match self.end_rfq(r.rfq_id, RfqEvent::Cancel, Some(actor.user.user_id), self.clock.now()).await {
                Ok(_) | Err(EngineError::Conflict { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The close at `close`: every RFQ sent up to then that is still open expires.
    pub(crate) async fn expire_rfqs(
        &self,
        close: DateTime<Utc>,
        exchanges: &[Exchange],
        mic: Option<&str>,
    ) -> Result<(), EngineError> {
        let open = self.store.single().await?.rfqs_in_state(RfqState::Open).await?;
        for r in open.into_iter().filter(|r| r.created_at <= close) {
            if !crate::calendars::closes_with(exchanges, &*self.cached_instrument(r.instrument_id).await?, mic) {
                continue;
            }
            match self.end_rfq(r.rfq_id, RfqEvent::Expire, None, close.min(self.clock.now())).await {
                Ok(_) | Err(EngineError::Conflict { .. }) | Err(EngineError::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Runs an RFQ's deadline timer; an RFQ no longer open has nothing left to do.
    pub(crate) async fn run_rfq_timer(&self, timer: &Timer) -> Result<(), EngineError> {
        let id = timer
            .payload
            .get("rfq_id")
            .and_then(|v| v.as_str())
            .and_then(|s| Uuid::parse_str(s).ok())
            .map(RfqId)
            .ok_or_else(|| internal(format!("{} timer without rfq_id", timer.kind)))?;
        match self.end_rfq(id, RfqEvent::Expire, None, self.clock.now()).await {
            Ok(_) | Err(EngineError::Conflict { .. }) | Err(EngineError::NotFound(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Ends an open RFQ by its deadline (or the close) or its withdrawal: open responses
    /// end alike, the reserved order expires or is cancelled, its quantity back to the parent.
    pub(crate) async fn end_rfq(
        &self,
        id: RfqId,
        event: RfqEvent,
        by: Option<UserId>,
        at: DateTime<Utc>,
    ) -> Result<RfqView, EngineError> {
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let seen = tx.rfq(id).await?.ok_or_else(not_found)?;
        let parent = tx.lock_parent_order(seen.parent_order_id).await?.ok_or_else(not_found_parent)?;
        let rfq = tx.rfq(id).await?.ok_or_else(not_found)?;
        let to = transition(rfq.state, event).map_err(|_| conflict("This RFQ is no longer open."))?;
        tx.update_rfq_state(id, rfq.state, to, at).await?;
        let rfq = Rfq { state: to, updated_at: at, ..rfq };
        let (response_event, order_event, status) = match event {
            RfqEvent::Expire => (ResponseEvent::Expire, OrderEvent::Expire, MatchRequestState::TimedOut),
            RfqEvent::AllDeclined => (ResponseEvent::Expire, OrderEvent::Expire, MatchRequestState::Rejected),
            _ => (ResponseEvent::Cancel, OrderEvent::Decline, MatchRequestState::Cancelled),
        };
        let responses = tx.rfq_responses(&[id]).await?;
        let mut ended = Vec::with_capacity(responses.len());
        for before in responses {
            if !before.state.is_open() {
                ended.push(before);
                continue;
            }
            let mut after = before.clone();
            after.state = response_transition(before.state, response_event).map_err(internal)?;
            after.updated_at = at;
            tx.update_rfq_response(&before, &after).await?;
            ended.push(after);
        }
        let mut changed = None;
        if let Some(before) = tx.order(rfq.order_id).await? {
            // The close may have expired it first.
            if let Ok(state) = order_transition(before.state, order_event) {
                let after = ChildOrder { state, updated_at: now, ..before.clone() };
                tx.update_order(&before, &after).await?;
                changed = Some(after);
            }
        }
        let notices = self.end_notices(&mut tx, &rfq, |_| status, None, now).await?;
        audit(&mut tx, now, by, "rfq", Some(id.0), to.as_str(), json!({"event": format!("{event:?}")})).await?;
        let providers: Vec<CompanyId> = ended.iter().map(|r| r.company_id).collect();
        let listeners = self.rfq_listeners(&mut tx, &rfq, &providers).await?;
        let names = self.provider_names(&mut tx, &ended).await?;
        tx.commit().await?;
        if let Some(o) = &changed {
            self.publish_order(o);
        }
        self.publish_parent(&parent.parent);
        self.publish_rfq(&rfq, &listeners);
        self.notifications.publish_notifications(notices);
        Ok(RfqView { rfq, responses: ended.into_iter().zip(names).collect() })
    }

    /// The RFQ's pending notifications take `status` (by their recipient's company), for
    /// one provider's users only when `only` names it.
    async fn end_notices(
        &self,
        tx: &mut S::Tx,
        rfq: &Rfq,
        status: impl Fn(Option<CompanyId>) -> MatchRequestState,
        only: Option<CompanyId>,
        now: DateTime<Utc>,
    ) -> Result<Vec<Notification>, EngineError> {
        let mut out = Vec::new();
        for mut n in tx.notifications_of_rfq(rfq.rfq_id).await? {
            if n.status != MatchRequestState::Pending {
                continue;
            }
            let company = tx.user(n.user_id).await?.map(|u| u.user.company_id);
            if only.is_some_and(|c| Some(c) != company) {
                continue;
            }
            n.status = status(company);
            n.updated_at = now;
            tx.set_notification_status(n.notification_id, n.status, now).await?;
            out.push(n);
        }
        Ok(out)
    }

    /// The broker for a trade of `company`: the one asked for, when eligible, else the
    /// company's default or first eligible broker.
    async fn trade_broker(
        &self,
        tx: &mut S::Tx,
        company: CompanyId,
        asked: Option<CompanyId>,
        errors: &mut Vec<FieldError>,
    ) -> Result<CompanyId, EngineError> {
        let brokers = self.brokers_in(tx, company).await?;
        let chosen = match asked {
            Some(b) if brokers.iter().any(|e| e.company_id == b) => Some(b),
            Some(_) => {
                errors.push(FieldError::new("broker_id", "Choose one of the eligible brokers"));
                return Ok(CompanyId(Uuid::nil()));
            }
            None => {
                let default = tx.company(company).await?.and_then(|c| c.default_broker);
                default.map(|d| d.company_id).or_else(|| brokers.first().map(|b| b.company_id))
            }
        };
        Ok(chosen.unwrap_or_else(|| {
            errors.push(FieldError::new("broker_id", "Your company has no eligible broker"));
            CompanyId(Uuid::nil())
        }))
    }

    /// The active users of `company` who may trade.
    async fn traders_of(&self, tx: &mut S::Tx, company: CompanyId) -> Result<Vec<UserId>, EngineError> {
        let filter = UserFilter {
            email: None,
            company_id: Some(company),
            active: Some(true),
            page: 0,
            size: crate::context::MAX_PAGE_SIZE,
        };
        let users = tx.users(&filter).await?.items;
        Ok(users
            .into_iter()
            .filter(|u| upstairs_domain::has_permission(&u.user.roles, Permission::Trade))
            .map(|u| u.user.user_id)
            .collect())
    }

    /// Who hears of a change to `rfq`: its requester and the traders of `providers`.
    async fn rfq_listeners(
        &self,
        tx: &mut S::Tx,
        rfq: &Rfq,
        providers: &[CompanyId],
    ) -> Result<Vec<(UserId, Party)>, EngineError> {
        let mut out = vec![(rfq.user_id, Party::Requester)];
        for p in providers {
            out.extend(self.traders_of(tx, *p).await?.into_iter().map(|u| (u, Party::Responder)));
        }
        Ok(out)
    }

    fn publish_rfq(&self, rfq: &Rfq, listeners: &[(UserId, Party)]) {
        for (user_id, role) in listeners {
            self.publish(Event::RfqChanged { user_id: *user_id, rfq_id: rfq.rfq_id, state: rfq.state, role: *role });
        }
    }

    async fn with_responses(&self, tx: &mut S::Tx, rfqs: Vec<Rfq>) -> Result<Vec<RfqView>, EngineError> {
        let ids: Vec<RfqId> = rfqs.iter().map(|r| r.rfq_id).collect();
        let mut by_rfq: HashMap<RfqId, Vec<RfqResponse>> = HashMap::new();
        for r in tx.rfq_responses(&ids).await? {
            by_rfq.entry(r.rfq_id).or_default().push(r);
        }
        let mut out = Vec::with_capacity(rfqs.len());
        for rfq in rfqs {
            let responses = by_rfq.remove(&rfq.rfq_id).unwrap_or_default();
            let names = self.provider_names(tx, &responses).await?;
            out.push(RfqView { rfq, responses: responses.into_iter().zip(names).collect() });
        }
        Ok(out)
    }

    async fn provider_names(&self, tx: &mut S::Tx, responses: &[RfqResponse]) -> Result<Vec<String>, EngineError> {
        let mut out = Vec::with_capacity(responses.len());
        for r in responses {
            out.push(tx.company(r.company_id).await?.map(|c| c.name).unwrap_or_default());
        }
        Ok(out)
    }
}

/// The checks of a quote against its RFQ and instrument: the side(s) asked for and only
/// those, each on tick and in the band, at least the minimum block and at most the RFQ's
/// quantity; a two-way quote not crossed.
fn check_quote(
    rfq: &Rfq,
    instrument: &Instrument,
    buy: Option<QuoteSide>,
    sell: Option<QuoteSide>,
    errors: &mut Vec<FieldError>,
) {
    let (want_buy, want_sell) = match (rfq.two_way, rfq.direction) {
        (true, _) => (true, true),
        (false, Direction::Buy) => (false, true),
        (false, Direction::Sell) => (true, false),
    };
    for (name, wanted, side) in [("buy", want_buy, buy), ("sell", want_sell, sell)] {
        match (wanted, side) {
            (true, None) => {
                errors.push(FieldError::new(format!("{name}_price"), "Required"));
                errors.push(FieldError::new(format!("{name}_quantity"), "Required"));
            }
            (false, Some(_)) => errors.push(FieldError::new(format!("{name}_price"), "Not asked for in this RFQ")),
            (false, None) => {}
            (true, Some(s)) => {
                if !on_tick(s.price, instrument.tick_size) {
                    errors.push(FieldError::new(format!("{name}_price"), "Invalid tick value"));
                } else if !instrument.in_band(s.price) {
                    errors.push(FieldError::new(format!("{name}_price"), "Must be between electronic price"));
                }
                if s.quantity < instrument.min_quantity {
                    errors.push(FieldError::new(
                        format!("{name}_quantity"),
                        format!("Min block size: {}", instrument.min_quantity),
                    ));
                } else if s.quantity > rfq.quantity {
                    errors.push(FieldError::new(format!("{name}_quantity"), "Exceeds the RFQ quantity"));
                }
            }
        }
    }
    if let (true, Some(b), Some(s)) = (rfq.two_way, buy, sell)
        && s.price < b.price
    {
        errors.push(FieldError::new("sell_price", "Must not be below the buy price"));
    }
}

fn notice(rfq: &Rfq, user_id: UserId, role: Party, t: NotificationType, now: DateTime<Utc>) -> Notification {
    Notification {
        notification_id: NotificationId::new(),
        user_id,
        notification_type: t,
        status: MatchRequestState::Pending,
        instrument_id: rfq.instrument_id,
        subject: Subject::Rfq(rfq.rfq_id),
        role,
        terms: None,
        read: false,
        archived: false,
        created_at: now,
        expired_at: rfq.expires_at,
        updated_at: now,
    }
}

fn side_json(s: QuoteSide) -> serde_json::Value {
    json!({"price": s.price, "quantity": s.quantity})
}

fn not_found() -> EngineError {
    EngineError::NotFound("RFQ not found.".into())
}

fn conflict(detail: &str) -> EngineError {
    EngineError::Conflict { detail: detail.into(), errors: vec![] }
}

fn internal(e: impl std::fmt::Display) -> EngineError {
    EngineError::Internal(e.to_string())
}
