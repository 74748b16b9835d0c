//! The FIX gateway's use cases (ADR 0025). The gateway (`crates/fix`) owns the wire and
//! the session protocol; here are what it stores and what its messages do:
//!
//! - a company's session: sequence numbers both ways and the frames it sent, so a resend
//!   after a restart replays them;
//! - the FIX outbox: trade reports to brokers and execution reports to execution
//!   systems, written as data ([`FixReport`]; `crates/fix` alone writes their FIX, ADR
//!   0030) in the transaction of the change that caused them, marked sent by the
//!   statement that files the frame under its sequence number (so exactly once);
//! - a broker's TradeCaptureReportAck, answered like the e-mail link
//!   ([`Fix::fix_confirm_trade`]), and an execution system's NewOrderSingle and
//!   OrderCancelRequest, which create and cancel parent orders as the API does.

use serde_json::json;
use std::collections::BTreeSet;
use upstairs_domain::order::Direction;
use upstairs_domain::{CompanyId, ParentOrderId, Permission};

use crate::Store;
use crate::confirmations::Confirmations;
use crate::confirmations::{Answer, TradeConfirmation};
use crate::context::{Actor, audit, require};
use crate::core::service;
use crate::error::EngineError;
use crate::model::*;
use crate::orders::NewParentOrder;
use crate::orders::Orders;
use crate::ports::*;
use crate::reports::FixReports;
pub use crate::reports::{
    AllocationReport, CancelRefusal, CancelRefusalReason, ExecutionKind, ExecutionReport, FixReport, LastFill,
    OrderStatus, RefusedAnswer, RefusedCancel, RefusedOrder, ReportedInstrument, TradeReport, allocation_id,
    parse_allocation_id, parse_trade_cancel_id, parse_trade_report_id, trade_cancel_id, trade_report_id, valid_comp_id,
};
use crate::reports::{enqueue_fix, enqueue_fix_as};
use crate::withdrawals::Withdrawals;

/// How long a node holds a company's FIX session without renewing it (ADR 0026): a node
/// that dies leaves the session to another after this.
pub const FIX_HOLD: chrono::TimeDelta = chrono::TimeDelta::seconds(30);
/// How often a node renews its hold, well inside [`FIX_HOLD`].
pub const FIX_HOLD_RENEW: std::time::Duration = std::time::Duration::from_secs(10);

/// The venue-wide lease of the node running the market-data session (ADR 0049).
pub const MARKET_DATA_LEASE: &str = "market-data";

/// How many unsent messages a session takes from the outbox at a time.
pub const OUTBOX_BATCH: i64 = 100;

/// An execution system's order as the gateway read it; `None` where a field was missing
/// or unreadable, so that the refusal can say which.
#[derive(Clone, Debug, Default)]
pub struct FixNewOrder {
    pub cl_ord_id: String,
    /// The trader's EMS id (Parties, role 11).
    pub trader: Option<String>,
    pub side: Option<Direction>,
    pub quantity: Option<i64>,
    /// MinQty (110): the parent's minimum execution size (ADR 0041).
    pub min_quantity: Option<i64>,
    pub symbol: Option<String>,
    pub security_id: Option<String>,
    pub exchange: Option<String>,
    pub text: Option<String>,
}

/// An execution system's order as its answer to an OrderMassStatusRequest reports it
/// (ADR 0050).
#[derive(Clone, Debug)]
pub struct FixOrderStatus {
    /// The order; its quantity is what the execution system still works (LeavesQty).
    pub order: FixNewOrder,
    /// Whether the execution system still works it (OrdStatus new, partly filled,
    /// pending or replaced); a filled, cancelled, rejected or expired order is not.
    pub working: bool,
    /// Why the gateway could not read it as an order (its side, quantity or MinQty).
    pub unreadable: Option<String>,
}

