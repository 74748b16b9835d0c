//! Parent orders, child orders, the anonymous book and the trading day.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde_json::json;
use std::sync::Arc;
use upstairs_domain::calendar::Status;
use upstairs_domain::order::{
    Direction, OrderEvent, OrderState, ParentEvent, Quantities, parent_transition, transition,
};
use upstairs_domain::price::on_tick;
use upstairs_domain::quantity::{MAX_MULTIPLIER, Multiplier, Quantity};
use upstairs_domain::{CompanyId, FieldError, InstrumentId, OrderId, ParentOrderId};
use uuid::Uuid;

use crate::Store;
pub use crate::book::{Book, BookLevels, Level, book_levels};
use crate::calendars::calendar_for;
use crate::context::{Actor, action_log, audit};
use crate::core::service;
use crate::error::{COMPANY_TRADING_STOPPED, EngineError, StoreError, trading_stopped};
use crate::keyed::{Lookup, first};
use crate::model::*;
use crate::ports::*;
use crate::ratelimit::Write;
use crate::reports::FixReports;

/// Largest parent order without a per-user multiplier.
pub const DEFAULT_MAX_PARENT_QUANTITY: i64 = 100_000;
pub const DAY_CLOSE: &str = "day.close";

pub struct NewParentOrder {
    pub direction: Option<Direction>,
    pub instrument_id: InstrumentId,
    pub quantity: Quantity,
    pub broker_instructions: Option<String>,
    /// The minimum execution size its child orders take when they name none (ADR 0041).
    pub min_execution: Option<Quantity>,
    /// The client's key for this write (ADR 0023).
    pub idempotency: Option<IdempotencyKey>,
    /// The company and ClOrdID of the execution system that sent it by FIX (ADR 0025).
    pub fix_cl_ord_id: Option<(CompanyId, String)>,
}

pub struct NewOrder {
    pub parent_order_id: ParentOrderId,
    pub quantity: Quantity,
    pub price: Decimal,
    pub residual: bool,
    pub iceberg: bool,
    /// The least one fill of it may be (ADR 0041); the parent's when not sent.
    pub min_execution: Option<Quantity>,
    pub broker_id: CompanyId,
    /// Must agree with the parent when sent.
    pub instrument_id: Option<InstrumentId>,
    pub direction: Option<Direction>,
    /// The client's key for this write (ADR 0023).
    pub idempotency: Option<IdempotencyKey>,
}

#[derive(Default)]
pub struct OrderEdit {
    pub quantity: Option<Quantity>,
    pub price: Option<Decimal>,
    pub residual: Option<bool>,
    pub iceberg: Option<bool>,
    /// `Some(None)` removes the minimum execution size.
    pub min_execution: Option<Option<Quantity>>,
}

/// A parent order with its quantities and the brokers its child orders may use.
#[derive(Clone, Debug)]
pub struct ParentOrderDetail {
    pub view: ParentOrderView,
    pub quantities: Quantities,
    pub eligible_brokers: Vec<CompanyRef>,
}

/// A child order as its owner sees it.
#[derive(Clone, Debug)]
pub struct OrderDetail {
    pub order: ChildOrder,
    /// False while the price is outside the instrument's current band, or before the open.
    pub matchable: bool,
    /// Worked between the parent-order opening and the open (05:30 to 09:00): it goes live
    /// at the open by itself.
    pub waiting_for_open: bool,
}

/// The price and quantity rules every order and take meets (errors by field).
/// `available` is what is left of the parent (the statement that reserves it checks
/// again: ADR 0027).
pub(crate) fn check_price_and_quantity(
    instrument: &Instrument,
    price: Decimal,
    quantity: Quantity,
    available: i64,
    errors: &mut Vec<FieldError>,
) {
    let quantity = quantity.get();
    if quantity < instrument.min_quantity {
        errors.push(FieldError::new("quantity", format!("Min block size: {}", instrument.min_quantity)));
    } else if quantity > available {
        errors.push(FieldError::new("quantity", "Exceeds available quantity"));
    }
    if !on_tick(price, instrument.tick_size) {
        errors.push(FieldError::new("limit_price", "Invalid tick value"));
    } else if !instrument.in_band(price) {
        errors.push(FieldError::new("limit_price", "Must be between electronic price"));
    }
}

