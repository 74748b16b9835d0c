//! Withdrawals: a trader's cancel of a child or parent order and the close's expiry of
//! the day's orders. Each ends what hangs on the order (pending match requests, open
//! RFQs and their quotes), so this feature comes after matches and RFQs (ADR 0032).

use chrono::{DateTime, Utc};
use serde_json::json;
use upstairs_domain::match_request::{MatchRequestEvent, MatchRequestState, transition as match_transition};
use upstairs_domain::order::{OrderEvent, OrderState, ParentEvent, parent_transition, transition};
use upstairs_domain::{InstrumentId, OrderId, ParentOrderId};

use crate::Store;
use crate::calendars::closes_with;
use crate::context::{Actor, audit};
use crate::core::service;
use crate::error::EngineError;
use crate::matches::Matches;
use crate::model::*;
use crate::notifications::Notifications;
use crate::orders::{OrderDetail, Orders, not_found_order, not_found_parent};
use crate::ports::*;
use crate::ratelimit::Write;
use crate::reports::FixReports;
use crate::rfqs::Rfqs;

service!(
    /// Cancels of child and parent orders and the close's expiry of the day.
    Withdrawals { fix_reports: FixReports, notifications: Notifications, orders: Orders, matches: Matches, rfqs: Rfqs }
);