/// What a working order an execution system reported came to.
#[derive(Debug, PartialEq, Eq)]
pub enum FixStatusAnswer {
    /// A parent order made of it; its ExecutionReport (New) waits in the outbox.
    Created(ParentOrderId),
    /// Refused, with the reason for an ExecutionReport (Rejected), as a NewOrderSingle.
    Refused(String),
    /// Its parent's order cancelled: the execution system no longer works it.
    Cancelled(ParentOrderId),
    /// Nothing to do: known already, refused before, or done and never a parent here.
    Unchanged,
}

/// A pull a trader asked of the firm's execution system.
#[derive(Clone, Debug)]
pub struct EmsPull {
    /// The OrderMassStatusRequest's MassStatusReqID (584).
    pub request_id: String,
    pub requested_at: chrono::DateTime<chrono::Utc>,
}

/// What a NewOrderSingle came to.
#[derive(Debug)]
pub enum FixOrderAnswer {
    /// Created; its ExecutionReport (New) waits in the outbox.
    Created(ParentOrderId),
    /// A ClOrdID seen before: the order it made, whose state the gateway reports again.
    Known(ParentOrderId),
    /// Refused, with the reason for an ExecutionReport (Rejected).
    Refused(String),
}

service!(
    /// The FIX gateway's use cases: sessions, outbox, orders and answers by FIX.
    Fix { fix_reports: FixReports, orders: Orders, confirmations: Confirmations, withdrawals: Withdrawals }
);

impl<S: Store> Fix<S> {
    // ----- the session store -------------------------------------------------------

    /// The company a Logon from `comp_id` with `password` (554) logs on as, or why it is
    /// refused (for the venue's log: the peer is told nothing). A company without a FIX
    /// password cannot log on. An unknown CompID costs the same hashing as a wrong
    /// password, so timing does not tell which CompIDs exist.
    pub async fn fix_logon(
        &self,
        comp_id: &str,
        password: Option<&str>,
    ) -> Result<Result<Company, String>, EngineError> {
        let company = {
            let mut tx = self.store.read().await?;
            match tx.company_by_fix_comp_id(comp_id).await? {
                Some(id) => tx.company(id).await?,
                None => None,
            }
        };
        let stored = company.as_ref().and_then(|c| c.fix_password_hash.clone());
        let ok = self.hashing.verify_password(password.unwrap_or_default().to_owned(), stored).await?;
        let Some(company) = company else { return Ok(Err(format!("Unknown SenderCompID {comp_id}"))) };
        if !ok || password.is_none() {
            return Ok(Err("Invalid Password (554) for this SenderCompID".into()));
        }
        Ok(Ok(company))
    }

    /// The company whose FIX session has `comp_id`.
    pub async fn fix_company(&self, comp_id: &str) -> Result<Option<Company>, EngineError> {
        let mut tx = self.store.read().await?;
        let Some(id) = tx.company_by_fix_comp_id(comp_id).await? else { return Ok(None) };
        Ok(tx.company(id).await?)
    }

    /// A company's session as stored, if it has one (read only: a peer not yet
    /// authenticated writes nothing).
    pub async fn fix_session_stored(&self, company: CompanyId) -> Result<Option<FixSession>, EngineError> {
        let mut tx = self.store.single().await?;
        Ok(tx.read_fix_session(company).await?)
    }

    /// Changes a session's counters, markers or state.
    pub async fn fix_update_session(
        &self,
        company: CompanyId,
        change: impl FnOnce(&mut FixSession) + Send,
    ) -> Result<FixSession, EngineError> {
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let mut s = tx.fix_session(company, now).await?;
        change(&mut s);
        tx.update_fix_session(&s).await?;
        tx.commit().await?;
        Ok(s)
    }

