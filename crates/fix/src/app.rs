//! One company's FIX session as the venue sees it: ironfix's [`Application`] callbacks,
//! turning a Logon's password, a TradeCaptureReportAck, a NewOrderSingle and an
//! OrderCancelRequest into the engine's use cases. Nothing is answered directly: every
//! reply goes through the FIX outbox, so it is numbered, filed and resent like the rest.

use async_trait::async_trait;
use chrono::{DateTime, TimeDelta, Utc};
use ironfix_core::message::RawMessage;
use ironfix_engine::OutboundMessage;
use ironfix_engine::application::{Application, RejectReason, SessionId};
use ironfix_engine::close::CloseReason;
use rust_decimal::Decimal;
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use upstairs_domain::CompanyId;
use upstairs_engine::fix::{
    CancelRefusal, FixNewOrder, FixOrderAnswer, FixOrderStatus, FixReport, FixStatusAnswer, OrderStatus, RefusedAnswer,
    RefusedCancel, RefusedOrder,
};
use upstairs_engine::{Engine, EngineError, Store};

use crate::dictionary::reason::{INVALID_MSG_TYPE, REQUIRED_TAG_MISSING, VALUE_INCORRECT};
use crate::messages::{ROLE_ORDER_ORIGINATION_TRADER, msg_type, read_side, tag, whole_quantity};

/// Failed Logons from one source address for one CompID before that address's Logons
/// for it are refused unheard for a while (on the engine's clock), so a password cannot
/// be guessed at the speed of the hashing slots (which web sign-in needs). Counted per
/// address, so nobody can lock a company out from elsewhere (ADR 0028).
const LOGON_FAILURES: u32 = 5;
const LOGON_LOCKOUT: TimeDelta = TimeDelta::seconds(60);
/// How many counts are kept before the ones past the lockout are dropped.
const FAILURES_KEPT: usize = 1024;
/// What a peer that is not authenticated is refused with. ironfix sends it nothing (every
/// session has a store), and our own log line says what really happened.
const LOGON_REFUSED: &str = "Logon refused";

tokio::task_local! {
    /// The source address of the connection whose Logon is being read (set by the accept
    /// loop around the handshake; absent in an established session's task).
    pub static SOURCE: IpAddr;
}

/// Failed Logons of one CompID (as the peer named it, known or not) from one address.
type FailureKey = (IpAddr, String);

/// What every session of the gateway shares: which company each CompID's session was
/// made for, which companies have a session logged on, and failed Logons.
#[derive(Default)]
pub struct Shared {
    routes: Mutex<HashMap<String, CompanyId>>,
    live: Mutex<HashSet<CompanyId>>,
    failures: Mutex<HashMap<FailureKey, (u32, DateTime<Utc>)>>,
    carried: Mutex<HashMap<CompanyId, Arc<Carried>>>,
    /// How often a session looks at its outbox when nothing rang it.
    pub outbox_poll: std::time::Duration,
}

