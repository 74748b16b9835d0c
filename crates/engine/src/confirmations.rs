//! After a match (DESIGN §4, §7; ADR 0018): each side's broker confirms the trade by
//! e-mail link, first accepting it, then confirming the fill. A link is a random token
//! stored hashed, bound to one order and one step, expiring, answered once. Opening it
//! changes nothing ([`Confirmations::broker_confirmation`]); only the answer
//! ([`Confirmations::confirm_trade`]) does.

use chrono::{DateTime, Duration, Utc};
use serde_json::json;
use upstairs_domain::OrderId;
use upstairs_domain::match_request::{MatchRequestEvent, MatchRequestState, transition as mr_transition};
use upstairs_domain::order::{OrderEvent, transition};

use crate::Store;
use crate::context::audit;
use crate::core::service;
use crate::error::{EngineError, StoreError};
use crate::model::*;
use crate::orders::Orders;
use crate::ports::*;
use crate::reports::FixReports;
use crate::security;

/// How long a broker's link stays usable.
pub const LINK_LIFETIME: Duration = Duration::days(7);

pub const ALREADY_ACCEPTED: &str = "Order already accepted";
pub const ALREADY_FILLED: &str = "Order already filled";
const INVALID_LINK: &str = "This link is not valid or has expired.";

/// A broker's answer to one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    pub step: ConfirmationStep,
    pub yes: bool,
    /// Answered by the broker's FIX session (a TradeCaptureReportAck), not its link.
    pub by_fix: bool,
}

/// What a broker's link shows: the trade of its client, and where the confirmation stands.
#[derive(Clone, Debug, PartialEq)]
pub struct TradeConfirmation {
    pub order_id: OrderId,
    pub step: ConfirmationStep,
    pub state: upstairs_domain::order::OrderState,
    pub trade: TradeDetails,
    /// The broker's answer to this step, once given.
    pub answer: Option<bool>,
}

service!(
    /// The brokers' confirmations of a trade: asked, answered by link or FIX.
    Confirmations { fix_reports: FixReports, orders: Orders }
);

impl<S: Store> Confirmations<S> {
    /// Inside the transaction that matched `m`: one accept link per side, e-mailed to
    /// the side's broker, and a TradeCaptureReport to a broker with a FIX session (ADR
    /// 0025); at the match, an ExecutionReport to the execution systems of the parents.
    pub(crate) async fn ask_brokers(
        &self,
        tx: &mut S::Tx,
        rows: &mut NewRows,
        m: &MatchRequest,
        orders: &[ChildOrder],
        step: ConfirmationStep,
        now: DateTime<Utc>,
    ) -> Result<(), EngineError> {
        Self::read_named(tx, orders.iter()).await?;
        // The accept step is asked for as the match is made; the fill step reads when.
        let matched_at = match step {
            ConfirmationStep::Accept => m.updated_at,
            ConfirmationStep::Fill => Self::matched_at(tx, m).await?,
        };
        if step == ConfirmationStep::Accept {
            let trades: Vec<_> = orders.iter().map(|o| (o.clone(), false)).collect();
            self.fix_reports.report_parent_fills(tx, &trades, now).await?;
        }
        for o in orders {
            if let Some(other) = orders.iter().find(|x| x.order_id != o.order_id) {
                self.fix_reports.report_trade(tx, m, o, other, step, now).await?;
            }
            let token = security::new_token();
            rows.broker_confirmations.push(BrokerConfirmation {
                token_hash: security::token_hash(&token),
                order_id: o.order_id,
                match_request_id: m.match_request_id,
                broker_id: o.broker_id,
                step,
                created_at: now,
                expires_at: now + LINK_LIFETIME,
                answered: None,
            });
            let broker = tx.company(o.broker_id).await?;
            let to = broker
                .as_ref()
                .filter(|b| b.trade_confirmation_via_email_enabled)
                .and_then(|b| b.trade_confirmation_email.clone());
            let Some(to) = to else {
                tracing::warn!(order = %o.order_id, broker = %o.broker_id, "the broker takes no confirmations by e-mail");
                continue;
            };
            let other = orders.iter().find(|x| x.order_id != o.order_id);
            // At the match nothing is allocated yet: no read for it on the trade's path.
            let trade = self.trade_details(tx, m, o, other, matched_at, step == ConfirmationStep::Fill).await?;
            let (path, flag) = match step {
                ConfirmationStep::Accept => ("accept-order", "accepted"),
                ConfirmationStep::Fill => ("fill-order", "filled"),
            };
            let base = self.config.public_url.trim_end_matches('/');
            let link = |yes: bool| format!("{base}/{path}?order_id={}&token={token}&{flag}={yes}", o.order_id);
            let template =
                EmailTemplate::TradeConfirmation { step, trade, confirm_link: link(true), decline_link: link(false) };
            let (message, timer) = crate::core::email_rows(&self.mail_domain(), now, &to, template);
            rows.outbox.push(message);
            rows.timers.push(timer);
        }
        Ok(())
    }