/// A minimum execution size's rule (ADR 0041): from the instrument's block to the order's
/// quantity.
pub(crate) fn check_min_execution(
    instrument: &Instrument,
    min_execution: Option<Quantity>,
    quantity: Quantity,
    errors: &mut Vec<FieldError>,
) {
    let Some(m) = min_execution.map(Quantity::get) else { return };
    if m < instrument.min_quantity {
        errors.push(FieldError::new("min_execution", format!("Min block size: {}", instrument.min_quantity)));
    } else if m > quantity.get() {
        errors.push(FieldError::new("min_execution", "Must not exceed the quantity"));
    }
}

pub(crate) fn not_found_order() -> EngineError {
    EngineError::NotFound("Order not found.".into())
}

pub(crate) fn not_found_parent() -> EngineError {
    EngineError::NotFound("Parent order not found.".into())
}

/// The key of a calendar's pending close: the venue's own (`day.close`), or an
/// exchange's (`day.close:IFEU`).
pub fn close_key(mic: Option<&str>) -> String {
    mic.map_or_else(|| DAY_CLOSE.to_owned(), |m| format!("{DAY_CLOSE}:{m}"))
}

fn order_json(o: &ChildOrder) -> serde_json::Value {
    json!({"state": o.state, "price": o.price.to_string(), "quantity": o.quantity, "iceberg": o.iceberg,
           "residual": o.residual, "min_execution": o.min_execution, "broker_id": o.broker_id,
           "parent_order_id": o.parent_order_id})
}

service!(
    /// Parent and child orders: creating, editing, reading them and the book.
    Orders { fix_reports: FixReports }
);

