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
//!   ([`Engine::fix_confirm_trade`]), and an execution system's NewOrderSingle and
//!   OrderCancelRequest, which create and cancel parent orders as the API does.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeSet;
use upstairs_domain::order::Direction;
use upstairs_domain::{CompanyId, MatchRequestId, OrderId, ParentOrderId, Permission};
use uuid::Uuid;

use crate::confirmations::{Answer, TradeConfirmation};
use crate::context::{Actor, audit, require};
use crate::error::EngineError;
use crate::model::*;
use crate::orders::NewParentOrder;
use crate::ports::*;
use crate::{Engine, Store};

/// How long a node holds a company's FIX session without renewing it (ADR 0026): a node
/// that dies leaves the session to another after this.
pub const FIX_HOLD: chrono::TimeDelta = chrono::TimeDelta::seconds(30);
/// How often a node renews its hold, well inside [`FIX_HOLD`].
pub const FIX_HOLD_RENEW: std::time::Duration = std::time::Duration::from_secs(10);

/// How many unsent messages a session takes from the outbox at a time.
pub const OUTBOX_BATCH: i64 = 100;

/// A CompID a company may have: 1 to 32 letters, digits, `.`, `_` or `-`.
pub fn valid_comp_id(id: &str) -> bool {
    (1..=32).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// The TradeReportID of an order's report for a step: the order id and `A` (accept) or
/// `F` (fill).
pub fn trade_report_id(order: OrderId, step: ConfirmationStep) -> String {
    let s = match step {
        ConfirmationStep::Accept => "A",
        ConfirmationStep::Fill => "F",
    };
    format!("{order}-{s}")
}

/// The order and step a TradeReportID names.
pub fn parse_trade_report_id(id: &str) -> Option<(OrderId, ConfirmationStep)> {
    let (order, step) = id.rsplit_once('-')?;
    let step = match step {
        "A" => ConfirmationStep::Accept,
        "F" => ConfirmationStep::Fill,
        _ => return None,
    };
    Some((OrderId(Uuid::parse_str(order).ok()?), step))
}

/// An execution system's order as the gateway read it; `None` where a field was missing
/// or unreadable, so that the refusal can say which.
#[derive(Clone, Debug, Default)]
pub struct FixNewOrder {
    pub cl_ord_id: String,
    /// The trader's EMS id (Parties, role 11).
    pub trader: Option<String>,
    pub side: Option<Direction>,
    pub quantity: Option<i64>,
    pub symbol: Option<String>,
    pub security_id: Option<String>,
    pub exchange: Option<String>,
    pub text: Option<String>,
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

/// Why an OrderCancelRequest was refused (an OrderCancelReject's reason and text).
#[derive(Debug, PartialEq, Eq)]
pub struct CancelRefusal {
    pub reason: CancelRefusalReason,
    pub text: String,
    pub parent: Option<ParentOrderId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CancelRefusalReason {
    /// The order exists but can no longer be cancelled.
    TooLate,
    /// No order of this company has that ClOrdID (or its trader left).
    UnknownOrder,
}

// ----- what the venue tells a FIX session ------------------------------------------
//
// The engine writes these as business content, as it writes e-mails as data the mail
// crate renders; `crates/fix` turns each into its message (MsgType, tags, codes,
// timestamp formats). They are stored in the FIX outbox as JSON (ADR 0030).

/// A message waiting for a company's FIX session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FixReport {
    /// A trade to a broker, at the match or when it is to be filled.
    Trade(TradeReport),
    /// A parent order an execution system sent, as it stands after a change.
    Execution(ExecutionReport),
    /// A NewOrderSingle refused.
    OrderRefused(RefusedOrder),
    /// An OrderCancelRequest refused.
    CancelRefused(RefusedCancel),
    /// A broker's answer to a trade that changed nothing (answered already).
    AnswerRefused(RefusedAnswer),
}

impl FixReport {
    /// The name the outbox row files it under (for a reader of the table).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Trade(_) => "trade",
            Self::Execution(_) => "execution",
            Self::OrderRefused(_) => "order_refused",
            Self::CancelRefused(_) => "cancel_refused",
            Self::AnswerRefused(_) => "answer_refused",
        }
    }
}

/// An instrument as a report names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportedInstrument {
    /// The Bloomberg code, else the name.
    pub symbol: String,
    /// The exchange's own id, when the instrument has one.
    pub exchange_instrument_id: Option<String>,
    pub exchange_id: String,
}

impl From<&Instrument> for ReportedInstrument {
    fn from(i: &Instrument) -> Self {
        Self {
            symbol: i.bbg_code.clone().unwrap_or_else(|| i.name.clone()),
            exchange_instrument_id: i.exchange_instrument_id.clone(),
            exchange_id: i.exchange_id.clone(),
        }
    }
}