    /// What the brokers' e-mails of a trade of `orders` name (both sides' brokers, clients
    /// and traders), read into the transaction's memo at once; a caller may read them
    /// before it takes its locks.
    pub(crate) async fn read_named(
        tx: &mut S::Tx,
        orders: impl Iterator<Item = &ChildOrder> + Clone,
    ) -> Result<(), EngineError> {
        let companies: Vec<_> = orders.clone().flat_map(|o| [o.broker_id, o.company_id]).collect();
        let users: Vec<_> = orders.map(|o| o.created_by).collect();
        Ok(tx.read_ahead(&companies, &users).await?)
    }

    /// What the link of `order` shows, without changing anything.
    pub async fn broker_confirmation(
        &self,
        order: OrderId,
        token: &str,
        step: ConfirmationStep,
    ) -> Result<TradeConfirmation, EngineError> {
        let mut tx = self.store.read().await?;
        let c = self.valid_link(&mut tx, order, token, step).await?;
        let m = tx.match_request(c.match_request_id).await?.ok_or_else(invalid_link)?;
        let o = tx.order(order).await?.ok_or_else(invalid_link)?;
        let matched_at = Self::matched_at(&mut tx, &m).await?;
        Ok(TradeConfirmation {
            order_id: order,
            step,
            state: o.state,
            trade: self.trade_details(&mut tx, &m, &o, None, matched_at, true).await?,
            answer: c.answered.map(|(_, a)| a),
        })
    }

    /// A broker answers one step through its link. Both sides accepted: the match and
    /// both orders `BROKER_ACCEPTED`, and the fill links go out; one side only:
    /// `PARTIAL_BROKER_ACCEPTED`. The same for the fill. A broker declining breaks the
    /// trade down: both orders `BROKER_REJECTED`, their quantities back to the parents.
    #[tracing::instrument(skip_all, fields(order = %order))]
    pub async fn confirm_trade(
        &self,
        order: OrderId,
        token: &str,
        answer: Answer,
    ) -> Result<TradeConfirmation, EngineError> {
        let seen = self.valid_link(&mut self.store.single().await?, order, token, answer.step).await?;
        self.answer_confirmation(seen, answer).await
    }