/// The outbox message a company's session is sending, handed to its store beside the
/// frame (ADR 0030): the sender loop puts it here just before the send, and the store
/// takes it as it files the next frame of that MsgType. Only the sender loop sends
/// application messages, one at a time, so that frame is this message's.
#[derive(Default)]
pub struct Carried(Mutex<Option<(String, &'static str)>>);

impl Carried {
    /// The message `id`, about to be sent as `msg_type`.
    pub fn put(&self, id: &str, msg_type: &'static str) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some((id.to_owned(), msg_type));
    }

    /// The id of the message a frame of `msg_type` carries, if it is the one put here.
    pub fn take(&self, msg_type: &str) -> Option<String> {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match slot.take() {
            Some((id, t)) if t == msg_type => Some(id),
            other => {
                *slot = other;
                None
            }
        }
    }

    pub fn clear(&self) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
    }
}

impl Shared {
    /// `outbox_poll` is at least 10 ms: a session never reads its outbox in a busy loop.
    pub fn new(outbox_poll: std::time::Duration) -> Self {
        Self { outbox_poll: outbox_poll.max(std::time::Duration::from_millis(10)), ..Self::default() }
    }

    /// The session of `comp_id` serves `company`, for as long as the gateway runs.
    pub fn bind(&self, comp_id: &str, company: CompanyId) {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner).insert(comp_id.to_owned(), company);
    }

    pub fn company_of(&self, comp_id: &str) -> Option<CompanyId> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner).get(comp_id).copied()
    }

    /// Where the company's session hands the store the outbox message it sends.
    pub fn carried(&self, company: CompanyId) -> Arc<Carried> {
        self.carried.lock().unwrap_or_else(PoisonError::into_inner).entry(company).or_default().clone()
    }

    /// Takes the company's one live session; false when another CompID of it holds it.
    fn claim(&self, company: CompanyId) -> bool {
        self.live.lock().unwrap_or_else(PoisonError::into_inner).insert(company)
    }

    fn release(&self, company: CompanyId) {
        self.live.lock().unwrap_or_else(PoisonError::into_inner).remove(&company);
    }

    /// Whether Logons for this CompID from this address are refused unheard at `now`.
    fn locked_out(&self, key: &FailureKey, now: DateTime<Utc>) -> bool {
        let failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        failures.get(key).is_some_and(|(n, last)| *n >= LOGON_FAILURES && now - *last < LOGON_LOCKOUT)
    }

    /// Counts a failed Logon; returns the failures in a row (within the lockout).
    fn failed(&self, key: FailureKey, now: DateTime<Utc>) -> u32 {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        if failures.len() >= FAILURES_KEPT {
            failures.retain(|_, (_, last)| now - *last < LOGON_LOCKOUT);
        }
        let entry = failures.entry(key).or_insert((0, now));
        if now - entry.1 >= LOGON_LOCKOUT {
            entry.0 = 0;
        }
        *entry = (entry.0.saturating_add(1), now);
        entry.0
    }

    fn succeeded(&self, key: &FailureKey) {
        self.failures.lock().unwrap_or_else(PoisonError::into_inner).remove(key);
    }
}

/// The venue's side of one session. `company` is `None` for a Logon from a CompID no
/// company has: its only use is to refuse that Logon exactly as a wrong password is.
pub struct VenueApp<S: Store> {
    engine: Engine<S>,
    company: Option<CompanyId>,
    shared: Arc<Shared>,
    /// Whether this session holds its company's live claim.
    holds_claim: AtomicBool,
}

fn missing(t: u32, name: &str) -> RejectReason {
    RejectReason::new(REQUIRED_TAG_MISSING, format!("{name} ({t}) is required")).with_ref_tag(t)
}

fn venue_failure(e: &EngineError) -> RejectReason {
    tracing::error!(error = %e, "a FIX message could not be acted on");
    // 99: Other. The message was accepted in sequence; the peer may send it again.
    RejectReason::new(99, "The venue cannot act on this message right now")
}

impl<S: Store> VenueApp<S> {
    pub fn new(engine: Engine<S>, company: Option<CompanyId>, shared: Arc<Shared>) -> Self {
        Self { engine, company, shared, holds_claim: AtomicBool::new(false) }
    }