/// One side's trade, to that side's broker (the two steps of ADR 0018).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TradeReport {
    pub order_id: OrderId,
    pub step: ConfirmationStep,
    pub match_request_id: MatchRequestId,
    pub instrument: ReportedInstrument,
    pub side: Direction,
    pub quantity: i64,
    #[serde(with = "rust_decimal::serde::str")]
    pub price: Decimal,
    /// When the match request last changed: the trade's date and time.
    pub traded_at: DateTime<Utc>,
    /// The broker itself, by its CompID.
    pub executing_firm: String,
    /// The other side's broker, by name (its CompID is half of its credentials).
    pub contra_firm: String,
    /// The client: its account, else its name.
    pub client: String,
}

/// What happened to a parent order an execution report tells of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionKind {
    New,
    Cancelled,
    /// A child order matched.
    Fill,
    /// A child order's match was undone (a breakdown).
    FillUndone,
    /// The order as it stands, asked again.
    Status,
}

/// Where a parent order stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OrderStatus {
    New,
    PartiallyFilled,
    Filled,
    Cancelled,
    /// Never accepted (a cancel of an unknown order).
    Rejected,
}

/// A child order's match: its quantity and exact price.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastFill {
    pub quantity: i64,
    #[serde(with = "rust_decimal::serde::str")]
    pub price: Decimal,
}

/// A parent order an execution system sent, as it stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionReport {
    pub kind: ExecutionKind,
    pub order_id: ParentOrderId,
    /// The ClOrdID of the request answered (the cancel's own, for a cancel).
    pub cl_ord_id: String,
    /// The order's ClOrdID, when the request answered was a cancel.
    pub orig_cl_ord_id: Option<String>,
    pub status: OrderStatus,
    pub side: Direction,
    pub instrument: ReportedInstrument,
    pub quantity: i64,
    pub cum_quantity: i64,
    pub leaves_quantity: i64,
    /// The matched children's price weighted by their quantity (0 with none).
    #[serde(with = "rust_decimal::serde::str")]
    pub avg_price: Decimal,
    /// The match that made this report, for a fill.
    pub last: Option<LastFill>,
    pub transact_time: DateTime<Utc>,
}

/// A NewOrderSingle refused: what it asked, as it was received, and why.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedOrder {
    pub cl_ord_id: String,
    /// The side, quantity and instrument as the request wrote them (they may be what
    /// was wrong with it).
    pub side: String,
    pub quantity: String,
    pub symbol: Option<String>,
    pub security_id: Option<String>,
    pub security_id_source: Option<String>,
    pub exchange: Option<String>,
    pub text: String,
}

/// An OrderCancelRequest refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedCancel {
    /// The order, when the request named one of this company's.
    pub order_id: Option<ParentOrderId>,
    pub cl_ord_id: String,
    pub orig_cl_ord_id: String,
    pub status: OrderStatus,
    pub reason: CancelRefusalReason,
    pub text: String,
}

/// A broker's answer to a trade that came after the trade was answered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedAnswer {
    /// The sequence number of the broker's message.
    pub ref_seq_num: i64,
    pub trade_report_id: String,
    pub text: String,
}

impl<S: Store> Engine<S> {
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

    /// A sequence reset: the frames are forgotten and both counters set.
    pub async fn fix_reset(&self, company: CompanyId, next_sender: i64, next_target: i64) -> Result<(), EngineError> {
        let mut tx = self.store.write().await?;
        let mut s = tx.fix_session(company, self.clock.now()).await?;
        tx.delete_fix_messages(company).await?;
        s.next_sender_seq = next_sender;
        s.next_target_seq = next_target;
        s.app_watermark = 0;
        tx.update_fix_session(&s).await?;
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
        self.poke();
        Ok(())
    }

