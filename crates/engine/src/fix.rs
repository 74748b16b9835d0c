//! The FIX gateway's use cases (ADR 0025). The gateway (`crates/fix`) owns the wire and
//! the session protocol; here are what it stores and what its messages do:
//!
//! - a company's session: sequence numbers both ways and the frames it sent, so a resend
//!   after a restart replays them;
//! - the FIX outbox: TradeCaptureReports to brokers and ExecutionReports to execution
//!   systems, written in the transaction of the change that caused them, marked sent in
//!   the write that files the frame under its sequence number (so exactly once);
//! - a broker's TradeCaptureReportAck, answered like the e-mail link
//!   ([`Engine::fix_confirm_trade`]), and an execution system's NewOrderSingle and
//!   OrderCancelRequest, which create and cancel parent orders as the API does.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde_json::json;
use std::collections::BTreeSet;
use upstairs_domain::order::Direction;
use upstairs_domain::{CompanyId, OrderId, ParentOrderId, Permission};
use uuid::Uuid;

use crate::confirmations::{Answer, TradeConfirmation};
use crate::context::{Actor, audit, require};
use crate::error::EngineError;
use crate::model::*;
use crate::orders::NewParentOrder;
use crate::ports::*;
use crate::{Engine, Store};

pub const TRADE_CAPTURE_REPORT: &str = "AE";
pub const EXECUTION_REPORT: &str = "8";
/// Tags the engine writes into messages.
pub mod tag {
    pub const AVG_PX: u32 = 6;
    pub const CL_ORD_ID: u32 = 11;
    pub const CUM_QTY: u32 = 14;
    pub const EXEC_ID: u32 = 17;
    pub const SECURITY_ID_SOURCE: u32 = 22;
    pub const LAST_PX: u32 = 31;
    pub const LAST_QTY: u32 = 32;
    pub const ORDER_ID: u32 = 37;
    pub const ORDER_QTY: u32 = 38;
    pub const ORD_STATUS: u32 = 39;
    pub const ORIG_CL_ORD_ID: u32 = 41;
    pub const SECURITY_ID: u32 = 48;
    pub const SIDE: u32 = 54;
    pub const SYMBOL: u32 = 55;
    pub const TEXT: u32 = 58;
    pub const TRANSACT_TIME: u32 = 60;
    pub const TRADE_DATE: u32 = 75;
    pub const ORD_TYPE: u32 = 40;
    pub const EXEC_TYPE: u32 = 150;
    pub const LEAVES_QTY: u32 = 151;
    pub const SECURITY_EXCHANGE: u32 = 207;
    pub const PARTY_ID_SOURCE: u32 = 447;
    pub const PARTY_ID: u32 = 448;
    pub const PARTY_ROLE: u32 = 452;
    pub const NO_PARTY_IDS: u32 = 453;
    pub const TRADE_REPORT_TRANS_TYPE: u32 = 487;
    pub const NO_SIDES: u32 = 552;
    pub const PREVIOUSLY_REPORTED: u32 = 570;
    pub const TRADE_REPORT_ID: u32 = 571;
    pub const TRADE_REPORT_REF_ID: u32 = 572;
    pub const TRADE_REPORT_TYPE: u32 = 856;
    pub const TRD_MATCH_ID: u32 = 880;
    pub const TRD_RPT_STATUS: u32 = 939;
}

/// PartyRole (452) values used here.
pub const ROLE_EXECUTING_FIRM: &str = "1";
pub const ROLE_CLIENT_ID: &str = "3";
pub const ROLE_ORDER_ORIGINATION_TRADER: &str = "11";
pub const ROLE_CONTRA_FIRM: &str = "17";

/// How many unsent messages a session takes from the outbox at a time.
/// How long a node holds a company's FIX session without renewing it (ADR 0026): a node
/// that dies leaves the session to another after this.
pub const FIX_HOLD: chrono::TimeDelta = chrono::TimeDelta::seconds(30);
/// How often a node renews its hold, well inside [`FIX_HOLD`].
pub const FIX_HOLD_RENEW: std::time::Duration = std::time::Duration::from_secs(10);

pub const OUTBOX_BATCH: i64 = 100;