    /// Authenticates a Logon and takes the company's live session. An unknown CompID, a
    /// wrong password and an address locked out are refused alike (the peer sees the
    /// connection closed, nothing more); the log says which it was.
    async fn logon(&self, m: &RawMessage<'_>, comp_id: &str) -> Result<(), RejectReason> {
        let refused = || RejectReason::new(0, LOGON_REFUSED);
        let Ok(source) = SOURCE.try_with(|s| *s) else {
            // Not a handshake: a Logon on a session already logged on, which may only
            // reset the sequence numbers (ironfix asks only for that one).
            return self.reset_in_session(m, comp_id).await;
        };
        let key = (source, comp_id.to_owned());
        if self.shared.locked_out(&key, self.engine.clock().now()) {
            let reason = "locked out: too many failed Logons from this address";
            tracing::warn!(%source, comp_id, reason, "FIX Logon refused");
            return Err(refused());
        }
        let verdict = self.engine.fix.fix_logon(comp_id, m.get_field_str(tag::PASSWORD)).await;
        let c = match verdict {
            Ok(Ok(c)) if Some(c.company_id) == self.company => c,
            Ok(Ok(c)) => {
                // The CompID's company changed after this session was made.
                let reason = "the CompID changed hands since its session was made";
                tracing::warn!(%source, comp_id, company = %c.company_id, reason, "FIX Logon refused");
                return Err(refused());
            }
            Ok(Err(why)) => {
                let failures = self.shared.failed(key, self.engine.clock().now());
                tracing::warn!(%source, comp_id, failures, reason = %why, "FIX Logon refused");
                return Err(refused());
            }
            Err(e) => return Err(venue_failure(&e)),
        };
        let company = c.company_id;
        self.shared.succeeded(&key);
        if m.get_field_str(tag::RESET_SEQ_NUM_FLAG) == Some("Y") && !c.fix_reset_on_logon {
            return Err(RejectReason::new(0, "ResetSeqNumFlag (141) is not allowed for this company"));
        }
        let taken = || RejectReason::new(0, "This company's FIX session is logged on already");
        if !self.shared.claim(company) {
            return Err(taken());
        }
        // The other nodes' sessions too (ADR 0026).
        match self.engine.fix.fix_take_session(company).await {
            Ok(true) => {}
            Ok(false) => {
                self.shared.release(company);
                return Err(taken());
            }
            Err(e) => {
                self.shared.release(company);
                return Err(venue_failure(&e));
            }
        }
        self.holds_claim.store(true, Ordering::Release);
        Ok(())
    }

    /// A Logon with ResetSeqNumFlag (141=Y) on the live session: allowed when the
    /// session's company still has this CompID and allows resets.
    async fn reset_in_session(&self, m: &RawMessage<'_>, comp_id: &str) -> Result<(), RejectReason> {
        let on_session = || RejectReason::new(0, "This company's FIX session is logged on already");
        if m.get_field_str(tag::RESET_SEQ_NUM_FLAG) != Some("Y") {
            return Err(on_session());
        }
        match self.engine.fix.fix_company(comp_id).await {
            Ok(Some(c)) if Some(c.company_id) == self.company && c.fix_reset_on_logon => Ok(()),
            Ok(_) => Err(RejectReason::new(0, "ResetSeqNumFlag (141) is not allowed for this company")),
            Err(e) => Err(venue_failure(&e)),
        }
    }

    async fn set_logged_on(&self, on: bool) {
        let Some(company) = self.company else { return };
        if let Err(e) = self.engine.fix.fix_logged(company, on).await {
            tracing::warn!(%company, error = %e, "could not record the FIX session's state");
        }
    }

    async fn trade_ack(&self, company: CompanyId, m: &RawMessage<'_>) -> Result<(), RejectReason> {
        let id = m.get_field_str(tag::TRADE_REPORT_ID).ok_or_else(|| missing(tag::TRADE_REPORT_ID, "TradeReportID"))?;
        let yes = match m.get_field_str(tag::TRD_RPT_STATUS) {
            Some("0") => true,
            Some("1") => false,
            Some(_) => {
                return Err(RejectReason::new(VALUE_INCORRECT, "TrdRptStatus (939) is 0 (accepted) or 1 (rejected)")
                    .with_ref_tag(tag::TRD_RPT_STATUS));
            }
            None => return Err(missing(tag::TRD_RPT_STATUS, "TrdRptStatus")),
        };
        // The broker's ack of a cancel the venue sent (the other side's broker declined):
        // there is nothing left to answer.
        if upstairs_engine::fix::parse_trade_cancel_id(id).is_some() {
            if yes {
                tracing::info!(%company, trade_report = id, "FIX ack of a trade report's cancel");
            } else {
                tracing::warn!(%company, trade_report = id, "a broker rejected a trade report's cancel: the trade stays declined");
            }
            return Ok(());
        }
        match self.engine.fix.fix_confirm_trade(company, id, yes).await {
            Ok(c) => {
                tracing::info!(%company, order = %c.order_id, step = ?c.step, yes, "broker answered by FIX");
                Ok(())
            }
            // Answered already (by e-mail, or this ack resent): the first answer stands,
            // and the broker is told why this one changed nothing.
            Err(EngineError::Conflict { detail, .. }) => {
                tracing::info!(%company, trade_report = id, %detail, "FIX ack after the trade was answered");
                let report = RefusedAnswer {
                    ref_seq_num: m.get_field_str(tag::MSG_SEQ_NUM).and_then(|n| n.parse().ok()).unwrap_or(0),
                    trade_report_id: id.to_owned(),
                    text: detail,
                };
                let report = FixReport::AnswerRefused(report);
                self.engine.fix.fix_reply(company, report).await.map_err(|e| venue_failure(&e))
            }
            Err(EngineError::NotFound(text)) => {
                Err(RejectReason::new(VALUE_INCORRECT, text).with_ref_tag(tag::TRADE_REPORT_ID))
            }
            Err(e) => Err(venue_failure(&e)),
        }
    }