    /// A broker's answer to the link `seen`, whichever channel it came by (e-mail, FIX):
    /// the first answer wins, a second is told it was done.
    pub(crate) async fn answer_confirmation(
        &self,
        seen: BrokerConfirmation,
        answer: Answer,
    ) -> Result<TradeConfirmation, EngineError> {
        let order = seen.order_id;
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        if seen.answered.is_some() {
            return Err(already(answer.step));
        }
        let mut locked: Vec<ParentOrder> =
            tx.lock_parents_of_match_request(seen.match_request_id).await?.into_iter().map(|v| v.parent).collect();
        let m = tx.match_request(seen.match_request_id).await?.ok_or_else(invalid_link)?;
        let ids = [m.requesting_order_id, m.responding_order_id];
        // Under the locks: the answer is written once; a second click loses here.
        match tx.answer_broker_confirmation(&seen.token_hash, answer.yes, now).await {
            Err(StoreError::Stale(_)) => return Err(already(answer.step)),
            r => r?,
        }
        let m = tx.match_request(m.match_request_id).await?.ok_or_else(invalid_link)?;
        let all = tx
            .broker_confirmations_of_match(m.match_request_id, answer.step)
            .await?
            .iter()
            .all(|c| c.answered.is_some_and(|(_, yes)| yes));
        let (mr_event, order_event) = match (answer.step, answer.yes) {
            (_, false) => (MatchRequestEvent::BrokerReject, OrderEvent::BrokerReject),
            (ConfirmationStep::Accept, true) => {
                (MatchRequestEvent::BrokerAccept { all }, OrderEvent::BrokerAccept { all })
            }
            (ConfirmationStep::Fill, true) => (MatchRequestEvent::BrokerFill { all }, OrderEvent::BrokerFill { all }),
        };
        let to = mr_transition(m.state, mr_event).map_err(|_| no_longer(m.state))?;
        tx.update_match_request_state(m.match_request_id, m.state, to, now).await?;
        let mut changed = Vec::with_capacity(2);
        for id in ids {
            let before = tx.order(id).await?.ok_or_else(invalid_link)?;
            let mut after = before.clone();
            after.state = transition(before.state, order_event).map_err(|_| no_longer(m.state))?;
            after.updated_at = now;
            tx.update_order(&before, &after).await?;
            changed.push(after);
        }
        if !answer.yes {
            // The quantity is back on the parents: a filled parent works again.
            self.orders.settle_parents(&mut tx, &mut locked, now).await?;
            let undone: Vec<_> = changed.iter().map(|o| (o.clone(), true)).collect();
            self.fix_reports.report_parent_fills(&mut tx, &undone, now).await?;
        }
        let m = MatchRequest { state: to, updated_at: now, ..m };
        // A decline breaks the trade down: both traders are told at once, and the other
        // side's broker by e-mail (its own links no longer work).
        let told = if answer.yes { Vec::new() } else { crate::notifications::broker_rejected(&m, now) };
        let mine = changed.iter().find(|o| o.order_id == order).cloned().ok_or_else(invalid_link)?;
        let matched_at = Self::matched_at(&mut tx, &m).await?;
        if !answer.yes {
            let mut rows = NewRows { notifications: told.clone(), ..NewRows::default() };
            for o in &changed {
                let contra = changed.iter().find(|c| c.order_id != o.order_id).unwrap_or(&mine);
                // Each side's AllocationInstruction, if its trader sent one, is cancelled too.
                self.fix_reports.report_allocation_cancel(&mut tx, o, now).await?;
                if o.order_id != order {
                    self.tell_declined(&mut tx, &mut rows, &m, o, answer.step, matched_at, now).await?;
                } else if answer.by_fix {
                    // The decliner's own report was answered by the decline itself.
                    continue;
                }
                // A broker on FIX holds the step's TradeCaptureReport: it is cancelled (the
                // decliner's own too when it declined by its link).
                self.fix_reports.report_trade_cancel(&mut tx, &m, o, contra, answer.step, matched_at, now).await?;
            }
            tx.insert_rows(&rows).await?;
        }
        if answer.step == ConfirmationStep::Accept && answer.yes && all {
            let mut rows = NewRows::default();
            self.ask_brokers(&mut tx, &mut rows, &m, &changed, ConfirmationStep::Fill, now).await?;
            tx.insert_rows(&rows).await?;
        }
        let action = match (answer.step, answer.yes) {
            (ConfirmationStep::Accept, true) => "broker_accepted",
            (ConfirmationStep::Fill, true) => "broker_filled",
            (_, false) => "broker_rejected",
        };
        audit(
            &mut tx,
            now,
            None,
            "order",
            Some(order.0),
            action,
            json!({"broker_id": seen.broker_id, "match_request_id": m.match_request_id, "state": to}),
        )
        .await?;
        let trade = self.trade_details(&mut tx, &m, &mine, None, matched_at, true).await?;
        tx.commit().await?;
        self.poke();
        for o in &changed {
            self.publish_order(o);
        }
        for p in &locked {
            self.publish_parent(p);
        }
        for n in told {
            self.publish(crate::events::Event::NotificationChanged { user_id: n.user_id, notification: n });
        }
        Ok(TradeConfirmation { order_id: order, step: answer.step, state: mine.state, trade, answer: Some(answer.yes) })
    }