impl<S: Store> Orders<S> {
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id))]
    pub async fn create_parent_order(
        &self,
        actor: &Actor,
        input: NewParentOrder,
    ) -> Result<ParentOrderDetail, EngineError> {
        let key = input.idempotency.clone();
        self.once(actor, key.as_ref(), Lookup::First, self.create_parent_order_inner(actor, input), |ids| async move {
            self.parent_order(actor, ParentOrderId(first(ids)?)).await
        })
        .await
    }

    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id, parent = %input.parent_order_id))]
    pub async fn create_order(&self, actor: &Actor, input: NewOrder) -> Result<OrderDetail, EngineError> {
        let key = input.idempotency.clone();
        self.once(actor, key.as_ref(), Lookup::OnRefusal, self.create_order_inner(actor, input), |ids| async move {
            self.order(actor, OrderId(first(ids)?)).await
        })
        .await
    }

    pub fn platform_status(&self) -> Status {
        self.config.calendar.status(self.clock.now())
    }

    async fn detail(&self, view: ParentOrderView) -> Result<ParentOrderDetail, EngineError> {
        let quantities = Quantities::of(view.parent.quantity, view.working, view.matched)
            .ok_or_else(|| EngineError::Internal(format!("parent {} over-allocated", view.parent.parent_order_id)))?;
        let eligible_brokers = (*self.cached_brokers(view.parent.company_id).await?).clone();
        Ok(ParentOrderDetail { view, quantities, eligible_brokers })
    }

    /// A parent order of the caller's company (locked when `lock`).
    /// One of the caller's parent orders as created (not its state or quantities).
    pub(crate) async fn cached_parent(
        &self,
        actor: &Actor,
        id: ParentOrderId,
    ) -> Result<Arc<ParentOrder>, EngineError> {
        let load =
            || async { Ok::<_, StoreError>(self.store.single().await?.parent_order(id).await?.map(|v| v.parent)) };
        let parent = self.caches.parents.get(id, load).await?;
        parent.filter(|p| p.company_id == actor.user.company_id).ok_or_else(not_found_parent)
    }

    pub(crate) async fn own_parent(
        &self,
        tx: &mut S::Tx,
        actor: &Actor,
        id: ParentOrderId,
        lock: bool,
    ) -> Result<ParentOrderView, EngineError> {
        let view = if lock { tx.lock_parent_order(id).await? } else { tx.parent_order(id).await? };
        view.filter(|p| p.parent.company_id == actor.user.company_id).ok_or_else(not_found_parent)
    }

    pub async fn parent_orders(
        &self,
        actor: &Actor,
        states: &[ParentState],
    ) -> Result<Vec<ParentOrderDetail>, EngineError> {
        let mut tx = self.store.read().await?;
        let views = tx.parent_orders(actor.user.company_id, states).await?;
        let mut out = Vec::with_capacity(views.len());
        for v in views {
            out.push(self.detail(v).await?);
        }
        Ok(out)
    }

    pub async fn parent_order(&self, actor: &Actor, id: ParentOrderId) -> Result<ParentOrderDetail, EngineError> {
        let mut tx = self.store.read().await?;
        let v = self.own_parent(&mut tx, actor, id, false).await?;
        self.detail(v).await
    }

    pub(crate) async fn create_parent_order_inner(
        &self,
        actor: &Actor,
        input: NewParentOrder,
    ) -> Result<ParentOrderDetail, EngineError> {
        crate::context::require_trade(actor)?;
        self.throttle(actor, Write::Orders)?;
        let instrument = self.visible_instrument(actor, input.instrument_id).await?;
        let mut errors = Vec::new();
        if input.direction.is_none() {
            errors.push(FieldError::new("direction", "Direction is required"));
        }
        // Both factors are bounded (ADR 0027); a multiplier stored before the bound was
        // set counts as the largest one.
        let venue_max = self.config.max_order_quantity;
        let max = match actor.user.parent_order_limit_multiplier {
            None => DEFAULT_MAX_PARENT_QUANTITY.min(venue_max),
            Some(m) => Multiplier::new(m.min(MAX_MULTIPLIER))
                .ok_or_else(|| EngineError::Internal(format!("multiplier {m} stored")))?
                .max_parent_quantity(instrument.min_quantity, venue_max),
        };
        let quantity = input.quantity.get();
        if quantity < instrument.min_quantity {
            errors.push(FieldError::new("quantity", format!("The minimum block size is {}", instrument.min_quantity)));
        } else if quantity > max {
            errors.push(FieldError::new("quantity", format!("The maximum quantity is {max}")));
        } else {
            check_min_execution(&instrument, input.min_execution, input.quantity, &mut errors);
        }
        let Some(direction) = input.direction.filter(|_| errors.is_empty()) else {
            return Err(EngineError::invalid_many(errors));
        };
        let now = self.clock.now();
        crate::calendars::calendar_of(self, &instrument).await?.require_parent_orders_open(now)?;
        let parent = ParentOrder {
            parent_order_id: ParentOrderId::new(),
            company_id: actor.user.company_id,
            created_by: actor.user.user_id,
            instrument_id: instrument.instrument_id,
            direction,
            quantity,
            broker_instructions: input.broker_instructions.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()),
            min_execution: input.min_execution.map(Quantity::get),
            state: ParentState::Active,
            created_at: now,
            updated_at: now,
        };
        let mut tx = self.store.write().await?;
        self.require_trading(&mut tx, actor.user.company_id).await?;
        tx.insert_parent_order(&parent).await?;
        let log = action_log(
            now,
            Some(actor.user.user_id),
            "parent_order",
            Some(parent.parent_order_id.0),
            "create",
            json!({"instrument_id": parent.instrument_id, "direction": direction, "quantity": parent.quantity,
                   "min_execution": parent.min_execution}),
        );
        tx.insert_action_log(&log.keyed(input.idempotency.as_ref(), 0)).await?;
        let view = ParentOrderView { parent, working: 0, matched: 0 };
        if let Some((company, cl_ord_id)) = &input.fix_cl_ord_id {
            tx.insert_fix_parent_order(view.parent.parent_order_id, *company, cl_ord_id).await?;
            self.fix_reports.report_parent_state(&mut tx, &view, None, now).await?;
        }
        let detail = self.detail(view).await?;
        tx.commit().await?;
        if input.fix_cl_ord_id.is_some() {
            self.poke();
        }
        self.publish_parent(&detail.view.parent);
        Ok(detail)
    }

    pub async fn orders(&self, actor: &Actor, mut filter: OrderFilter) -> Result<Vec<OrderDetail>, EngineError> {
        filter.company_id = Some(actor.user.company_id);
        let orders = self.store.single().await?.orders(&filter).await?;
        self.details_now(orders).await
    }

    pub async fn order(&self, actor: &Actor, id: OrderId) -> Result<OrderDetail, EngineError> {
        let o = self.store.single().await?.order(id).await?;
        let o = o.filter(|o| o.company_id == actor.user.company_id).ok_or_else(not_found_order)?;
        let mut one = self.details_now(vec![o]).await?;
        one.pop().ok_or_else(not_found_order)
    }

    /// An order as its owner sees it: matchable in the band once its exchange is open.
    pub(crate) fn order_detail(&self, order: ChildOrder, in_band: bool, open: bool) -> OrderDetail {
        let waiting_for_open = order.state == OrderState::Working && !open;
        OrderDetail { matchable: in_band && !waiting_for_open, waiting_for_open, order }
    }

    /// Orders as their owner sees them now: whether each price is inside its instrument's
    /// band and its exchange open (from the caches, once per instrument of the list).
    async fn details_now(&self, orders: Vec<ChildOrder>) -> Result<Vec<OrderDetail>, EngineError> {
        let now = self.clock.now();
        let mut seen: std::collections::HashMap<InstrumentId, (Arc<Instrument>, bool)> = Default::default();
        let mut out = Vec::with_capacity(orders.len());
        for o in orders {
            if let std::collections::hash_map::Entry::Vacant(v) = seen.entry(o.instrument_id) {
                let i = self.cached_instrument(o.instrument_id).await?;
                let open = crate::calendars::calendar_of(self, &i).await?.calendar.is_open(now);
                v.insert((i, open));
            }
            let (i, open) = &seen[&o.instrument_id];
            let in_band = i.in_band(o.price);
            out.push(self.order_detail(o, in_band, *open));
        }
        Ok(out)
    }

    /// Works part of a parent order in the book at a price (from 05:30; it waits for the open).
    pub(crate) async fn create_order_inner(&self, actor: &Actor, input: NewOrder) -> Result<OrderDetail, EngineError> {
        crate::context::require_trade(actor)?;
        self.throttle(actor, Write::Orders)?;
        // An iceberg checked and shown with a block that changed meanwhile (this node had
        // not heard yet) is refused by the insert: it is checked and written again with the
        // instrument read afresh (ADR 0057).
        crate::core::again_on_new_block(|| self.place_order(actor, &input)).await
    }

    /// [`Self::create_order_inner`] once: [`crate::core::block_changed`] when the block it
    /// used is no longer the instrument's (its cached copy is dropped).
    async fn place_order(&self, actor: &Actor, input: &NewOrder) -> Result<OrderDetail, EngineError> {
        let now = self.clock.now();
        // Everything but the parent's state and quantities comes from the caches (ADR
        // 0014, 0019); those two the insert itself checks: only into an active parent,
        // and the database refuses a tradable quantity below zero. No read, no lock
        // ahead of the write.
        let eligible_brokers = self.cached_brokers(actor.user.company_id).await?;
        let parent = self.cached_parent(actor, input.parent_order_id).await?;
        let instrument = self.cached_instrument(parent.instrument_id).await?;
        if !crate::context::may_trade(actor, &instrument) {
            return Err(not_found_parent());
        }
        // From its exchange's parent-order opening: an order worked before the open waits for it.
        let calendar = crate::calendars::calendar_of(self, &instrument).await?;
        if !calendar.calendar.parent_orders_open(now) {
            return Err(calendar.closed(now));
        }
        let mut errors = Vec::new();
        if input.instrument_id.is_some_and(|i| i != parent.instrument_id) {
            errors.push(FieldError::new("instrument_id", "Must match the parent order"));
        }
        if input.direction.is_some_and(|d| d != parent.direction) {
            errors.push(FieldError::new("direction", "Must match the parent order"));
        }
        if !eligible_brokers.iter().any(|b| b.company_id == input.broker_id) {
            errors.push(FieldError::new("broker_id", "Choose one of the eligible brokers"));
        }
        crate::orders::check_price_and_quantity(&instrument, input.price, input.quantity, parent.quantity, &mut errors);
        check_min_execution(&instrument, input.min_execution, input.quantity, &mut errors);
        if !errors.is_empty() {
            return Err(EngineError::invalid_many(errors));
        }
        if !instrument.active {
            return Err(EngineError::Conflict { detail: "This instrument is not active.".into(), errors: vec![] });
        }
        // An order that names no size takes its parent's, up to its own quantity (ADR 0041).
        let min_execution =
            input.min_execution.map(Quantity::get).or(parent.min_execution.map(|m| m.min(input.quantity.get())));
        let order = ChildOrder {
            order_id: OrderId::new(),
            parent_order_id: parent.parent_order_id,
            company_id: parent.company_id,
            created_by: actor.user.user_id,
            instrument_id: parent.instrument_id,
            direction: parent.direction,
            state: OrderState::Working,
            price: input.price.normalize(),
            quantity: input.quantity.get(),
            iceberg: input.iceberg,
            residual: input.residual,
            min_execution,
            broker_id: input.broker_id,
            created_at: now,
            updated_at: now,
        };
        let log = action_log(
            now,
            Some(actor.user.user_id),
            "order",
            Some(order.order_id.0),
            "create",
            json!({"after": order_json(&order)}),
        )
        .keyed(input.idempotency.as_ref(), 0);
        match self.store.insert_order_audited(&order, instrument.min_quantity, ParentState::Active, &log).await {
            Ok(true) => {}
            Ok(false) => {
                // Refused by the insert's own conditions: a block that changed, a parent
                // no longer active, or the company's trading stopped (the kill switch, ADR 0021).
                let mut tx = self.store.single().await?;
                if order.shows_by_block()
                    && tx.instrument(instrument.instrument_id).await?.map(|i| i.min_quantity)
                        != Some(instrument.min_quantity)
                {
                    self.caches.instruments.drop_key(&instrument.instrument_id);
                    return Err(crate::core::block_changed());
                }
                self.require_trading(&mut tx, actor.user.company_id).await?;
                return Err(EngineError::Conflict {
                    detail: "This parent order is no longer active.".into(),
                    errors: vec![],
                });
            }
            // PostgreSQL's order trigger refused an insert that raced the kill switch (ADR 0021).
            Err(StoreError::Check(c)) if c == COMPANY_TRADING_STOPPED => return Err(trading_stopped()),
            Err(StoreError::Check(_)) => {
                return Err(EngineError::invalid_many(vec![FieldError::new("quantity", "Exceeds available quantity")]));
            }
            Err(e) => return Err(e.into()),
        }
        self.publish_order(&order);
        // Its quantities moved; it was active when the order went in.
        self.publish_parent(&ParentOrder { state: ParentState::Active, ..(*parent).clone() });
        self.publish_book(order.instrument_id);
        Ok(self.order_detail(order, true, calendar.calendar.is_open(now)))
    }

    /// After a trade or a broker's decline moved their matched quantity: each of the
    /// `locked` parents (locked by this transaction) filled or active again as the
    /// parent lifecycle says, read in one statement (locking them again waits for nothing).
    pub(crate) async fn settle_parents(
        &self,
        tx: &mut S::Tx,
        locked: &mut [ParentOrder],
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<(), EngineError> {
        let ids: std::collections::BTreeSet<ParentOrderId> = locked.iter().map(|p| p.parent_order_id).collect();
        let seen = tx.lock_parent_orders(&ids).await?;
        let mut changes = Vec::new();
        for p in locked.iter_mut() {
            let id = p.parent_order_id;
            let v = seen
                .iter()
                .find(|v| v.parent.parent_order_id == id)
                .ok_or_else(|| EngineError::Internal(format!("parent {id} gone")))?;
            let settle = ParentEvent::Settle { quantity: v.parent.quantity, matched: v.matched };
            let to = parent_transition(v.parent.state, settle).map_err(|e| EngineError::Internal(e.to_string()))?;
            if to != v.parent.state {
                changes.push((id, to));
                p.state = to;
            }
        }
        tx.update_parent_order_states(&changes, now).await?;
        Ok(())
    }

    /// Changes a working order's quantity, price, residual or iceberg (from 05:30 to the close).
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id, order = %id))]
    pub async fn edit_order(&self, actor: &Actor, id: OrderId, edit: OrderEdit) -> Result<OrderDetail, EngineError> {
        crate::context::require_trade(actor)?;
        self.throttle(actor, Write::Orders)?;
        crate::core::again_on_new_block(|| self.edit_once(actor, id, &edit)).await
    }

    async fn edit_once(&self, actor: &Actor, id: OrderId, edit: &OrderEdit) -> Result<OrderDetail, EngineError> {
        let now = self.clock.now();
        let exchanges = crate::calendars::exchange_calendars(self).await?;
        let mut tx = self.store.write().await?;
        let current =
            tx.order(id).await?.filter(|o| o.company_id == actor.user.company_id).ok_or_else(not_found_order)?;
        let instrument = self.instrument_in(&mut tx, current.instrument_id).await?;
        if !crate::context::may_trade(actor, &instrument) {
            return Err(not_found_order());
        }
        let calendar = calendar_for(&exchanges, &self.config.calendar, &instrument.exchange_iso_code);
        if !calendar.calendar.parent_orders_open(now) {
            return Err(calendar.closed(now));
        }
        let view = self.own_parent(&mut tx, actor, current.parent_order_id, true).await?;
        // Re-read under the parent's lock.
        let mut o = tx.order(id).await?.ok_or_else(not_found_order)?;
        transition(o.state, OrderEvent::Edit).map_err(|_| EngineError::Conflict {
            detail: "Only a working order can be edited.".into(),
            errors: vec![],
        })?;
        let before = o.clone();
        let tradable = Quantities::of(view.parent.quantity, view.working, view.matched).map_or(0, |q| q.tradable);
        let quantity = match edit.quantity {
            Some(q) => q,
            None => Quantity::new(o.quantity).map_err(|e| EngineError::Internal(format!("order {id}: {e}")))?,
        };
        let price = edit.price.unwrap_or(o.price);
        let mut errors = Vec::new();
        // What is left of the parent with this order's own quantity back (both bounded).
        let available = tradable.checked_add(o.quantity).ok_or_else(|| EngineError::Internal("overflow".into()))?;
        crate::orders::check_price_and_quantity(&instrument, price, quantity, available, &mut errors);
        // A price kept is not checked again (ADR 0034): an order the band moved away from can
        // still have its quantity or flags changed; it matches once the band comes back.
        if price == o.price {
            errors.retain(|e| e.field != "limit_price");
        }
        // A size kept is checked again only when the quantity changes: a remainder below
        // its size (ADR 0041) keeps it while its price or flags change.
        let min_execution = match edit.min_execution {
            Some(m) => m,
            None => o
                .min_execution
                .map(Quantity::new)
                .transpose()
                .map_err(|e| EngineError::Internal(format!("order {id}: {e}")))?,
        };
        if edit.min_execution.is_some() || edit.quantity.is_some_and(|q| q.get() != o.quantity) {
            check_min_execution(&instrument, min_execution, quantity, &mut errors);
        }
        if !errors.is_empty() {
            return Err(EngineError::invalid_many(errors));
        }
        o.min_execution = min_execution.map(Quantity::get);
        o.quantity = quantity.get();
        o.price = price.normalize();
        o.residual = edit.residual.unwrap_or(o.residual);
        o.iceberg = edit.iceberg.unwrap_or(o.iceberg);
        o.updated_at = now;
        if o.shows_by_block() {
            crate::core::hold_seen_block(&self.caches, &mut tx, &instrument).await?;
        }
        tx.update_order(&before, &o).await?;
        audit(
            &mut tx,
            now,
            Some(actor.user.user_id),
            "order",
            Some(id.0),
            "update",
            json!({"before": order_json(&before), "after": order_json(&o)}),
        )
        .await?;
        tx.commit().await?;
        self.publish_order(&o);
        self.publish_parent(&view.parent);
        self.publish_book(o.instrument_id);
        let in_band = instrument.in_band(o.price);
        Ok(self.order_detail(o, in_band, calendar.calendar.is_open(now)))
    }

    /// The anonymous book of an instrument the caller may see, with its own share marked.
    pub async fn book(&self, actor: &Actor, instrument_id: InstrumentId) -> Result<Book, EngineError> {
        let instrument = self.visible_instrument(actor, instrument_id).await?;
        let snapshot = self.cached_levels(instrument_id).await?;
        Ok(Book { instrument, snapshot, own: Some(actor.user.company_id) })
    }

    /// The anonymous book of an instrument as the shared topic shows it (no own shares).
    pub async fn anonymous_book(&self, instrument_id: InstrumentId) -> Result<Book, EngineError> {
        let instrument = self.cached_instrument(instrument_id).await?;
        let snapshot = self.cached_levels(instrument_id).await?;
        Ok(Book { instrument, snapshot, own: None })
    }

    /// What the owners' screens show of orders that changed, for their frames (ADR 0029):
    /// each child order as its owner lists it (from the cached instrument, no read), and
    /// the parents' current state in one read. A parent not found is left out.
    pub async fn pushed(
        &self,
        orders: Vec<ChildOrder>,
        parents: &std::collections::BTreeSet<ParentOrderId>,
    ) -> Result<(Vec<OrderDetail>, Vec<ParentOrderDetail>), EngineError> {
        let children = self.details_now(orders).await?;
        let mut details = Vec::with_capacity(parents.len());
        if !parents.is_empty() {
            for view in self.store.single().await?.parent_orders_by_id(parents).await? {
                details.push(self.detail(view).await?);
            }
        }
        Ok((children, details))
    }

    /// Schedules the next close after `after` of the venue's calendar and of each
    /// exchange's (ADR 0052; idempotent per calendar); none for a calendar always open.
    /// Returns the exchanges it read, with their instruments' counts.
    pub(crate) async fn schedule_close(
        &self,
        tx: &mut S::Tx,
        after: DateTime<Utc>,
    ) -> Result<Vec<(Exchange, i64)>, EngineError> {
        let venue = &self.config.calendar;
        let mut closes = vec![(None, venue.next_close(after))];
        let exchanges = tx.exchanges().await?;
        for (e, _) in &exchanges {
            let calendar = crate::calendars::exchange_calendar(e, venue);
            closes.push((Some(e.mic.clone()), calendar.next_close(after)));
        }
        for (mic, at) in closes {
            let Some(at) = at else { continue };
            tx.insert_timer(&Timer {
                timer_id: Uuid::now_v7(),
                kind: DAY_CLOSE.into(),
                payload: json!({"close": at, "mic": mic}),
                due_at: at,
                dedupe_key: Some(close_key(mic.as_deref())),
                attempts: 0,
            })
            .await?;
        }
        Ok(exchanges)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;
    use upstairs_domain::UserId;

    fn o(dir: Direction, price: &str, q: i64, iceberg: bool, company: CompanyId, state: OrderState) -> ChildOrder {
        ChildOrder {
            order_id: OrderId::new(),
            parent_order_id: ParentOrderId::new(),
            company_id: company,
            created_by: UserId::new(),
            instrument_id: InstrumentId::new(),
            direction: dir,
            state,
            price: Decimal::from_str(price).unwrap(),
            quantity: q,
            iceberg,
            residual: true,
            min_execution: None,
            broker_id: CompanyId::new(),
            created_at: Utc::now(),
            updated_at: Utc::now(),
        }
    }

    /// What the store's `book_rows` computes, for these unit tests.
    fn as_rows(orders: &[ChildOrder], min_block: i64) -> Vec<BookRow> {
        orders
            .iter()
            .filter(|o| o.state == OrderState::Working)
            .map(|o| BookRow {
                price: o.price.normalize(),
                direction: o.direction,
                company_id: o.company_id,
                shown: upstairs_domain::order::shown_quantity(o.quantity, o.iceberg, min_block),
            })
            .collect()
    }

    #[test]
    fn levels_aggregate_hide_icebergs_and_mark_own() {
        let (a, b) = (CompanyId::new(), CompanyId::new());
        let orders = vec![
            o(Direction::Buy, "94.70", 1000, false, a, OrderState::Working),
            o(Direction::Buy, "94.700", 5000, true, b, OrderState::Working),
            o(Direction::Sell, "94.75", 700, false, b, OrderState::Working),
            o(Direction::Sell, "94.75", 900, false, a, OrderState::AwaitingMatch),
        ];
        let rows = as_rows(&orders, 500);
        let levels = book_levels(&rows, Some(a));
        assert_eq!(levels.len(), 2);
        assert_eq!(levels[0].price, Decimal::from_str("94.75").unwrap());
        assert_eq!(
            (levels[0].sell_quantity, levels[0].own_sell_quantity),
            (700, 0),
            "locked orders are not in the book"
        );
        assert_eq!(levels[1].price.to_string(), "94.7");
        assert_eq!((levels[1].buy_quantity, levels[1].own_buy_quantity), (1500, 1000), "iceberg shows the min block");
        let anon = book_levels(&rows, None);
        assert!(anon.iter().all(|l| l.own_buy_quantity == 0 && l.own_sell_quantity == 0));
    }

    #[test]
    fn each_company_share_is_what_its_view_marks_as_own() {
        let (a, b) = (CompanyId::new(), CompanyId::new());
        let orders = vec![
            o(Direction::Buy, "94.70", 1000, false, a, OrderState::Working),
            o(Direction::Buy, "94.70", 600, false, a, OrderState::Working),
            o(Direction::Buy, "94.700", 5000, true, b, OrderState::Working),
            o(Direction::Sell, "94.75", 700, false, b, OrderState::Working),
        ];
        let book = BookLevels::of(&as_rows(&orders, 500));
        let shares = book.shares();
        assert_eq!(shares.len(), 2);
        for (company, share) in &shares {
            let marked: Vec<_> = book
                .seen_by(Some(*company))
                .into_iter()
                .filter(|l| l.own_buy_quantity + l.own_sell_quantity > 0)
                .map(|l| (l.price, l.own_buy_quantity, l.own_sell_quantity))
                .collect();
            assert_eq!(share, &marked);
        }
        let p = |s: &str| Decimal::from_str(s).unwrap();
        assert_eq!(shares[&a], vec![(p("94.7"), 1600, 0)], "one entry per price");
        assert_eq!(shares[&b], vec![(p("94.75"), 0, 700), (p("94.7"), 500, 0)], "best first, an iceberg at its block");
    }
}