    /// A broker's AllocationInstructionAck (ADR 0045): AllocStatus 0 accepts the version
    /// its AllocID names, 1 (block) or 2 (an account) rejects it; 3 (received) and the
    /// pending statuses leave it pending.
    async fn allocation_ack(&self, company: CompanyId, m: &RawMessage<'_>) -> Result<(), RejectReason> {
        let id = m.get_field_str(tag::ALLOC_ID).ok_or_else(|| missing(tag::ALLOC_ID, "AllocID"))?;
        let accepted = match m.get_field_str(tag::ALLOC_STATUS) {
            Some("0") => true,
            Some("1" | "2" | "5") => false,
            Some(status) => {
                tracing::info!(%company, alloc_id = id, status, "a broker received an allocation");
                return Ok(());
            }
            None => return Err(missing(tag::ALLOC_STATUS, "AllocStatus")),
        };
        let text = m.get_field_str(tag::TEXT).map(str::to_owned);
        match self.engine.allocations.acknowledge(company, id, accepted, text).await {
            Ok(()) => {
                tracing::info!(%company, alloc_id = id, accepted, "broker answered an allocation by FIX");
                Ok(())
            }
            Err(EngineError::NotFound(text)) => {
                Err(RejectReason::new(VALUE_INCORRECT, text).with_ref_tag(tag::ALLOC_ID))
            }
            Err(e) => Err(venue_failure(&e)),
        }
    }

    async fn new_order(&self, company: CompanyId, m: &RawMessage<'_>) -> Result<(), RejectReason> {
        let (order, refused) = read_order(m, tag::ORDER_QTY)?;
        let answer = match refused {
            Some(text) => FixOrderAnswer::Refused(text),
            None => self.engine.fix.fix_new_parent_order(company, order).await.map_err(|e| venue_failure(&e))?,
        };
        match answer {
            FixOrderAnswer::Created(_) => Ok(()),
            FixOrderAnswer::Known(parent) => {
                // A parent an execution system sent always has its ClOrdID.
                let Some(report) = self.engine.fix.fix_parent_report(parent).await.map_err(|e| venue_failure(&e))?
                else {
                    return Ok(());
                };
                let report = FixReport::Execution(report);
                self.engine.fix.fix_reply(company, report).await.map_err(|e| venue_failure(&e))
            }
            FixOrderAnswer::Refused(text) => self.refuse_order(company, m, tag::ORDER_QTY, text).await,
        }
    }

    /// An ExecutionReport answering the venue's OrderMassStatusRequest (ADR 0050): one of
    /// the execution system's orders, whose quantity is what it still works (LeavesQty).
    /// An empty answer (TotNumReports 0) names no order.
    async fn order_status(&self, company: CompanyId, m: &RawMessage<'_>) -> Result<(), RejectReason> {
        let request = m
            .get_field_str(tag::MASS_STATUS_REQ_ID)
            .ok_or_else(|| missing(tag::MASS_STATUS_REQ_ID, "MassStatusReqID"))?;
        if m.get_field_str(tag::TOT_NUM_REPORTS) == Some("0") {
            tracing::info!(%company, request, "the execution system has no working orders");
            return Ok(());
        }
        let working = m.get_field_str(tag::ORD_STATUS).is_some_and(crate::messages::working_status);
        let (order, unreadable) = read_order(m, tag::LEAVES_QTY)?;
        let status = FixOrderStatus { order, working, unreadable };
        match self.engine.fix.fix_order_status(company, status).await.map_err(|e| venue_failure(&e))? {
            FixStatusAnswer::Refused(text) => self.refuse_order(company, m, tag::LEAVES_QTY, text).await,
            answer => {
                tracing::info!(%company, request, ?answer, "an execution system's order status");
                Ok(())
            }
        }
    }

