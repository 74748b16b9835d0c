//! What the venue tells FIX sessions, as data (ADR 0030): the typed reports every feature
//! writes into the FIX outbox in the transaction of its change, as it queues e-mails, and
//! the identifiers they carry. `crates/fix` alone turns them into FIX. Part of the shared
//! core (ADR 0032), so that trading features write reports without reaching the FIX
//! gateway's use cases.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use upstairs_domain::order::Direction;
use upstairs_domain::{CompanyId, MatchRequestId, OrderId, ParentOrderId};
use uuid::Uuid;

use crate::Store;
use crate::core::service;
use crate::error::EngineError;
use crate::model::*;
use crate::ports::*;

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

/// The TradeReportID of the cancel of `order`'s report for `step`, sent when the other
/// side's broker declined the trade (ADR 0037).
pub fn trade_cancel_id(order: OrderId, step: ConfirmationStep) -> String {
    format!("{}-C", trade_report_id(order, step))
}

/// The order and step of the report a cancel's TradeReportID cancels.
pub fn parse_trade_cancel_id(id: &str) -> Option<(OrderId, ConfirmationStep)> {
    parse_trade_report_id(id.strip_suffix("-C")?)
}

/// The AllocID of version `version` of an order's allocation.
pub fn allocation_id(order: OrderId, version: i64) -> String {
    format!("{order}-L{version}")
}

/// The order and version an AllocID names.
pub fn parse_allocation_id(id: &str) -> Option<(OrderId, i64)> {
    let (order, version) = id.rsplit_once("-L")?;
    let version: i64 = version.parse().ok().filter(|v| *v > 0)?;
    Some((OrderId(Uuid::parse_str(order).ok()?), version))
}

/// The AllocID of the cancel of version `version` of an order's allocation, sent when a
/// broker declined the trade.
pub fn allocation_cancel_id(order: OrderId, version: i64) -> String {
    format!("{}-C", allocation_id(order, version))
}

/// The order and version of the allocation a cancel's AllocID cancels.
pub fn parse_allocation_cancel_id(id: &str) -> Option<(OrderId, i64)> {
    parse_allocation_id(id.strip_suffix("-C")?)
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
    /// The cancel of a trade report sent before (the step's), when the other side's
    /// broker declined the trade: it does not go ahead.
    TradeCancel(TradeReport),
    /// A parent order an execution system sent, as it stands after a change.
    Execution(ExecutionReport),
    /// A NewOrderSingle refused.
    OrderRefused(RefusedOrder),
    /// An OrderCancelRequest refused.
    CancelRefused(RefusedCancel),
    /// A broker's answer to a trade that changed nothing (answered already).
    AnswerRefused(RefusedAnswer),
    /// A trade's split across its client's accounts, and its give-up, to the executing
    /// broker (ADR 0045).
    Allocation(AllocationReport),
    /// A trader's ask of the firm's execution system for its working orders (ADR 0050);
    /// the outbox row's id is the request's id.
    OrderStatusRequest,
}

impl FixReport {
    /// The name the outbox row files it under (for a reader of the table).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Trade(_) => "trade",
            Self::TradeCancel(_) => "trade_cancel",
            Self::Execution(_) => "execution",
            Self::OrderRefused(_) => "order_refused",
            Self::CancelRefused(_) => "cancel_refused",
            Self::AnswerRefused(_) => "answer_refused",
            Self::Allocation(_) => "allocation",
            Self::OrderStatusRequest => "order_status_request",
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
    /// How the trader split it across the client's accounts, when they had by then
    /// (ADR 0045; absent in reports queued before allocations were kept).
    #[serde(default)]
    pub allocations: Vec<AllocationLine>,
    /// The broker it is given up to for clearing, by name.
    #[serde(default)]
    pub give_up_firm: Option<String>,
}