    /// E-mails `o`'s broker (when it takes confirmations by e-mail) that the trade of `m`,
    /// matched at `matched_at`, was declined at `step` by the other side's broker.
    #[allow(clippy::too_many_arguments)]
    async fn tell_declined(
        &self,
        tx: &mut S::Tx,
        rows: &mut NewRows,
        m: &MatchRequest,
        o: &ChildOrder,
        step: ConfirmationStep,
        matched_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<(), EngineError> {
        let broker = tx.company(o.broker_id).await?;
        let to = broker.filter(|b| b.trade_confirmation_via_email_enabled).and_then(|b| b.trade_confirmation_email);
        let Some(to) = to else { return Ok(()) };
        let trade = self.trade_details(tx, m, o, None, matched_at, true).await?;
        let (message, timer) =
            crate::core::email_rows(&self.mail_domain(), now, &to, EmailTemplate::TradeDeclined { step, trade });
        rows.outbox.push(message);
        rows.timers.push(timer);
        Ok(())
    }

    /// The link of `order` for `step`, if `token` is it and it has not expired.
    async fn valid_link(
        &self,
        tx: &mut S::Tx,
        order: OrderId,
        token: &str,
        step: ConfirmationStep,
    ) -> Result<BrokerConfirmation, EngineError> {
        let c = tx.broker_confirmation(&security::token_hash(token)).await?;
        c.filter(|c| c.order_id == order && c.step == step && c.expires_at > self.clock.now()).ok_or_else(invalid_link)
    }

    /// When the match of `m` was made: when its brokers were asked to accept it (the
    /// request's own last change moves with every broker's answer).
    async fn matched_at(tx: &mut S::Tx, m: &MatchRequest) -> Result<DateTime<Utc>, EngineError> {
        let asked = tx.broker_confirmations_of_match(m.match_request_id, ConfirmationStep::Accept).await?;
        Ok(asked.iter().map(|c| c.created_at).min().unwrap_or(m.updated_at))
    }

    /// The trade as `o`'s broker sees it, with its allocation when `allocated` may be
    /// (false: matched in this transaction, so not yet).
    pub(crate) async fn trade_details(
        &self,
        tx: &mut S::Tx,
        m: &MatchRequest,
        o: &ChildOrder,
        other: Option<&ChildOrder>,
        matched_at: DateTime<Utc>,
        allocated: bool,
    ) -> Result<TradeDetails, EngineError> {
        let name = |c: Option<Company>| c.map(|c| c.name).unwrap_or_default();
        let other = match other {
            Some(other) => other.clone(),
            None => {
                let id =
                    if o.order_id == m.requesting_order_id { m.responding_order_id } else { m.requesting_order_id };
                tx.order(id).await?.ok_or_else(invalid_link)?
            }
        };
        let trader = tx.user(o.created_by).await?;
        let instrument = self.instrument_in(tx, o.instrument_id).await?;
        let allocation = if allocated { tx.allocation(o.order_id).await? } else { None };
        let give_up = match allocation.as_ref().and_then(|a| a.give_up_broker_id) {
            Some(id) => tx.company(id).await?,
            None => None,
        };
        Ok(TradeDetails {
            broker_name: name(tx.company(o.broker_id).await?),
            client_name: name(tx.company(o.company_id).await?),
            trader_name: trader.map(|t| format!("{} {}", t.user.first_name, t.user.last_name)).unwrap_or_default(),
            instrument_name: instrument.name.clone(),
            direction: o.direction,
            quantity: o.quantity,
            price: o.price.normalize(),
            tick_size: Some(instrument.tick_size),
            counterparty_broker_name: name(tx.company(other.broker_id).await?),
            matched_at,
            allocations: allocation.map(|a| a.lines).unwrap_or_default(),
            give_up_broker_name: give_up.map(|c| c.name),
        })
    }
}

fn invalid_link() -> EngineError {
    EngineError::Invalid { detail: INVALID_LINK.into(), errors: vec![] }
}

fn already(step: ConfirmationStep) -> EngineError {
    let detail = match step {
        ConfirmationStep::Accept => ALREADY_ACCEPTED,
        ConfirmationStep::Fill => ALREADY_FILLED,
    };
    EngineError::Conflict { detail: detail.into(), errors: vec![] }
}

fn no_longer(state: MatchRequestState) -> EngineError {
    let detail = match state {
        MatchRequestState::Breakdown => "The trade was declined by a broker.",
        _ => "This trade cannot be confirmed any more.",
    };
    EngineError::Conflict { detail: detail.into(), errors: vec![] }
}