    /// An ExecutionReport (Rejected) for an order the venue does not take.
    async fn refuse_order(
        &self,
        company: CompanyId,
        m: &RawMessage<'_>,
        quantity_tag: u32,
        text: String,
    ) -> Result<(), RejectReason> {
        let field = |t| m.get_field_str(t).map(str::to_owned);
        let refused = RefusedOrder {
            cl_ord_id: field(tag::CL_ORD_ID).unwrap_or_default(),
            side: field(tag::SIDE).unwrap_or_default(),
            quantity: field(quantity_tag).unwrap_or_default(),
            symbol: field(tag::SYMBOL),
            security_id: field(tag::SECURITY_ID),
            security_id_source: field(tag::SECURITY_ID_SOURCE),
            exchange: field(tag::SECURITY_EXCHANGE),
            text,
        };
        self.engine.fix.fix_refuse_order(company, refused).await.map_err(|e| venue_failure(&e))
    }

    async fn cancel(&self, company: CompanyId, m: &RawMessage<'_>) -> Result<(), RejectReason> {
        let orig = m.get_field_str(tag::ORIG_CL_ORD_ID).ok_or_else(|| missing(tag::ORIG_CL_ORD_ID, "OrigClOrdID"))?;
        let cl_ord_id = m.get_field_str(tag::CL_ORD_ID).ok_or_else(|| missing(tag::CL_ORD_ID, "ClOrdID"))?;
        let refusal = match self.engine.fix.fix_cancel_parent_order(company, orig, cl_ord_id).await {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(r)) => r,
            Err(e) => return Err(venue_failure(&e)),
        };
        let CancelRefusal { reason, text, parent } = refusal;
        let report = match parent {
            Some(p) => self.engine.fix.fix_parent_report(p).await.map_err(|e| venue_failure(&e))?,
            None => None,
        };
        let report = RefusedCancel {
            order_id: parent,
            cl_ord_id: cl_ord_id.to_owned(),
            orig_cl_ord_id: orig.to_owned(),
            status: report.map_or(OrderStatus::Rejected, |r| r.status),
            reason,
            text,
        };
        self.engine.fix.fix_reply(company, FixReport::CancelRefused(report)).await.map_err(|e| venue_failure(&e))
    }
}

/// An execution system's order as a NewOrderSingle (its quantity in OrderQty) or an
/// order status (in `quantity_tag`, LeavesQty) carries it, and why it cannot be a parent
/// order, when its side, quantity or MinQty cannot be read.
fn read_order(m: &RawMessage<'_>, quantity_tag: u32) -> Result<(FixNewOrder, Option<String>), RejectReason> {
    let cl_ord_id = m.get_field_str(tag::CL_ORD_ID).ok_or_else(|| missing(tag::CL_ORD_ID, "ClOrdID"))?;
    let quantity_name = if quantity_tag == tag::ORDER_QTY { "OrderQty" } else { "LeavesQty" };
    let side = m.get_field_str(tag::SIDE).ok_or_else(|| missing(tag::SIDE, "Side"))?;
    let qty = m.get_field_str(quantity_tag).ok_or_else(|| missing(quantity_tag, quantity_name))?;
    let whole = |q: &str| Decimal::from_str(q).ok().and_then(whole_quantity);
    // MinQty (110): the minimum execution size of the parent's child orders (ADR 0041).
    let min_qty = m.get_field_str(tag::MIN_QTY);
    let order = FixNewOrder {
        cl_ord_id: cl_ord_id.to_owned(),
        trader: trader(m),
        side: read_side(side),
        quantity: whole(qty),
        min_quantity: min_qty.and_then(whole),
        symbol: m.get_field_str(tag::SYMBOL).map(str::to_owned),
        security_id: m.get_field_str(tag::SECURITY_ID).map(str::to_owned),
        exchange: m.get_field_str(tag::SECURITY_EXCHANGE).map(str::to_owned),
        text: m.get_field_str(tag::TEXT).map(str::to_owned).filter(|t| !t.trim().is_empty()),
    };
    let refused = match (order.side, order.quantity) {
        (None, _) => Some("Side (54) is 1 (buy) or 2 (sell)".to_owned()),
        (_, None) => Some(format!("{quantity_name} ({quantity_tag}) must be a whole number of lots above 0")),
        _ if min_qty.is_some() && order.min_quantity.is_none() => {
            Some("MinQty (110) must be a whole number of lots above 0".to_owned())
        }
        _ => None,
    };
    Ok((order, refused))
}