/// One side's trade as its trader allocated it, to the side's broker (ADR 0045).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocationReport {
    pub order_id: OrderId,
    pub version: i64,
    /// The AllocID of the version this one replaces, or cancels.
    pub replaces: Option<String>,
    /// The instruction cancels `replaces`: a broker declined the trade (absent in
    /// instructions queued before cancels were sent).
    #[serde(default)]
    pub cancel: bool,
    pub instrument: ReportedInstrument,
    pub side: Direction,
    pub quantity: i64,
    #[serde(with = "rust_decimal::serde::str")]
    pub price: Decimal,
    pub traded_at: DateTime<Utc>,
    /// The broker itself, by its CompID.
    pub executing_firm: String,
    /// The client: its account, else its name.
    pub client: String,
    /// The broker the trade is given up to for clearing, by name.
    pub give_up_firm: Option<String>,
    pub lines: Vec<AllocationLine>,
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

service!(
    /// Writes the typed FIX reports into the outbox, inside the caller's transaction.
    FixReports {}
);

impl<S: Store> FixReports<S> {
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
        let Some((broker, report)) = self.trade_report(tx, m, o, other, step).await? else { return Ok(()) };
        let id = trade_report_id(o.order_id, step);
        enqueue_fix_as(tx, id, broker, FixReport::Trade(report), now).await
    }

    /// Inside the transaction of a broker's decline: the cancel of the report `o`'s broker
    /// was sent for `step`, when it has a FIX session (the trade does not go ahead), dated
    /// with the trade (`traded_at`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn report_trade_cancel(
        &self,
        tx: &mut S::Tx,
        m: &MatchRequest,
        o: &ChildOrder,
        other: &ChildOrder,
        step: ConfirmationStep,
        traded_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<(), EngineError> {
        let Some((broker, mut report)) = self.trade_report(tx, m, o, other, step).await? else { return Ok(()) };
        report.traded_at = traded_at;
        let id = trade_cancel_id(o.order_id, step);
        enqueue_fix_as(tx, id, broker, FixReport::TradeCancel(report), now).await
    }

    /// Inside the transaction of an allocation: its AllocationInstruction to the executing
    /// broker, when it has a FIX session, replacing the version `before`. The trade's time
    /// is its accept step's (the match).
    pub(crate) async fn report_allocation(
        &self,
        tx: &mut S::Tx,
        o: &ChildOrder,
        a: &Allocation,
        before: Option<&Allocation>,
        now: DateTime<Utc>,
    ) -> Result<(), EngineError> {
        let replaces = before.map(|b| allocation_id(o.order_id, b.version));
        let Some((broker, report)) = self.allocation_report(tx, o, a, replaces, false).await? else { return Ok(()) };
        enqueue_fix_as(tx, allocation_id(o.order_id, a.version), broker, FixReport::Allocation(report), now).await
    }

    /// Inside the transaction of a broker's decline: the cancel of the AllocationInstruction
    /// in force for `o`, if one was sent (the trade does not go ahead, so neither does its
    /// split).
    pub(crate) async fn report_allocation_cancel(
        &self,
        tx: &mut S::Tx,
        o: &ChildOrder,
        now: DateTime<Utc>,
    ) -> Result<(), EngineError> {
        let Some(a) = tx.allocation(o.order_id).await? else { return Ok(()) };
        let cancels = Some(allocation_id(o.order_id, a.version));
        let Some((broker, report)) = self.allocation_report(tx, o, &a, cancels, true).await? else { return Ok(()) };
        enqueue_fix_as(tx, allocation_cancel_id(o.order_id, a.version), broker, FixReport::Allocation(report), now)
            .await
    }

    /// `o`'s allocation `a` as its broker is told it, and the broker, when it has a FIX
    /// CompID.
    async fn allocation_report(
        &self,
        tx: &mut S::Tx,
        o: &ChildOrder,
        a: &Allocation,
        replaces: Option<String>,
        cancel: bool,
    ) -> Result<Option<(CompanyId, AllocationReport)>, EngineError> {
        let Some(broker) = tx.company(o.broker_id).await? else { return Ok(None) };
        let Some(executing_firm) = broker.fix_comp_id.clone() else { return Ok(None) };
        let traded_at = tx
            .broker_confirmation_of_order(o.order_id, ConfirmationStep::Accept)
            .await?
            .map_or(o.updated_at, |c| c.created_at);
        let client = tx.company(o.company_id).await?.map(|c| c.account.unwrap_or(c.name)).unwrap_or_default();
        let give_up_firm = match a.give_up_broker_id {
            Some(id) => tx.company(id).await?.map(|c| c.name),
            None => None,
        };
        let instrument = self.instrument_in(tx, o.instrument_id).await?;
        let report = AllocationReport {
            order_id: o.order_id,
            version: a.version,
            replaces,
            cancel,
            instrument: ReportedInstrument::from(&*instrument),
            side: o.direction,
            quantity: o.quantity,
            price: o.price,
            traded_at,
            executing_firm,
            client,
            give_up_firm,
            lines: a.lines.clone(),
        };
        Ok(Some((broker.company_id, report)))
    }

    /// `o`'s side of the trade as its broker is told it, and the broker, when it has a FIX
    /// CompID.
    async fn trade_report(
        &self,
        tx: &mut S::Tx,
        m: &MatchRequest,
        o: &ChildOrder,
        other: &ChildOrder,
        step: ConfirmationStep,
    ) -> Result<Option<(CompanyId, TradeReport)>, EngineError> {
        let Some(broker) = tx.company(o.broker_id).await? else { return Ok(None) };
        let Some(broker_comp_id) = broker.fix_comp_id.clone() else { return Ok(None) };
        let contra = tx.company(other.broker_id).await?;
        let client = tx.company(o.company_id).await?;
        let instrument = self.instrument_in(tx, o.instrument_id).await?;
        // The accept step's report goes out at the match, before any allocation (its cancel
        // too, as it was sent); the fill's carries the one in force.
        let allocation = match step {
            ConfirmationStep::Fill => tx.allocation(o.order_id).await?,
            ConfirmationStep::Accept => None,
        };
        let give_up_firm = match allocation.as_ref().and_then(|a| a.give_up_broker_id) {
            Some(id) => tx.company(id).await?.map(|c| c.name),
            None => None,
        };
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
            allocations: allocation.map(|a| a.lines).unwrap_or_default(),
            give_up_firm,
        };
        Ok(Some((broker.company_id, report)))
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
        let parents: Vec<ParentOrderId> = trades.iter().map(|(o, _)| o.parent_order_id).collect();
        let sent = tx.fix_parent_orders(&parents).await?;
        for (o, undone) in trades {
            let Some((_, company, cl_ord_id)) = sent.iter().find(|s| s.0 == o.parent_order_id) else { continue };
            let (company, cl_ord_id) = (*company, cl_ord_id.as_str());
            let Some(v) = tx.parent_order(o.parent_order_id).await? else { continue };
            let (kind, last) = if *undone { (ExecutionKind::FillUndone, None) } else { (ExecutionKind::Fill, Some(o)) };
            let report = self.execution_report(tx, &v, cl_ord_id, kind, last, now).await?;
            enqueue_fix(tx, company, FixReport::Execution(report), now).await?;
        }
        Ok(())
    }

    /// The report of a parent order as it stands. AvgPx is the matched children's price
    /// weighted by their quantity (0 with nothing matched).
    pub(crate) async fn execution_report(
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
}