    /// A reply to a message the session received (a refusal, a state asked again), through
    /// the outbox like every other message, so that it is numbered and resent alike.
    pub async fn fix_reply(&self, company: CompanyId, report: FixReport) -> Result<(), EngineError> {
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        enqueue_fix(&mut tx, company, report, now).await?;
        tx.commit().await?;
        self.poke();
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

    // ----- messages the engine writes ------------------------------------------------

    /// Inside the transaction that matched or asks for the fill: a TradeCaptureReport for
    /// each side's broker that has a FIX session.
    pub(crate) async fn report_trade(
        &self,
        tx: &mut S::Tx,
        m: &MatchRequest,
        o: &ChildOrder,
        other: &ChildOrder,
        step: ConfirmationStep,
        now: DateTime<Utc>,
    ) -> Result<(), EngineError> {
        let Some(broker) = tx.company(o.broker_id).await? else { return Ok(()) };
        let Some(broker_comp_id) = broker.fix_comp_id.clone() else { return Ok(()) };
        let contra = tx.company(other.broker_id).await?;
        let client = tx.company(o.company_id).await?;
        let instrument = self.instrument_in(tx, o.instrument_id).await?;
        // The other broker by name, as the e-mail names it: its CompID is half of its
        // FIX credentials and stays between it and the venue.
        let report = TradeReport {
            order_id: o.order_id,
            step,
            match_request_id: m.match_request_id,
            instrument: ReportedInstrument::from(&*instrument),
            side: o.direction,
            quantity: o.quantity,
            price: o.price,
            traded_at: m.updated_at,
            executing_firm: broker_comp_id,
            contra_firm: contra.map(|c| c.name).unwrap_or_default(),
            client: client.map(|c| c.account.unwrap_or(c.name)).unwrap_or_default(),
        };
        tx.insert_fix_outbox(&FixOutboxMessage {
            fix_outbox_id: trade_report_id(o.order_id, step),
            company_id: broker.company_id,
            report: FixReport::Trade(report),
            created_at: now,
            sent_seq: None,
        })
        .await?;
        Ok(())
    }

    /// Inside a transaction that changed these parents' matched quantity (a match, a
    /// breakdown): an ExecutionReport to the execution system that sent each, if any.
    /// `trade` is the child order whose match changed it and whether it was undone.
    pub(crate) async fn report_parent_fills(
        &self,
        tx: &mut S::Tx,
        trades: &[(ChildOrder, bool)],
        now: DateTime<Utc>,
    ) -> Result<(), EngineError> {
        for (o, undone) in trades {
            let Some((company, cl_ord_id)) = tx.fix_parent_order(o.parent_order_id).await? else { continue };
            let Some(v) = tx.parent_order(o.parent_order_id).await? else { continue };
            let (kind, last) = if *undone { (ExecutionKind::FillUndone, None) } else { (ExecutionKind::Fill, Some(o)) };
            let report = self.execution_report(tx, &v, &cl_ord_id, kind, last, now).await?;
            enqueue_fix(tx, company, FixReport::Execution(report), now).await?;
        }
        Ok(())
    }

    /// The report of a parent order as it stands. AvgPx is the matched children's price
    /// weighted by their quantity (0 with nothing matched).
    async fn execution_report(
        &self,
        tx: &mut S::Tx,
        v: &ParentOrderView,
        cl_ord_id: &str,
        kind: ExecutionKind,
        last: Option<&ChildOrder>,
        now: DateTime<Utc>,
    ) -> Result<ExecutionReport, EngineError> {
        let p = &v.parent;
        let status = match p.state {
            ParentState::Cancelled => OrderStatus::Cancelled,
            ParentState::Filled => OrderStatus::Filled,
            _ if v.matched >= p.quantity => OrderStatus::Filled,
            _ if v.matched > 0 => OrderStatus::PartiallyFilled,
            _ => OrderStatus::New,
        };
        let instrument = self.instrument_in(tx, p.instrument_id).await?;
        let leaves = match status {
            OrderStatus::Filled | OrderStatus::Cancelled => 0,
            _ => p.quantity - v.matched,
        };
        let children =
            tx.orders(&OrderFilter { parent_order_id: Some(p.parent_order_id), ..Default::default() }).await?;
        let (mut qty, mut notional) = (Decimal::ZERO, Decimal::ZERO);
        for o in children.iter().filter(|o| o.state.is_matched()) {
            qty += Decimal::from(o.quantity);
            notional += o.price * Decimal::from(o.quantity);
        }
        let avg = if qty.is_zero() { Decimal::ZERO } else { (notional / qty).round_dp(10).normalize() };
        Ok(ExecutionReport {
            kind,
            order_id: p.parent_order_id,
            cl_ord_id: cl_ord_id.to_owned(),
            orig_cl_ord_id: None,
            status,
            side: p.direction,
            instrument: ReportedInstrument::from(&*instrument),
            quantity: p.quantity,
            cum_quantity: v.matched,
            leaves_quantity: leaves.max(0),
            avg_price: avg,
            last: last.map(|o| LastFill { quantity: o.quantity, price: o.price }),
            transact_time: now,
        })
    }

    /// In the transaction creating or cancelling a parent an execution system sent: its
    /// ExecutionReport (New or Canceled).
    pub(crate) async fn report_parent_state(
        &self,
        tx: &mut S::Tx,
        v: &ParentOrderView,
        cancel_cl_ord_id: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), EngineError> {
        let Some((company, cl_ord_id)) = tx.fix_parent_order(v.parent.parent_order_id).await? else {
            return Ok(());
        };
        let kind = if v.parent.state == ParentState::Cancelled { ExecutionKind::Cancelled } else { ExecutionKind::New };
        let own = cancel_cl_ord_id.unwrap_or(&cl_ord_id);
        let mut report = self.execution_report(tx, v, own, kind, None, now).await?;
        if cancel_cl_ord_id.is_some() {
            report.orig_cl_ord_id = Some(cl_ord_id);
        }
        enqueue_fix(tx, company, FixReport::Execution(report), now).await
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
        self.answer_confirmation(seen, Answer { step, yes }).await
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
        let Some(instrument) = self.fix_instrument(&o).await? else {
            return Ok(FixOrderAnswer::Refused("Unknown instrument".into()));
        };
        let input = NewParentOrder {
            direction: o.side,
            instrument_id: instrument,
            quantity,
            broker_instructions: o.text,
            idempotency: None,
            fix_cl_ord_id: Some((company, o.cl_ord_id.clone())),
        };
        match self.create_parent_order(&actor, input).await {
            Ok(d) => Ok(FixOrderAnswer::Created(d.view.parent.parent_order_id)),
            Err(e) => match refusal_text(&e) {
                Some(text) => Ok(FixOrderAnswer::Refused(text)),
                None => Err(e),
            },
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
        let creator = self.store.single().await?.parent_order(parent).await?.map(|v| v.parent.created_by);
        let user = match creator {
            Some(u) => self.store.single().await?.user(u).await?,
            None => None,
        };
        let Some(user) = user.filter(|u| u.user.active) else { return Ok(Err(unknown(Some(parent)))) };
        // Cancelled already (this request resent, or the trader cancelled on screen): the
        // order's state is reported again.
        let state = self.store.single().await?.parent_order(parent).await?.map(|v| v.parent.state);
        if state == Some(ParentState::Cancelled) {
            if let Some(report) = self.fix_parent_report(parent).await? {
                self.fix_reply(company, FixReport::Execution(report)).await?;
            }
            return Ok(Ok(parent));
        }
        let actor =
            Actor { user: user.user, company_name: user.company_name, session_id: upstairs_domain::SessionId::new() };
        match self.cancel_parent_order_from(&actor, parent, Some(cl_ord_id)).await {
            Ok(()) => Ok(Ok(parent)),
            Err(e) => match refusal_text(&e) {
                Some(text) => {
                    Ok(Err(CancelRefusal { reason: CancelRefusalReason::TooLate, text, parent: Some(parent) }))
                }
                None => Err(e),
            },
        }
    }

    /// The state of a parent an execution system sent, for a repeated ClOrdID.
    pub async fn fix_parent_report(&self, parent: ParentOrderId) -> Result<Option<ExecutionReport>, EngineError> {
        let mut tx = self.store.read().await?;
        let Some((_, cl_ord_id)) = tx.fix_parent_order(parent).await? else { return Ok(None) };
        let Some(v) = tx.parent_order(parent).await? else { return Ok(None) };
        let now = self.clock.now();
        Ok(Some(self.execution_report(&mut tx, &v, &cl_ord_id, ExecutionKind::Status, None, now).await?))
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

/// Puts a message for a company's session in the outbox, under a new id (which is the
/// ExecID of an execution report).
async fn enqueue_fix<T: crate::ports::Tx>(
    tx: &mut T,
    company: CompanyId,
    report: FixReport,
    now: DateTime<Utc>,
) -> Result<(), EngineError> {
    tx.insert_fix_outbox(&FixOutboxMessage {
        fix_outbox_id: Uuid::now_v7().to_string(),
        company_id: company,
        report,
        created_at: now,
        sent_seq: None,
    })
    .await?;
    Ok(())
}

/// The text a refused request gets back; `None` for a failure of the venue itself.
fn refusal_text(e: &EngineError) -> Option<String> {
    match e {
        EngineError::Invalid { detail, errors } | EngineError::Conflict { detail, errors } => {
            let parts: BTreeSet<&str> = errors.iter().map(|e| e.message.as_str()).collect();
            Some(if parts.is_empty() { detail.clone() } else { parts.into_iter().collect::<Vec<_>>().join("; ") })
        }
        EngineError::NotFound(m) | EngineError::Forbidden(m) => Some(m.clone()),
        EngineError::TooManyRequests { detail, .. } => Some(detail.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comp_ids_are_short_and_plain() {
        assert!(valid_comp_id("BROKER_1"));
        assert!(valid_comp_id("a.b-c"));
        assert!(!valid_comp_id(""));
        assert!(!valid_comp_id(&"x".repeat(33)));
        assert!(!valid_comp_id("A B"));
        assert!(!valid_comp_id("A=B"));
    }

    #[test]
    fn trade_report_ids_round_trip() {
        let o = OrderId::new();
        for step in [ConfirmationStep::Accept, ConfirmationStep::Fill] {
            assert_eq!(parse_trade_report_id(&trade_report_id(o, step)), Some((o, step)));
        }
        assert_eq!(parse_trade_report_id("nope-A"), None);
        assert_eq!(parse_trade_report_id(&format!("{o}-X")), None);
    }
}