/// A CompID a company may have: 1 to 32 letters, digits, `.`, `_` or `-`.
pub fn valid_comp_id(id: &str) -> bool {
    (1..=32).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// The value of the first `tag` of a FIX frame (tag=value fields split by SOH).
pub fn frame_field(frame: &[u8], tag: u32) -> Option<&str> {
    let prefix = format!("{tag}=");
    frame
        .split(|b| *b == 0x01)
        .find_map(|f| f.strip_prefix(prefix.as_bytes()))
        .and_then(|v| std::str::from_utf8(v).ok())
}

/// FIX's UTCTimestamp with milliseconds.
pub fn utc_timestamp(t: DateTime<Utc>) -> String {
    t.format("%Y%m%d-%H:%M:%S%.3f").to_string()
}

fn side(d: Direction) -> &'static str {
    match d {
        Direction::Buy => "1",
        Direction::Sell => "2",
    }
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

/// The instrument fields of a message: Symbol (the Bloomberg code, else the name), and the
/// exchange's own id when the instrument has one.
fn instrument_fields(i: &Instrument, f: &mut Vec<(u32, String)>) {
    f.push((tag::SYMBOL, i.bbg_code.clone().unwrap_or_else(|| i.name.clone())));
    if let Some(id) = &i.exchange_instrument_id {
        f.push((tag::SECURITY_ID, id.clone()));
        f.push((tag::SECURITY_ID_SOURCE, "8".into()));
    }
    f.push((tag::SECURITY_EXCHANGE, i.exchange_id.clone()));
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
    /// CxlRejReason (102): 0 too late to cancel, 1 unknown order.
    pub reason: u8,
    pub text: String,
    pub parent: Option<ParentOrderId>,
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

    /// Files a frame about to be sent under `seq`, with the next number, in one write; a
    /// message from the outbox is marked sent in the same write, so a crash either sends
    /// it again from the outbox (nothing was filed) or replays the filed frame on a
    /// ResendRequest, never both.
    pub async fn fix_file_outbound(
        &self,
        company: CompanyId,
        seq: i64,
        msg_type: &str,
        frame: &[u8],
        next_sender: i64,
    ) -> Result<(), EngineError> {
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let mut s = tx.fix_session(company, now).await?;
        tx.insert_fix_message(company, &StoredFixMessage { seq, msg_type: msg_type.into(), frame: frame.to_vec() })
            .await?;
        let own_id = match msg_type {
            TRADE_CAPTURE_REPORT => frame_field(frame, tag::TRADE_REPORT_ID),
            EXECUTION_REPORT => frame_field(frame, tag::EXEC_ID),
            _ => None,
        };
        if let Some(id) = own_id {
            tx.mark_fix_outbox_sent(company, id, seq, now).await?;
        }
        s.next_sender_seq = next_sender;
        s.last_message_at = Some(now);
        tx.update_fix_session(&s).await?;
        tx.commit().await?;
        Ok(())
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
    /// answer), and its ExecutionReport (Rejected, `fields`) goes out, in one write.
    pub async fn fix_refuse_order(
        &self,
        company: CompanyId,
        cl_ord_id: &str,
        reason: &str,
        fields: Vec<(u32, String)>,
    ) -> Result<(), EngineError> {
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        tx.refuse_fix_order(company, cl_ord_id, reason, now).await?;
        self.enqueue_fix(&mut tx, company, EXECUTION_REPORT, fields, now).await?;
        tx.commit().await?;
        self.poke();
        Ok(())
    }

    /// A reply to a message the session received (a refusal, a state asked again), through
    /// the outbox like every other message, so that it is numbered and resent alike.
    pub async fn fix_reply(
        &self,
        company: CompanyId,
        msg_type: &str,
        fields: Vec<(u32, String)>,
    ) -> Result<(), EngineError> {
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        self.enqueue_fix(&mut tx, company, msg_type, fields, now).await?;
        tx.commit().await?;
        self.poke();
        Ok(())
    }

    /// Records that an outbox message went out under `seq` (already done, for a message
    /// whose frame carries its id: then this changes nothing).
    pub async fn fix_mark_sent(&self, company: CompanyId, id: &str, seq: i64) -> Result<(), EngineError> {
        let mut tx = self.store.write().await?;
        tx.mark_fix_outbox_sent(company, id, seq, self.clock.now()).await?;
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
        let id = trade_report_id(o.order_id, step);
        let mut f = vec![(tag::TRADE_REPORT_ID, id.clone())];
        match step {
            ConfirmationStep::Accept => f.push((tag::TRADE_REPORT_TRANS_TYPE, "0".into())),
            ConfirmationStep::Fill => {
                f.push((tag::TRADE_REPORT_TRANS_TYPE, "2".into()));
                f.push((tag::TRADE_REPORT_REF_ID, trade_report_id(o.order_id, ConfirmationStep::Accept)));
            }
        }
        f.extend([
            (tag::TRADE_REPORT_TYPE, "0".into()),
            (tag::TRD_MATCH_ID, m.match_request_id.to_string()),
            (tag::EXEC_ID, id.clone()),
            (tag::PREVIOUSLY_REPORTED, "N".into()),
        ]);
        instrument_fields(&instrument, &mut f);
        f.extend([
            (tag::LAST_QTY, o.quantity.to_string()),
            (tag::LAST_PX, o.price.normalize().to_string()),
            (tag::TRADE_DATE, m.updated_at.format("%Y%m%d").to_string()),
            (tag::TRANSACT_TIME, utc_timestamp(m.updated_at)),
            (tag::NO_SIDES, "1".into()),
            (tag::SIDE, side(o.direction).into()),
            (tag::ORDER_ID, o.order_id.to_string()),
            (tag::NO_PARTY_IDS, "3".into()),
        ]);
        let party = |f: &mut Vec<(u32, String)>, id: String, role: &str| {
            f.extend([(tag::PARTY_ID, id), (tag::PARTY_ID_SOURCE, "D".into()), (tag::PARTY_ROLE, role.into())]);
        };
        party(&mut f, broker_comp_id, ROLE_EXECUTING_FIRM);
        // The other broker by name, as the e-mail names it: its CompID is half of its
        // FIX credentials and stays between it and the venue.
        let contra_id = contra.map(|c| c.name).unwrap_or_default();
        party(&mut f, contra_id, ROLE_CONTRA_FIRM);
        let client_id = client.map(|c| c.account.unwrap_or(c.name)).unwrap_or_default();
        party(&mut f, client_id, ROLE_CLIENT_ID);
        tx.insert_fix_outbox(&FixOutboxMessage {
            fix_outbox_id: id,
            company_id: broker.company_id,
            msg_type: TRADE_CAPTURE_REPORT.into(),
            fields: clean(f),
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
            let (exec_type, last) = if *undone { ("H", None) } else { ("F", Some(o)) };
            let mut f = self.execution_report_fields(tx, &v, &cl_ord_id, exec_type, last).await?;
            f.push((tag::TRANSACT_TIME, utc_timestamp(now)));
            self.enqueue_fix(tx, company, EXECUTION_REPORT, f, now).await?;
        }
        Ok(())
    }

    /// An ExecutionReport's fields for a parent order as it stands, without ExecID (the
    /// outbox row's id) and TransactTime. AvgPx is the matched children's price weighted by
    /// their quantity (0 with nothing matched).
    async fn execution_report_fields(
        &self,
        tx: &mut S::Tx,
        v: &ParentOrderView,
        cl_ord_id: &str,
        exec_type: &str,
        last: Option<&ChildOrder>,
    ) -> Result<Vec<(u32, String)>, EngineError> {
        let p = &v.parent;
        let status = match p.state {
            ParentState::Cancelled => "4",
            ParentState::Filled => "2",
            _ if v.matched >= p.quantity => "2",
            _ if v.matched > 0 => "1",
            _ => "0",
        };
        let instrument = self.instrument_in(tx, p.instrument_id).await?;
        let mut f = vec![
            (tag::ORDER_ID, p.parent_order_id.to_string()),
            (tag::CL_ORD_ID, cl_ord_id.to_owned()),
            (tag::EXEC_TYPE, exec_type.into()),
            (tag::ORD_STATUS, status.into()),
            (tag::SIDE, side(p.direction).into()),
        ];
        instrument_fields(&instrument, &mut f);
        let leaves = if matches!(status, "2" | "4") { 0 } else { p.quantity - v.matched };
        let children =
            tx.orders(&OrderFilter { parent_order_id: Some(p.parent_order_id), ..Default::default() }).await?;
        let (mut qty, mut notional) = (Decimal::ZERO, Decimal::ZERO);
        for o in children.iter().filter(|o| o.state.is_matched()) {
            qty += Decimal::from(o.quantity);
            notional += o.price * Decimal::from(o.quantity);
        }
        let avg = if qty.is_zero() { Decimal::ZERO } else { (notional / qty).round_dp(10).normalize() };
        f.extend([
            (tag::ORDER_QTY, p.quantity.to_string()),
            (tag::CUM_QTY, v.matched.to_string()),
            (tag::LEAVES_QTY, leaves.max(0).to_string()),
            (tag::AVG_PX, avg.to_string()),
        ]);
        if let Some(o) = last {
            f.push((tag::LAST_QTY, o.quantity.to_string()));
            f.push((tag::LAST_PX, o.price.normalize().to_string()));
        }
        Ok(f)
    }

    /// Puts a message for a company's session in the outbox; an ExecutionReport's id is
    /// its ExecID.
    async fn enqueue_fix(
        &self,
        tx: &mut S::Tx,
        company: CompanyId,
        msg_type: &str,
        mut fields: Vec<(u32, String)>,
        now: DateTime<Utc>,
    ) -> Result<(), EngineError> {
        let id = Uuid::now_v7().to_string();
        if msg_type == EXECUTION_REPORT {
            fields.insert(0, (tag::EXEC_ID, id.clone()));
        }
        tx.insert_fix_outbox(&FixOutboxMessage {
            fix_outbox_id: id,
            company_id: company,
            msg_type: msg_type.into(),
            fields: clean(fields),
            created_at: now,
            sent_seq: None,
        })
        .await?;
        Ok(())
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
        let exec_type = if v.parent.state == ParentState::Cancelled { "4" } else { "0" };
        let own = cancel_cl_ord_id.unwrap_or(&cl_ord_id);
        let mut f = self.execution_report_fields(tx, v, own, exec_type, None).await?;
        if cancel_cl_ord_id.is_some() {
            f.push((tag::ORIG_CL_ORD_ID, cl_ord_id.clone()));
        }
        f.push((tag::TRANSACT_TIME, utc_timestamp(now)));
        self.enqueue_fix(tx, company, EXECUTION_REPORT, f, now).await
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
        let unknown = |parent| CancelRefusal { reason: 1, text: "Unknown order".into(), parent };
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
                self.fix_reply(company, EXECUTION_REPORT, report).await?;
            }
            return Ok(Ok(parent));
        }
        let actor =
            Actor { user: user.user, company_name: user.company_name, session_id: upstairs_domain::SessionId::new() };
        match self.cancel_parent_order_from(&actor, parent, Some(cl_ord_id)).await {
            Ok(()) => Ok(Ok(parent)),
            Err(e) => match refusal_text(&e) {
                Some(text) => Ok(Err(CancelRefusal { reason: 0, text, parent: Some(parent) })),
                None => Err(e),
            },
        }
    }

    /// The state of a parent an execution system sent, for a repeated ClOrdID.
    pub async fn fix_parent_report(&self, parent: ParentOrderId) -> Result<Option<Vec<(u32, String)>>, EngineError> {
        let mut tx = self.store.read().await?;
        let Some((_, cl_ord_id)) = tx.fix_parent_order(parent).await? else { return Ok(None) };
        let Some(v) = tx.parent_order(parent).await? else { return Ok(None) };
        // OrderStatus (I): the order as it stands.
        let mut f = self.execution_report_fields(&mut tx, &v, &cl_ord_id, "I", None).await?;
        f.push((tag::TRANSACT_TIME, utc_timestamp(self.clock.now())));
        Ok(Some(f))
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

/// Values a FIX field can carry: no control characters (SOH ends a field), never empty.
fn clean(fields: Vec<(u32, String)>) -> Vec<(u32, String)> {
    fields
        .into_iter()
        .map(|(t, v)| {
            let v: String = v.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
            let v = v.trim();
            (t, if v.is_empty() { "-".to_owned() } else { v.to_owned() })
        })
        .collect()
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

/// Decimal quantities are not allowed: FIX's Qty may carry a fraction, a block may not.
pub fn whole_quantity(q: Decimal) -> Option<i64> {
    (q.fract().is_zero() && q > Decimal::ZERO)
        .then(|| i64::try_from(q.mantissa() / 10i128.pow(q.scale())).ok())
        .flatten()
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

    #[test]
    fn frame_fields_are_found_by_tag() {
        let frame = b"8=FIX.4.4\x019=20\x0135=AE\x01571=abc-A\x01117=x\x0110=000\x01";
        assert_eq!(frame_field(frame, 571), Some("abc-A"));
        assert_eq!(frame_field(frame, 17), None);
        assert_eq!(frame_field(frame, 35), Some("AE"));
    }

    #[test]
    fn quantities_must_be_whole() {
        assert_eq!(whole_quantity(Decimal::new(500, 0)), Some(500));
        assert_eq!(whole_quantity(Decimal::new(5000, 1)), Some(500));
        assert_eq!(whole_quantity(Decimal::new(5005, 1)), None);
        assert_eq!(whole_quantity(Decimal::ZERO), None);
        assert_eq!(whole_quantity(Decimal::new(-5, 0)), None);
    }
}