/// The trader a NewOrderSingle is for: the PartyID of its Parties entry with PartyRole 11
/// (order origination trader).
fn trader(m: &RawMessage<'_>) -> Option<String> {
    let mut last_id: Option<&[u8]> = None;
    for f in m.fields() {
        match f.tag {
            tag::PARTY_ID => last_id = Some(f.value),
            tag::PARTY_ROLE if f.value == ROLE_ORDER_ORIGINATION_TRADER.as_bytes() => {
                return last_id.and_then(|v| std::str::from_utf8(v).ok()).map(str::to_owned);
            }
            _ => {}
        }
    }
    None
}

#[async_trait]
impl<S: Store> Application for VenueApp<S> {
    async fn on_create(&self, _: &SessionId) {}

    async fn on_logon(&self, session: &SessionId) {
        tracing::info!(%session, "FIX session logged on");
        self.set_logged_on(true).await;
    }

    async fn on_logout(&self, session: &SessionId) {
        tracing::info!(%session, "FIX session logged out");
    }

    async fn on_session_closed(&self, session: &SessionId, reason: &CloseReason) {
        tracing::info!(%session, ?reason, "FIX session closed");
        if reason.was_active() {
            self.set_logged_on(false).await;
        }
        if self.holds_claim.swap(false, Ordering::AcqRel)
            && let Some(company) = self.company
        {
            if let Err(e) = self.engine.fix.fix_release_session(company).await {
                // Another node may take it once this node's hold lapses.
                tracing::warn!(%company, error = %e, "could not let go of the FIX session");
            }
            self.shared.release(company);
        }
    }

    async fn to_admin(&self, _: &mut OutboundMessage, _: &SessionId) {}

    /// Authenticates a Logon: its CompID must still be the company's, its Password (554)
    /// the company's FIX password, its ResetSeqNumFlag allowed by the company, and no
    /// other session of the company logged on.
    async fn from_admin(&self, m: &RawMessage<'_>, session: &SessionId) -> Result<(), RejectReason> {
        match m.msg_type().as_str() {
            msg_type::LOGON => self.logon(m, &session.target_comp_id).await,
            _ => crate::dictionary::check(m),
        }
    }

    async fn to_app(&self, _: &mut OutboundMessage, _: &SessionId) {}

    async fn from_app(&self, m: &RawMessage<'_>, _: &SessionId) -> Result<(), RejectReason> {
        let Some(company) = self.company else {
            return Err(RejectReason::new(INVALID_MSG_TYPE, "Not logged on"));
        };
        crate::dictionary::check(m)?;
        match m.msg_type().as_str() {
            msg_type::TRADE_CAPTURE_REPORT_ACK => self.trade_ack(company, m).await,
            msg_type::ALLOCATION_INSTRUCTION_ACK => self.allocation_ack(company, m).await,
            // Another engine's BusinessMessageReject of one of ours: noted, never answered.
            msg_type::BUSINESS_MESSAGE_REJECT => {
                tracing::warn!(%company, ref_msg_type = m.get_field_str(372), reason = m.get_field_str(380),
                    text = m.get_field_str(tag::TEXT), "FIX BusinessMessageReject received");
                Ok(())
            }
            msg_type::NEW_ORDER_SINGLE => self.new_order(company, m).await,
            msg_type::ORDER_CANCEL_REQUEST => self.cancel(company, m).await,
            msg_type::EXECUTION_REPORT => self.order_status(company, m).await,
            other => Err(RejectReason::new(INVALID_MSG_TYPE, format!("MsgType {other} is not supported here"))
                .with_ref_tag(tag::MSG_TYPE)),
        }
    }
}