impl<S: Store> Withdrawals<S> {
    /// Cancels a parent order and its working child orders; refused once anything matched.
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id, parent = %id))]
    pub async fn cancel_parent_order(&self, actor: &Actor, id: ParentOrderId) -> Result<(), EngineError> {
        self.cancel_parent_order_from(actor, id, None).await
    }

    /// [`Self::cancel_parent_order`], asked by an execution system with the cancel's own
    /// ClOrdID when it came by FIX.
    pub(crate) async fn cancel_parent_order_from(
        &self,
        actor: &Actor,
        id: ParentOrderId,
        fix_cl_ord_id: Option<&str>,
    ) -> Result<(), EngineError> {
        crate::context::require_trade(actor)?;
        self.throttle(actor, Write::Orders)?;
        // Its open RFQs are withdrawn first, each in its own transaction, when the
        // parent can be cancelled at all.
        let seen = self.orders.own_parent(&mut self.store.single().await?, actor, id, false).await?;
        if !crate::context::may_trade(actor, &*self.cached_instrument(seen.parent.instrument_id).await?) {
            return Err(not_found_parent());
        }
        if seen.parent.state == ParentState::Active && seen.matched == 0 {
            self.rfqs.cancel_rfqs_of(actor, id).await?;
        }
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let view = self.orders.own_parent(&mut tx, actor, id, true).await?;
        let to = parent_transition(view.parent.state, ParentEvent::Cancel { matched: view.matched })
            .map_err(|e| EngineError::Conflict { detail: e.to_string(), errors: vec![] })?;
        let children = tx
            .orders(&OrderFilter {
                parent_order_id: Some(id),
                states: vec![OrderState::Working, OrderState::AwaitingMatch],
                ..Default::default()
            })
            .await?;
        let mut touched = Vec::new();
        for before in children {
            let mut o = before.clone();
            o.state = transition(o.state, OrderEvent::Cancel)
                .map_err(|e| EngineError::Conflict { detail: e.to_string(), errors: vec![] })?;
            o.updated_at = now;
            tx.update_order(&before, &o).await?;
            touched.push(o);
        }
        tx.update_parent_order_state(id, to, now).await?;
        let mut cancelled = view.clone();
        cancelled.parent.state = to;
        self.fix_reports.report_parent_state(&mut tx, &cancelled, fix_cl_ord_id, now).await?;
        audit(
            &mut tx,
            now,
            Some(actor.user.user_id),
            "parent_order",
            Some(id.0),
            "cancel",
            json!({"cancelled_orders": touched.iter().map(|o| o.order_id).collect::<Vec<_>>()}),
        )
        .await?;
        tx.commit().await?;
        self.poke();
        for o in &touched {
            self.publish_order(o);
        }
        if let Some(o) = touched.first() {
            self.publish_book(o.instrument_id);
        }
        self.publish_parent(&cancelled.parent);
        Ok(())
    }

    /// Cancels a working (or awaiting-match) order; its quantity returns to the parent.
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id, order = %id))]
    pub async fn cancel_order(&self, actor: &Actor, id: OrderId) -> Result<OrderDetail, EngineError> {
        crate::context::require_trade(actor)?;
        self.throttle(actor, Write::Orders)?;
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let current =
            tx.order(id).await?.filter(|o| o.company_id == actor.user.company_id).ok_or_else(not_found_order)?;
        let instrument = self.instrument_in(&mut tx, current.instrument_id).await?;
        if !crate::context::may_trade(actor, &instrument) {
            return Err(not_found_order());
        }
        let view = self.orders.own_parent(&mut tx, actor, current.parent_order_id, true).await?;
        let before = tx.order(id).await?.ok_or_else(not_found_order)?;
        if before.state == OrderState::AwaitingMatch {
            // Its match request ends: withdrawn by the taker, rejected by the responder.
            drop(tx);
            self.matches.end_match_requests_of(actor, id).await?;
            let o = self.store.single().await?.order(id).await?.ok_or_else(not_found_order)?;
            return Ok(self.orders.order_detail(o, false, true));
        }
        let mut o = before.clone();
        o.state = transition(o.state, OrderEvent::Cancel).map_err(|_| EngineError::Conflict {
            detail: "Only a working or awaiting-match order can be cancelled.".into(),
            errors: vec![],
        })?;
        o.updated_at = now;
        tx.update_order(&before, &o).await?;
        audit(&mut tx, now, Some(actor.user.user_id), "order", Some(id.0), "cancel", json!({"quantity": o.quantity}))
            .await?;
        tx.commit().await?;
        self.publish_order(&o);
        self.publish_parent(&view.parent);
        self.publish_book(o.instrument_id);
        Ok(self.orders.order_detail(o, false, true))
    }

    /// The close at `close`: every working, locked or reserved child order placed up to
    /// then expires and its quantity returns to its parent; pending match requests made
    /// up to then time out. A late run (after a restart or a retry) never touches what
    /// was placed after `close`. Only the instruments on the closing calendar end their
    /// day: the exchange's of `mic`, or the venue's own (ADR 0052). Returns how many
    /// orders expired.
    pub async fn expire_day(&self, close: DateTime<Utc>, mic: Option<&str>) -> Result<usize, EngineError> {
        let exchanges = crate::calendars::exchange_calendars(self).await?;
        // Open RFQs end first, each with its responses and reserved order.
        self.rfqs.expire_rfqs(close, &exchanges, mic).await?;
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let states = [OrderState::Working, OrderState::AwaitingMatch, OrderState::AwaitingRfqAcceptance];
        let mut open = Vec::new();
        for seen in tx.orders_in_states(&states, close).await? {
            if closes_with(&exchanges, &*self.instrument_in(&mut tx, seen.instrument_id).await?, mic) {
                open.push(seen);
            }
        }
        // Lock the parents as every other writer of their orders does, all in one statement
        // (ids ascending) before the first order is written, so that none is waited for
        // while an order or a book level is held (ADR 0057); then read each order again:
        // what it is now is what the compare-and-set expects.
        tx.lock_parent_orders(&open.iter().map(|o| o.parent_order_id).collect()).await?;
        let mut expired = Vec::new();
        for seen in open {
            let Some(before) = tx.order(seen.order_id).await? else { continue };
            if transition(before.state, OrderEvent::Expire).is_err() {
                continue;
            }
            let mut o = before.clone();
            o.state = transition(o.state, OrderEvent::Expire).map_err(|e| EngineError::Internal(e.to_string()))?;
            o.updated_at = now;
            tx.update_order(&before, &o).await?;
            expired.push(o);
        }
        if !expired.is_empty() {
            audit(
                &mut tx,
                now,
                None,
                "order",
                None,
                "expire_at_close",
                json!({"orders": expired.iter().map(|o| o.order_id).collect::<Vec<_>>()}),
            )
            .await?;
        }
        // Pending match requests end with the day; their orders expired above.
        let (mut notices, mut rows) = (Vec::new(), NewRows::default());
        let pending = tx.match_requests_in_state(MatchRequestState::Pending).await?;
        for m in pending.into_iter().filter(|m| m.created_at <= close) {
            if !closes_with(&exchanges, &*self.instrument_in(&mut tx, m.instrument_id).await?, mic) {
                continue;
            }
            // Ended at the close, not by its own deadline: it does not count against the
            // responder's reliability (`received_by_state`).
            let at = close.min(now);
            let to = match_transition(m.state, MatchRequestEvent::TimeOut)
                .map_err(|e| EngineError::Internal(e.to_string()))?;
            tx.update_match_request_state(m.match_request_id, m.state, to, at).await?;
            let ended = MatchRequest { state: to, updated_at: at, ..m };
            let told = self.notifications.notify_ended(&mut tx, &mut rows, &ended, MatchRequestEvent::TimeOut, now);
            notices.extend(told.await?);
        }
        tx.insert_rows(&rows).await?;
        tx.commit().await?;
        self.notifications.publish_notifications(notices);
        let mut instruments: Vec<InstrumentId> = expired.iter().map(|o| o.instrument_id).collect();
        instruments.sort();
        instruments.dedup();
        for o in &expired {
            self.publish_order(o);
        }
        for i in instruments {
            self.publish_book(i);
        }
        Ok(expired.len())
    }
}