    /// A session logged on or off: its state on the sessions screen, and an audit row.
    pub async fn fix_logged(&self, company: CompanyId, on: bool) -> Result<(), EngineError> {
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let mut s = tx.fix_session(company, now).await?;
        s.logged_on = on;
        s.last_message_at = Some(now);
        tx.update_fix_session(&s).await?;
        let operation = if on { "logon" } else { "logoff" };
        let details = json!({"next_sender_seq": s.next_sender_seq, "next_target_seq": s.next_target_seq});
        audit(&mut tx, now, None, "fix_session", Some(company.0), operation, details).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Files a frame about to be sent under `seq`, in one statement (ADR 0030): the
    /// session's next number becomes `seq + 1`, and the outbox message the frame carries,
    /// if any (its id handed over beside the frame, never read back from it), is marked
    /// sent by the same statement. So a crash either sends the message again from the
    /// outbox (nothing was filed) or replays the filed frame on a ResendRequest, never
    /// both.
    pub async fn fix_file_outbound(
        &self,
        company: CompanyId,
        seq: i64,
        msg_type: &str,
        frame: &[u8],
        outbox_id: Option<&str>,
    ) -> Result<(), EngineError> {
        let filed = FiledFixMessage {
            company_id: company,
            seq,
            msg_type: msg_type.to_owned(),
            frame: frame.to_vec(),
            fix_outbox_id: outbox_id.map(str::to_owned),
            created_at: self.clock.now(),
        };
        Ok(self.store.file_fix_message(&filed).await?)
    }

    /// A sequence reset (a Logon with 141=Y, at the start or in the middle of a session):
    /// the frames are forgotten, both counters set, and an audit row says from what to what.
    pub async fn fix_reset(&self, company: CompanyId, next_sender: i64, next_target: i64) -> Result<(), EngineError> {
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let mut s = tx.fix_session(company, now).await?;
        let before = json!({"next_sender_seq": s.next_sender_seq, "next_target_seq": s.next_target_seq});
        tx.delete_fix_messages(company).await?;
        s.next_sender_seq = next_sender;
        s.next_target_seq = next_target;
        s.app_watermark = 0;
        tx.update_fix_session(&s).await?;
        let after = json!({"next_sender_seq": next_sender, "next_target_seq": next_target});
        let details = json!({"before": before, "after": after});
        audit(&mut tx, now, None, "fix_session", Some(company.0), "sequence_reset", details).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The frames sent in `begin..=end`, at most `limit`.
    pub async fn fix_sent(
        &self,
        company: CompanyId,
        begin: i64,
        end: i64,
        limit: i64,
    ) -> Result<Vec<StoredFixMessage>, EngineError> {
        let mut tx = self.store.single().await?;
        Ok(tx.fix_messages(company, begin, end, limit).await?)
    }

    /// The company's messages waiting for its session, oldest first.
    pub async fn fix_pending(&self, company: CompanyId) -> Result<Vec<FixOutboxMessage>, EngineError> {
        let mut tx = self.store.single().await?;
        Ok(tx.pending_fix_outbox(company, OUTBOX_BATCH).await?)
    }

    /// Refuses a NewOrderSingle: its ClOrdID stays refused (a resend gets the same
    /// answer), and the refusal goes out, in one write.
    pub async fn fix_refuse_order(&self, company: CompanyId, refused: RefusedOrder) -> Result<(), EngineError> {
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        tx.refuse_fix_order(company, &refused.cl_ord_id, &refused.text, now).await?;
        enqueue_fix(&mut tx, company, FixReport::OrderRefused(refused), now).await?;
        tx.commit().await?;
        Ok(())
    }

    /// A reply to a message the session received (a refusal, a state asked again), through
    /// the outbox like every other message, so that it is numbered and resent alike.
    pub async fn fix_reply(&self, company: CompanyId, report: FixReport) -> Result<(), EngineError> {
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        enqueue_fix(&mut tx, company, report, now).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Sets aside an outbox message that can never be sent (under number 0), rather than
    /// hold up the company's queue for good.
    pub async fn fix_set_aside(&self, company: CompanyId, id: &str) -> Result<(), EngineError> {
        let mut tx = self.store.write().await?;
        tx.mark_fix_outbox_sent(company, id, 0, self.clock.now()).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Every session no live node holds marked logged off (at a node's start). Where no
    /// other node can share the database, every hold was this node's before it stopped,
    /// so a restart frees them at once rather than after [`FIX_HOLD`].
    pub async fn fix_log_off_all(&self) -> Result<(), EngineError> {
        let lapsed_before = self.has_peers().then(|| self.clock.now());
        let mut tx = self.store.write().await?;
        tx.log_off_fix_sessions(lapsed_before).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The sessions screen: every company with a CompID and its session; a session whose
    /// node stopped renewing its hold (it died) shows logged off.
    pub async fn fix_sessions(&self, actor: &Actor) -> Result<Vec<FixSessionListed>, EngineError> {
        require(actor, Permission::Admin)?;
        let now = self.clock.now();
        let mut listed = self.store.read().await?.fix_sessions().await?;
        for s in listed.iter_mut().filter_map(|l| l.session.as_mut()) {
            s.logged_on &= s.owner_until.is_none_or(|until| until >= now);
        }
        Ok(listed)
    }

    /// Saves the market-data session's state as this node, holding it, sees it now.
    pub async fn record_market_data(&self, mut s: MarketDataSession) -> Result<(), EngineError> {
        s.node_id = self.node().to_owned();
        s.updated_at = self.clock.now();
        let mut tx = self.store.write().await?;
        tx.save_market_data_session(&s).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The market-data session as its node last said, logged on only while that node
    /// holds its lease (a node that died says nothing more), with the instruments stale
    /// now; none when no session ever ran (venue admins).
    pub async fn market_data_session(&self, actor: &Actor) -> Result<Option<(MarketDataSession, i64)>, EngineError> {
        require(actor, Permission::Admin)?;
        let now = self.clock.now();
        let read = self.store.read().await?.market_data_session(MARKET_DATA_LEASE, now).await?;
        Ok(read.map(|(mut s, held, stale)| {
            s.logged_on &= held;
            (s, stale)
        }))
    }

    /// Takes the company's FIX session for this node at a Logon: false while another
    /// node holds it (ADR 0026). The hold lasts [`FIX_HOLD`] unless renewed.
    pub async fn fix_take_session(&self, company: CompanyId) -> Result<bool, EngineError> {
        self.fix_hold(company, true).await
    }

    /// Renews this node's hold on the company's session: false when it lost it.
    pub async fn fix_renew_session(&self, company: CompanyId) -> Result<bool, EngineError> {
        self.fix_hold(company, false).await
    }

    async fn fix_hold(&self, company: CompanyId, take: bool) -> Result<bool, EngineError> {
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let mut s = tx.fix_session(company, now).await?;
        let mine = s.owner_node.as_deref() == Some(self.node());
        let free = s.owner_until.is_none_or(|until| until < now);
        if !(mine || take && free) {
            return Ok(false);
        }
        s.owner_node = Some(self.node().to_owned());
        s.owner_until = Some(now + FIX_HOLD);
        tx.update_fix_session(&s).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Lets go of the company's session, if this node holds it.
    pub async fn fix_release_session(&self, company: CompanyId) -> Result<(), EngineError> {
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let mut s = tx.fix_session(company, now).await?;
        if s.owner_node.as_deref() == Some(self.node()) {
            s.owner_node = None;
            s.owner_until = None;
            tx.update_fix_session(&s).await?;
            tx.commit().await?;
        }
        Ok(())
    }

    // ----- messages the gateway receives ---------------------------------------------

    /// A broker's TradeCaptureReportAck: the same answer as its e-mail link. Only the
    /// broker of the order may answer for it.
    pub async fn fix_confirm_trade(
        &self,
        broker: CompanyId,
        trade_report_id: &str,
        yes: bool,
    ) -> Result<TradeConfirmation, EngineError> {
        let not_yours = || EngineError::NotFound(format!("Unknown TradeReportID {trade_report_id}"));
        let (order, step) = parse_trade_report_id(trade_report_id).ok_or_else(not_yours)?;
        let seen = {
            let mut tx = self.store.single().await?;
            tx.broker_confirmation_of_order(order, step).await?
        };
        let seen = seen.filter(|c| c.broker_id == broker).ok_or_else(not_yours)?;
        if seen.expires_at <= self.clock.now() {
            return Err(EngineError::Conflict {
                detail: "This trade can no longer be confirmed.".into(),
                errors: vec![],
            });
        }
        self.confirmations.answer_confirmation(seen, Answer { step, yes, by_fix: true }).await
    }

    /// An execution system's NewOrderSingle: a parent order of the trader it names, with
    /// the API's validation. A ClOrdID seen before makes nothing new.
    pub async fn fix_new_parent_order(
        &self,
        company: CompanyId,
        o: FixNewOrder,
    ) -> Result<FixOrderAnswer, EngineError> {
        {
            let mut tx = self.store.single().await?;
            if let Some(known) = tx.fix_parent_by_cl_ord_id(company, &o.cl_ord_id).await? {
                return Ok(FixOrderAnswer::Known(known));
            }
            if let Some(reason) = tx.fix_refusal(company, &o.cl_ord_id).await? {
                return Ok(FixOrderAnswer::Refused(reason));
            }
        }
        let Some(trader) = o.trader.as_deref() else {
            return Ok(FixOrderAnswer::Refused("The trader (Parties, PartyRole 11) is required".into()));
        };
        let Some(actor) = self.ems_trader(company, trader).await? else {
            return Ok(FixOrderAnswer::Refused(format!("Unknown trader {trader}")));
        };
        let Some(quantity) = o.quantity else {
            return Ok(FixOrderAnswer::Refused("OrderQty is required".into()));
        };
        let quantity = match upstairs_domain::quantity::Quantity::new(quantity) {
            Ok(q) => q,
            Err(e) => return Ok(FixOrderAnswer::Refused(format!("OrderQty: {e}"))),
        };
        let min_execution = match o.min_quantity.map(upstairs_domain::quantity::Quantity::new).transpose() {
            Ok(m) => m,
            Err(e) => return Ok(FixOrderAnswer::Refused(format!("MinQty: {e}"))),
        };
        let Some(instrument) = self.fix_instrument(&o).await? else {
            return Ok(FixOrderAnswer::Refused("Unknown instrument".into()));
        };
        let input = NewParentOrder {
            direction: o.side,
            instrument_id: instrument,
            quantity,
            broker_instructions: o.text,
            min_execution,
            idempotency: None,
            fix_cl_ord_id: Some((company, o.cl_ord_id.clone())),
        };
        match self.orders.create_parent_order(&actor, input).await {
            Ok(d) => Ok(FixOrderAnswer::Created(d.view.parent.parent_order_id)),
            Err(e) => match refusal_text(&e) {
                Some(text) => Ok(FixOrderAnswer::Refused(text)),
                None => Err(e),
            },
        }
    }

    /// Asks the caller's firm's execution system, over its live FIX session, for its
    /// working orders (an OrderMassStatusRequest through the outbox); the
    /// ExecutionReports that answer become parent orders ([`Self::fix_order_status`]).
    pub async fn pull_ems_orders(&self, actor: &Actor) -> Result<EmsPull, EngineError> {
        crate::context::require_trade(actor)?;
        let company = actor.user.company_id;
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let connected = tx.company(company).await?.is_some_and(|c| c.fix_comp_id.is_some());
        let live = connected
            && tx
                .read_fix_session(company)
                .await?
                .is_some_and(|s| s.logged_on && s.owner_until.is_none_or(|until| until >= now));
        if !live {
            let detail = if connected {
                "Your execution system is not connected: its FIX session is not logged on. Try again once it is."
            } else {
                "Your firm has no execution system connected to the venue by FIX."
            };
            return Err(EngineError::Conflict { detail: detail.into(), errors: vec![] });
        }
        let request_id = uuid::Uuid::now_v7().to_string();
        enqueue_fix_as(&mut tx, request_id.clone(), company, FixReport::OrderStatusRequest, now).await?;
        audit(
            &mut tx,
            now,
            Some(actor.user.user_id),
            "company",
            Some(company.0),
            "ems_orders_requested",
            json!({"request_id": request_id}),
        )
        .await?;
        tx.commit().await?;
        Ok(EmsPull { request_id, requested_at: now })
    }

    /// One order of an execution system's answer to the venue's OrderMassStatusRequest:
    /// a working order the venue does not know becomes a parent order as a
    /// NewOrderSingle with its ClOrdID would; a known one the execution system no longer
    /// works is cancelled here too; anything else changes nothing (ADR 0050).
    pub async fn fix_order_status(
        &self,
        company: CompanyId,
        status: FixOrderStatus,
    ) -> Result<FixStatusAnswer, EngineError> {
        let cl_ord_id = status.order.cl_ord_id.clone();
        let (known, refused) = {
            let mut tx = self.store.single().await?;
            (tx.fix_parent_by_cl_ord_id(company, &cl_ord_id).await?, tx.fix_refusal(company, &cl_ord_id).await?)
        };
        match (known, status.working) {
            // Unreadable (its side, quantity or MinQty): refused once, as a NewOrderSingle.
            (None, true) if refused.is_none() => Ok(match status.unreadable {
                Some(text) => FixStatusAnswer::Refused(text),
                None => match self.fix_new_parent_order(company, status.order).await? {
                    FixOrderAnswer::Created(p) => FixStatusAnswer::Created(p),
                    FixOrderAnswer::Refused(text) => FixStatusAnswer::Refused(text),
                    FixOrderAnswer::Known(_) => FixStatusAnswer::Unchanged,
                },
            }),
            (Some(parent), false) => {
                let Some((v, actor)) = self.parent_and_trader(parent).await? else {
                    return Ok(FixStatusAnswer::Unchanged);
                };
                if v.parent.state != ParentState::Active {
                    return Ok(FixStatusAnswer::Unchanged);
                }
                match self.withdrawals.cancel_parent_order_from(&actor, parent, None).await {
                    Ok(()) => Ok(FixStatusAnswer::Cancelled(parent)),
                    // Matched already: the venue's trade stands, the parent with it.
                    Err(e) if refusal_text(&e).is_some() => Ok(FixStatusAnswer::Unchanged),
                    Err(e) => Err(e),
                }
            }
            _ => Ok(FixStatusAnswer::Unchanged),
        }
    }

    /// An execution system's OrderCancelRequest for a parent it sent.
    pub async fn fix_cancel_parent_order(
        &self,
        company: CompanyId,
        orig_cl_ord_id: &str,
        cl_ord_id: &str,
    ) -> Result<Result<ParentOrderId, CancelRefusal>, EngineError> {
        let parent = self.store.single().await?.fix_parent_by_cl_ord_id(company, orig_cl_ord_id).await?;
        let unknown =
            |parent| CancelRefusal { reason: CancelRefusalReason::UnknownOrder, text: "Unknown order".into(), parent };
        let Some(parent) = parent else { return Ok(Err(unknown(None))) };
        let Some((v, actor)) = self.parent_and_trader(parent).await? else { return Ok(Err(unknown(Some(parent)))) };
        // Cancelled already (this request resent, or the trader cancelled on screen): the
        // order's state is reported again.
        if v.parent.state == ParentState::Cancelled {
            if let Some(report) = self.fix_parent_report(parent).await? {
                self.fix_reply(company, FixReport::Execution(report)).await?;
            }
            return Ok(Ok(parent));
        }
        match self.withdrawals.cancel_parent_order_from(&actor, parent, Some(cl_ord_id)).await {
            Ok(()) => Ok(Ok(parent)),
            Err(e) => match refusal_text(&e) {
                Some(text) => {
                    Ok(Err(CancelRefusal { reason: CancelRefusalReason::TooLate, text, parent: Some(parent) }))
                }
                None => Err(e),
            },
        }
    }

    /// A parent order and its trader, as the actor of a cancel the execution system asks
    /// for; none when the parent is unknown or its trader is no longer active.
    async fn parent_and_trader(&self, parent: ParentOrderId) -> Result<Option<(ParentOrderView, Actor)>, EngineError> {
        let Some(v) = self.store.single().await?.parent_order(parent).await? else { return Ok(None) };
        let user = self.store.single().await?.user(v.parent.created_by).await?;
        Ok(user.filter(|u| u.user.active).map(|u| {
            let session_id = upstairs_domain::SessionId::new();
            (v, Actor { user: u.user, company_name: u.company_name, session_id })
        }))
    }

    /// The state of a parent an execution system sent, for a repeated ClOrdID.
    pub async fn fix_parent_report(&self, parent: ParentOrderId) -> Result<Option<ExecutionReport>, EngineError> {
        let mut tx = self.store.read().await?;
        let Some((_, cl_ord_id)) = tx.fix_parent_order(parent).await? else { return Ok(None) };
        let Some(v) = tx.parent_order(parent).await? else { return Ok(None) };
        let now = self.clock.now();
        Ok(Some(self.fix_reports.execution_report(&mut tx, &v, &cl_ord_id, ExecutionKind::Status, None, now).await?))
    }

    /// The active user of `company` whose EMS trader id is `trader` and who may trade by
    /// FIX, as the actor of the orders the execution system sends.
    async fn ems_trader(&self, company: CompanyId, trader: &str) -> Result<Option<Actor>, EngineError> {
        let mut tx = self.store.read().await?;
        let filter = UserFilter { email: None, company_id: Some(company), active: Some(true), page: 0, size: 1000 };
        let user = tx
            .users(&filter)
            .await?
            .items
            .into_iter()
            .find(|u| u.user.fix_integration && u.user.ems_trader_id.as_deref() == Some(trader));
        Ok(user.map(|u| Actor {
            user: u.user,
            company_name: u.company_name,
            session_id: upstairs_domain::SessionId::new(),
        }))
    }

    /// The active instrument a NewOrderSingle names: by SecurityID (the exchange's id,
    /// on SecurityExchange when given), else by Symbol (Bloomberg code or name).
    async fn fix_instrument(&self, o: &FixNewOrder) -> Result<Option<upstairs_domain::InstrumentId>, EngineError> {
        let mut tx = self.store.read().await?;
        let filter = InstrumentFilter {
            name: None,
            exchange_id: None,
            active: Some(true),
            is_sandbox: None,
            sort: InstrumentSort::default(),
            descending: false,
            page: 0,
            size: crate::context::MAX_PAGE_SIZE,
        };
        let all = tx.instruments(&filter).await?.items;
        let on_exchange = |i: &&Instrument| o.exchange.as_ref().is_none_or(|e| *e == i.exchange_id || *e == i.exchange);
        let found = match (&o.security_id, &o.symbol) {
            (Some(id), _) => all.iter().filter(on_exchange).find(|i| i.exchange_instrument_id.as_ref() == Some(id)),
            (None, Some(s)) => all
                .iter()
                .filter(on_exchange)
                .find(|i| i.bbg_code.as_ref() == Some(s))
                .or_else(|| all.iter().filter(on_exchange).find(|i| i.name == *s)),
            (None, None) => None,
        };
        Ok(found.map(|i| i.instrument_id))
    }
}

/// The text a refused request gets back; `None` for a failure of the venue itself.
fn refusal_text(e: &EngineError) -> Option<String> {
    match e {
        EngineError::Invalid { detail, errors } | EngineError::Conflict { detail, errors } => {
            // A field the FIX message names by its tag says which (MinQty's rule shares
            // its wording with OrderQty's).
            let parts: BTreeSet<String> = errors
                .iter()
                .map(|e| match e.field.as_str() {
                    "min_execution" => format!("MinQty (110): {}", e.message),
                    _ => e.message.clone(),
                })
                .collect();
            Some(if parts.is_empty() { detail.clone() } else { parts.into_iter().collect::<Vec<_>>().join("; ") })
        }
        EngineError::NotFound(m) | EngineError::Forbidden(m) => Some(m.clone()),
        EngineError::TooManyRequests { detail, .. } => Some(detail.clone()),
        _ => None,
    }
}