/// Puts a message for a company's session in the outbox, under a new id (which is the
/// ExecID of an execution report).
pub(crate) async fn enqueue_fix<T: crate::ports::Tx>(
    tx: &mut T,
    company: CompanyId,
    report: FixReport,
    now: DateTime<Utc>,
) -> Result<(), EngineError> {
    enqueue_fix_as(tx, Uuid::now_v7().to_string(), company, report, now).await
}

/// [`enqueue_fix`] under an id of its own (a trade report's TradeReportID).
pub(crate) async fn enqueue_fix_as<T: crate::ports::Tx>(
    tx: &mut T,
    id: String,
    company: CompanyId,
    report: FixReport,
    now: DateTime<Utc>,
) -> Result<(), EngineError> {
    tx.insert_fix_outbox(&FixOutboxMessage {
        fix_outbox_id: id,
        company_id: company,
        report,
        created_at: now,
        sent_seq: None,
    })
    .await?;
    Ok(())
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
        // A cancel's id names the report it cancels, and is not itself a report's.
        for step in [ConfirmationStep::Accept, ConfirmationStep::Fill] {
            assert_eq!(parse_trade_cancel_id(&trade_cancel_id(o, step)), Some((o, step)));
            assert_eq!(parse_trade_report_id(&trade_cancel_id(o, step)), None);
            assert_eq!(parse_trade_cancel_id(&trade_report_id(o, step)), None);
        }
    }
}
