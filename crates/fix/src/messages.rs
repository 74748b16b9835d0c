//! The FIX 4.4 the venue speaks, both ways (ADR 0030): the engine's reports
//! ([`FixReport`]) written as messages (MsgType, tags in wire order, code values,
//! timestamp formats), and the tags and codes of the requests the gateway reads. No tag
//! number or code value lives anywhere else.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use upstairs_domain::order::Direction;
use upstairs_engine::fix::{
    AllocationReport, CancelRefusalReason, ExecutionKind, ExecutionReport, FixReport, OrderStatus, RefusedAnswer,
    RefusedCancel, RefusedOrder, ReportedInstrument, TradeReport, trade_report_id,
};
use upstairs_engine::model::{AllocationLine, ConfirmationStep};

/// The tags the gateway writes and reads.
pub mod tag {
    pub const AVG_PX: u32 = 6;
    pub const QUANTITY: u32 = 53;
    pub const ALLOC_ID: u32 = 70;
    pub const ALLOC_TRANS_TYPE: u32 = 71;
    pub const REF_ALLOC_ID: u32 = 72;
    pub const NO_ORDERS: u32 = 73;
    pub const NO_ALLOCS: u32 = 78;
    pub const ALLOC_ACCOUNT: u32 = 79;
    pub const ALLOC_QTY: u32 = 80;
    pub const ALLOC_STATUS: u32 = 87;
    pub const ALLOC_REJ_CODE: u32 = 88;
    pub const INDIVIDUAL_ALLOC_ID: u32 = 467;
    pub const ALLOC_TYPE: u32 = 626;
    pub const ALLOC_CANC_REPLACE_REASON: u32 = 796;
    pub const ALLOC_NO_ORDERS_TYPE: u32 = 857;
    pub const CL_ORD_ID: u32 = 11;
    pub const CUM_QTY: u32 = 14;
    pub const EXEC_ID: u32 = 17;
    pub const SECURITY_ID_SOURCE: u32 = 22;
    pub const LAST_PX: u32 = 31;
    pub const LAST_QTY: u32 = 32;
    pub const MSG_SEQ_NUM: u32 = 34;
    pub const ORDER_ID: u32 = 37;
    pub const ORDER_QTY: u32 = 38;
    pub const ORD_STATUS: u32 = 39;
    pub const ORD_TYPE: u32 = 40;
    pub const ORIG_CL_ORD_ID: u32 = 41;
    pub const REF_SEQ_NUM: u32 = 45;
    pub const SECURITY_ID: u32 = 48;
    pub const SIDE: u32 = 54;
    pub const SYMBOL: u32 = 55;
    pub const TEXT: u32 = 58;
    pub const MSG_TYPE: u32 = 35;
    pub const TRANSACT_TIME: u32 = 60;
    pub const TRADE_DATE: u32 = 75;
    pub const MIN_QTY: u32 = 110;
    pub const CXL_REJ_REASON: u32 = 102;
    pub const RESET_SEQ_NUM_FLAG: u32 = 141;
    pub const EXEC_TYPE: u32 = 150;
    pub const LEAVES_QTY: u32 = 151;
    pub const SECURITY_EXCHANGE: u32 = 207;
    pub const REF_MSG_TYPE: u32 = 372;
    pub const BUSINESS_REJECT_REF_ID: u32 = 379;
    pub const BUSINESS_REJECT_REASON: u32 = 380;
    pub const CXL_REJ_RESPONSE_TO: u32 = 434;
    pub const PARTY_ID_SOURCE: u32 = 447;
    pub const PARTY_ID: u32 = 448;
    pub const PARTY_ROLE: u32 = 452;
    pub const NO_PARTY_IDS: u32 = 453;
    pub const TRADE_REPORT_TRANS_TYPE: u32 = 487;
    pub const NO_SIDES: u32 = 552;
    pub const PASSWORD: u32 = 554;
    pub const PREVIOUSLY_REPORTED: u32 = 570;
    pub const TRADE_REPORT_ID: u32 = 571;
    pub const TRADE_REPORT_REF_ID: u32 = 572;
    pub const TRADE_REPORT_TYPE: u32 = 856;
    pub const TRD_MATCH_ID: u32 = 880;
    pub const TRD_RPT_STATUS: u32 = 939;
    pub const MASS_STATUS_REQ_ID: u32 = 584;
    pub const MASS_STATUS_REQ_TYPE: u32 = 585;
    pub const TOT_NUM_REPORTS: u32 = 911;
}

/// MsgType (35) values.
pub mod msg_type {
    pub const EXECUTION_REPORT: &str = "8";
    pub const ORDER_CANCEL_REJECT: &str = "9";
    pub const LOGON: &str = "A";
    pub const NEW_ORDER_SINGLE: &str = "D";
    pub const ORDER_CANCEL_REQUEST: &str = "F";
    pub const BUSINESS_MESSAGE_REJECT: &str = "j";
    pub const TRADE_CAPTURE_REPORT: &str = "AE";
    pub const TRADE_CAPTURE_REPORT_ACK: &str = "AR";
    pub const ALLOCATION_INSTRUCTION: &str = "J";
    pub const ALLOCATION_INSTRUCTION_ACK: &str = "P";
    pub const ORDER_MASS_STATUS_REQUEST: &str = "AF";
}

/// PartyRole (452) values.
pub const ROLE_EXECUTING_FIRM: &str = "1";
pub const ROLE_CLIENT_ID: &str = "3";
pub const ROLE_ORDER_ORIGINATION_TRADER: &str = "11";
pub const ROLE_CONTRA_FIRM: &str = "17";
pub const ROLE_GIVEUP_CLEARING_FIRM: &str = "14";

/// A message ready for the session: its MsgType and its body fields in wire order after
/// the standard header (repeating groups flattened).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub msg_type: &'static str,
    pub fields: Vec<(u32, String)>,
}

/// The message of an outbox row: `id` is the row's id, the report's own id on the wire
/// (a trade report's TradeReportID, an execution report's ExecID).
pub fn encode(id: &str, report: &FixReport) -> Message {
    let (msg_type, fields) = match report {
        FixReport::Trade(r) => (msg_type::TRADE_CAPTURE_REPORT, trade(id, r, false)),
        FixReport::TradeCancel(r) => (msg_type::TRADE_CAPTURE_REPORT, trade(id, r, true)),
        FixReport::Execution(r) => (msg_type::EXECUTION_REPORT, execution(id, r)),
        FixReport::OrderRefused(r) => (msg_type::EXECUTION_REPORT, order_refused(id, r)),
        FixReport::CancelRefused(r) => (msg_type::ORDER_CANCEL_REJECT, cancel_refused(r)),
        FixReport::AnswerRefused(r) => (msg_type::BUSINESS_MESSAGE_REJECT, answer_refused(r)),
        FixReport::Allocation(r) => (msg_type::ALLOCATION_INSTRUCTION, allocation(id, r)),
        // MassStatusReqType 7: the status of every order (ADR 0050).
        FixReport::OrderStatusRequest => (
            msg_type::ORDER_MASS_STATUS_REQUEST,
            vec![(tag::MASS_STATUS_REQ_ID, id.to_owned()), (tag::MASS_STATUS_REQ_TYPE, "7".to_owned())],
        ),
    };
    Message { msg_type, fields: clean(fields) }
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

/// The side a request names, if it is one.
/// Whether an OrdStatus (39) is of an order still worked: new, partly filled, pending
/// cancel, replaced, suspended, pending new, accepted for bidding or pending replace.
pub fn working_status(v: &str) -> bool {
    matches!(v, "0" | "1" | "5" | "6" | "9" | "A" | "D" | "E")
}

pub fn read_side(v: &str) -> Option<Direction> {
    match v {
        "1" => Some(Direction::Buy),
        "2" => Some(Direction::Sell),
        _ => None,
    }
}

fn exec_type(k: ExecutionKind) -> &'static str {
    match k {
        ExecutionKind::New => "0",
        ExecutionKind::Cancelled => "4",
        ExecutionKind::Fill => "F",
        ExecutionKind::FillUndone => "H",
        ExecutionKind::Status => "I",
    }
}

fn ord_status(s: OrderStatus) -> &'static str {
    match s {
        OrderStatus::New => "0",
        OrderStatus::PartiallyFilled => "1",
        OrderStatus::Filled => "2",
        OrderStatus::Cancelled => "4",
        OrderStatus::Rejected => "8",
    }
}

/// Symbol (the Bloomberg code, else the name), the exchange's own id when the instrument
/// has one, and the exchange.
fn instrument(i: &ReportedInstrument, f: &mut Vec<(u32, String)>) {
    f.push((tag::SYMBOL, i.symbol.clone()));
    if let Some(id) = &i.exchange_instrument_id {
        f.push((tag::SECURITY_ID, id.clone()));
        // SecurityIDSource 8: the exchange's symbol.
        f.push((tag::SECURITY_ID_SOURCE, "8".into()));
    }
    f.push((tag::SECURITY_EXCHANGE, i.exchange_id.clone()));
}

fn price(p: Decimal) -> String {
    p.normalize().to_string()
}

/// A TradeCaptureReport of one side's trade, or (`cancel`) the cancel of the report sent
/// for its step.
fn trade(id: &str, r: &TradeReport, cancel: bool) -> Vec<(u32, String)> {
    let mut f = vec![(tag::TRADE_REPORT_ID, id.to_owned())];
    match (cancel, r.step) {
        // TradeReportTransType 1: cancel, naming the report it cancels.
        (true, step) => {
            f.push((tag::TRADE_REPORT_TRANS_TYPE, "1".into()));
            f.push((tag::TRADE_REPORT_REF_ID, trade_report_id(r.order_id, step)));
        }
        // 0: new.
        (false, ConfirmationStep::Accept) => f.push((tag::TRADE_REPORT_TRANS_TYPE, "0".into())),
        // 2: replace, naming the report it replaces.
        (false, ConfirmationStep::Fill) => {
            f.push((tag::TRADE_REPORT_TRANS_TYPE, "2".into()));
            f.push((tag::TRADE_REPORT_REF_ID, trade_report_id(r.order_id, ConfirmationStep::Accept)));
        }
    }
    f.extend([
        // TradeReportType 0: submit; 6: trade report cancel.
        (tag::TRADE_REPORT_TYPE, if cancel { "6" } else { "0" }.into()),
        (tag::TRD_MATCH_ID, r.match_request_id.to_string()),
        (tag::EXEC_ID, id.to_owned()),
        (tag::PREVIOUSLY_REPORTED, "N".into()),
    ]);
    instrument(&r.instrument, &mut f);
    f.extend([
        (tag::LAST_QTY, r.quantity.to_string()),
        (tag::LAST_PX, price(r.price)),
        (tag::TRADE_DATE, r.traded_at.format("%Y%m%d").to_string()),
        (tag::TRANSACT_TIME, utc_timestamp(r.traded_at)),
        (tag::NO_SIDES, "1".into()),
        (tag::SIDE, side(r.side).into()),
        (tag::ORDER_ID, r.order_id.to_string()),
    ]);
    let mut parties =
        vec![(&r.executing_firm, ROLE_EXECUTING_FIRM), (&r.contra_firm, ROLE_CONTRA_FIRM), (&r.client, ROLE_CLIENT_ID)];
    parties.extend(r.give_up_firm.as_ref().map(|g| (g, ROLE_GIVEUP_CLEARING_FIRM)));
    party_group(&parties, &mut f);
    alloc_group(&r.allocations, true, &mut f);
    f
}

/// The Parties group (NoPartyIDs), each by its own id (PartyIDSource D: proprietary).
fn party_group(parties: &[(&String, &str)], f: &mut Vec<(u32, String)>) {
    f.push((tag::NO_PARTY_IDS, parties.len().to_string()));
    for (party, role) in parties {
        f.extend([
            (tag::PARTY_ID, (*party).clone()),
            (tag::PARTY_ID_SOURCE, "D".into()),
            (tag::PARTY_ROLE, (*role).into()),
        ]);
    }
}

/// The allocation group (NoAllocs): each account by its code, its IndividualAllocID and
/// its quantity, in the order the message's own group has them: a TradeCaptureReport's
/// TrdAllocGrp puts the id before the quantity, an AllocationInstruction's AllocGrp after.
fn alloc_group(lines: &[AllocationLine], id_first: bool, f: &mut Vec<(u32, String)>) {
    if lines.is_empty() {
        return;
    }
    f.push((tag::NO_ALLOCS, lines.len().to_string()));
    for (n, l) in lines.iter().enumerate() {
        let (id, quantity) =
            ((tag::INDIVIDUAL_ALLOC_ID, (n + 1).to_string()), (tag::ALLOC_QTY, l.quantity.to_string()));
        f.push((tag::ALLOC_ACCOUNT, l.code.clone()));
        if id_first {
            f.extend([id, quantity]);
        } else {
            f.extend([quantity, id]);
        }
    }
}

/// An AllocationInstruction: one side's trade split across its client's accounts, new or
/// replacing the version before (ADR 0045).
fn allocation(id: &str, r: &AllocationReport) -> Vec<(u32, String)> {
    let mut f = vec![(tag::ALLOC_ID, id.to_owned())];
    match &r.replaces {
        // AllocTransType 2: cancel, naming the instruction it cancels (a broker declined the
        // trade; AllocCancReplaceReason 2: the underlying order changed).
        Some(before) if r.cancel => {
            f.push((tag::ALLOC_TRANS_TYPE, "2".into()));
            f.push((tag::ALLOC_TYPE, "5".into()));
            f.push((tag::REF_ALLOC_ID, before.clone()));
            f.push((tag::ALLOC_CANC_REPLACE_REASON, "2".into()));
        }
        // AllocTransType 1: replace, naming the instruction it replaces, and why
        // (AllocCancReplaceReason 1: its details were incorrect).
        Some(before) => {
            f.push((tag::ALLOC_TRANS_TYPE, "1".into()));
            f.push((tag::ALLOC_TYPE, "5".into()));
            f.push((tag::REF_ALLOC_ID, before.clone()));
            f.push((tag::ALLOC_CANC_REPLACE_REASON, "1".into()));
        }
        // 0: new. AllocType 5: ready to book, one order.
        None => {
            f.push((tag::ALLOC_TRANS_TYPE, "0".into()));
            f.push((tag::ALLOC_TYPE, "5".into()));
        }
    }
    f.extend([
        // AllocNoOrdersType 1: the orders are listed.
        (tag::ALLOC_NO_ORDERS_TYPE, "1".into()),
        (tag::NO_ORDERS, "1".into()),
        (tag::CL_ORD_ID, r.order_id.to_string()),
        (tag::ORDER_ID, r.order_id.to_string()),
        (tag::SIDE, side(r.side).into()),
    ]);
    instrument(&r.instrument, &mut f);
    f.extend([(tag::QUANTITY, r.quantity.to_string()), (tag::AVG_PX, price(r.price))]);
    let mut parties = vec![(&r.executing_firm, ROLE_EXECUTING_FIRM), (&r.client, ROLE_CLIENT_ID)];
    parties.extend(r.give_up_firm.as_ref().map(|g| (g, ROLE_GIVEUP_CLEARING_FIRM)));
    party_group(&parties, &mut f);
    f.extend([
        (tag::TRADE_DATE, r.traded_at.format("%Y%m%d").to_string()),
        (tag::TRANSACT_TIME, utc_timestamp(r.traded_at)),
    ]);
    alloc_group(&r.lines, false, &mut f);
    f
}

fn execution(id: &str, r: &ExecutionReport) -> Vec<(u32, String)> {
    let mut f = vec![
        (tag::EXEC_ID, id.to_owned()),
        (tag::ORDER_ID, r.order_id.to_string()),
        (tag::CL_ORD_ID, r.cl_ord_id.clone()),
        (tag::EXEC_TYPE, exec_type(r.kind).into()),
        (tag::ORD_STATUS, ord_status(r.status).into()),
        (tag::SIDE, side(r.side).into()),
    ];
    instrument(&r.instrument, &mut f);
    f.extend([
        (tag::ORDER_QTY, r.quantity.to_string()),
        (tag::CUM_QTY, r.cum_quantity.to_string()),
        (tag::LEAVES_QTY, r.leaves_quantity.to_string()),
        (tag::AVG_PX, r.avg_price.to_string()),
    ]);
    if let Some(last) = &r.last {
        f.push((tag::LAST_QTY, last.quantity.to_string()));
        f.push((tag::LAST_PX, price(last.price)));
    }
    if let Some(orig) = &r.orig_cl_ord_id {
        f.push((tag::ORIG_CL_ORD_ID, orig.clone()));
    }
    f.push((tag::TRANSACT_TIME, utc_timestamp(r.transact_time)));
    f
}

fn order_refused(id: &str, r: &RefusedOrder) -> Vec<(u32, String)> {
    // ExecType and OrdStatus 8: rejected.
    let mut f = vec![
        (tag::EXEC_ID, id.to_owned()),
        (tag::ORDER_ID, "NONE".to_owned()),
        (tag::CL_ORD_ID, r.cl_ord_id.clone()),
        (tag::EXEC_TYPE, "8".into()),
        (tag::ORD_STATUS, "8".into()),
        (tag::SIDE, r.side.clone()),
    ];
    for (t, v) in [
        (tag::SYMBOL, &r.symbol),
        (tag::SECURITY_ID, &r.security_id),
        (tag::SECURITY_ID_SOURCE, &r.security_id_source),
        (tag::SECURITY_EXCHANGE, &r.exchange),
    ] {
        if let Some(v) = v {
            f.push((t, v.clone()));
        }
    }
    f.extend([
        (tag::ORDER_QTY, r.quantity.clone()),
        (tag::CUM_QTY, "0".into()),
        (tag::LEAVES_QTY, "0".into()),
        (tag::AVG_PX, "0".into()),
        (tag::TEXT, r.text.clone()),
    ]);
    f
}

fn cancel_refused(r: &RefusedCancel) -> Vec<(u32, String)> {
    let reason = match r.reason {
        CancelRefusalReason::TooLate => "0",
        CancelRefusalReason::UnknownOrder => "1",
    };
    vec![
        (tag::ORDER_ID, r.order_id.map_or_else(|| "NONE".to_owned(), |p| p.to_string())),
        (tag::CL_ORD_ID, r.cl_ord_id.clone()),
        (tag::ORIG_CL_ORD_ID, r.orig_cl_ord_id.clone()),
        (tag::ORD_STATUS, ord_status(r.status).into()),
        // CxlRejResponseTo 1: an OrderCancelRequest.
        (tag::CXL_REJ_RESPONSE_TO, "1".into()),
        (tag::CXL_REJ_REASON, reason.into()),
        (tag::TEXT, r.text.clone()),
    ]
}

fn answer_refused(r: &RefusedAnswer) -> Vec<(u32, String)> {
    vec![
        (tag::REF_SEQ_NUM, r.ref_seq_num.to_string()),
        (tag::REF_MSG_TYPE, msg_type::TRADE_CAPTURE_REPORT_ACK.to_owned()),
        (tag::BUSINESS_REJECT_REF_ID, r.trade_report_id.clone()),
        // BusinessRejectReason 0: other.
        (tag::BUSINESS_REJECT_REASON, "0".into()),
        (tag::TEXT, r.text.clone()),
    ]
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

/// A whole number of lots above 0: FIX's Qty may carry a fraction, a block may not.
pub fn whole_quantity(q: Decimal) -> Option<i64> {
    (q.fract().is_zero() && q > Decimal::ZERO)
        .then(|| i64::try_from(q.mantissa() / 10i128.pow(q.scale())).ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use chrono::TimeZone;
    use upstairs_domain::{MatchRequestId, OrderId, ParentOrderId};
    use upstairs_engine::fix::LastFill;
    use uuid::Uuid;

    const ORDER: &str = "00000000-0000-0000-0000-00000000000a";
    const PARENT: &str = "00000000-0000-0000-0000-00000000000b";
    const MATCH: &str = "00000000-0000-0000-0000-00000000000c";

    fn at() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 26, 14, 5, 9).unwrap() + chrono::TimeDelta::milliseconds(42)
    }

    fn listed() -> ReportedInstrument {
        ReportedInstrument {
            symbol: "VOD LN".into(),
            exchange_instrument_id: Some("GB00BH4HKS39".into()),
            exchange_id: "XLON".into(),
        }
    }

    fn trade(step: ConfirmationStep, instrument: ReportedInstrument) -> FixReport {
        FixReport::Trade(TradeReport {
            order_id: OrderId(Uuid::parse_str(ORDER).unwrap()),
            step,
            match_request_id: MatchRequestId(Uuid::parse_str(MATCH).unwrap()),
            instrument,
            side: Direction::Sell,
            quantity: 1500,
            price: Decimal::new(947600, 4),
            traded_at: at(),
            executing_firm: "BALTIC".into(),
            contra_firm: "Halyard Securities".into(),
            client: "ACC-1".into(),
            allocations: vec![],
            give_up_firm: None,
        })
    }

    /// Version 2 of a sell's allocation, replacing (or cancelling) `replaces`.
    fn allocation_report(replaces: String, cancel: bool, give_up: Option<&str>) -> AllocationReport {
        AllocationReport {
            order_id: OrderId(Uuid::parse_str(ORDER).unwrap()),
            version: 2,
            replaces: Some(replaces),
            cancel,
            instrument: listed(),
            side: Direction::Sell,
            quantity: 1500,
            price: Decimal::new(947600, 4),
            traded_at: at(),
            executing_firm: "BALTIC".into(),
            client: "ACC-1".into(),
            give_up_firm: give_up.map(str::to_owned),
            lines: lines(),
        }
    }

    fn lines() -> Vec<AllocationLine> {
        let line = |code: &str, quantity| AllocationLine {
            account_id: Uuid::nil(),
            code: code.into(),
            name: format!("Fund {code}"),
            quantity,
        };
        vec![line("F-1", 1000), line("F-2", 500)]
    }

    fn execution(kind: ExecutionKind, status: OrderStatus) -> ExecutionReport {
        ExecutionReport {
            kind,
            order_id: ParentOrderId(Uuid::parse_str(PARENT).unwrap()),
            cl_ord_id: "C1".into(),
            orig_cl_ord_id: None,
            status,
            side: Direction::Buy,
            instrument: listed(),
            quantity: 5000,
            cum_quantity: 0,
            leaves_quantity: 5000,
            avg_price: Decimal::ZERO,
            last: None,
            transact_time: at(),
        }
    }

    /// `t=v|t=v|…` as a list, for tables that read like the wire.
    fn wire(s: &str) -> Vec<(u32, String)> {
        s.split('|')
            .map(|f| {
                let (t, v) = f.split_once('=').unwrap();
                (t.parse().unwrap(), v.to_owned())
            })
            .collect()
    }

    #[test]
    fn each_report_is_written_as_its_message() {
        let parties = "453=3|448=BALTIC|447=D|452=1|448=Halyard Securities|447=D|452=17|448=ACC-1|447=D|452=3";
        let fill = {
            let mut r = execution(ExecutionKind::Fill, OrderStatus::PartiallyFilled);
            r.cum_quantity = 1500;
            r.leaves_quantity = 3500;
            r.avg_price = Decimal::new(9476, 2);
            r.last = Some(LastFill { quantity: 1500, price: Decimal::new(947600, 4) });
            r
        };
        let undone = {
            let mut r = execution(ExecutionKind::FillUndone, OrderStatus::New);
            r.instrument.exchange_instrument_id = None;
            r
        };
        let cancelled = {
            let mut r = execution(ExecutionKind::Cancelled, OrderStatus::Cancelled);
            r.cl_ord_id = "C2".into();
            r.orig_cl_ord_id = Some("C1".into());
            r.leaves_quantity = 0;
            r
        };
        let status = {
            let mut r = execution(ExecutionKind::Status, OrderStatus::Filled);
            r.cum_quantity = 5000;
            r.leaves_quantity = 0;
            r.avg_price = Decimal::new(95125, 3);
            r
        };
        let refused_order = RefusedOrder {
            cl_ord_id: "C9".into(),
            side: "7".into(),
            quantity: "10.5".into(),
            symbol: Some("VOD LN".into()),
            security_id: None,
            security_id_source: None,
            exchange: Some("XLON".into()),
            text: "Side (54) is 1 (buy) or 2 (sell)".into(),
        };
        let cases: Vec<(&str, FixReport, &str, String)> = vec![
            (
                "a trade at the match",
                trade(ConfirmationStep::Accept, listed()),
                "AE",
                format!(
                    "571=X-A|487=0|856=0|880={MATCH}|17=X-A|570=N|55=VOD LN|48=GB00BH4HKS39|22=8|207=XLON|32=1500|\
                     31=94.76|75=20261126|60=20261126-14:05:09.042|552=1|54=2|37={ORDER}|{parties}"
                ),
            ),
            (
                "a trade to fill, replacing the first report",
                trade(ConfirmationStep::Fill, ReportedInstrument { exchange_instrument_id: None, ..listed() }),
                "AE",
                format!(
                    "571=X-A|487=2|572={ORDER}-A|856=0|880={MATCH}|17=X-A|570=N|55=VOD LN|207=XLON|32=1500|\
                     31=94.76|75=20261126|60=20261126-14:05:09.042|552=1|54=2|37={ORDER}|{parties}"
                ),
            ),
            (
                "an allocated trade to fill, given up to another broker",
                match trade(ConfirmationStep::Fill, ReportedInstrument { exchange_instrument_id: None, ..listed() }) {
                    FixReport::Trade(r) => FixReport::Trade(TradeReport {
                        allocations: lines(),
                        give_up_firm: Some("Northgate".into()),
                        ..r
                    }),
                    other => other,
                },
                "AE",
                format!(
                    "571=X-A|487=2|572={ORDER}-A|856=0|880={MATCH}|17=X-A|570=N|55=VOD LN|207=XLON|32=1500|\
                     31=94.76|75=20261126|60=20261126-14:05:09.042|552=1|54=2|37={ORDER}|\
                     453=4|448=BALTIC|447=D|452=1|448=Halyard Securities|447=D|452=17|448=ACC-1|447=D|452=3|\
                     448=Northgate|447=D|452=14|78=2|79=F-1|467=1|80=1000|79=F-2|467=2|80=500"
                ),
            ),
            (
                "an allocation, replacing the one before",
                FixReport::Allocation(allocation_report(format!("{ORDER}-L1"), false, Some("Northgate"))),
                "J",
                format!(
                    "70=X-A|71=1|626=5|72={ORDER}-L1|796=1|857=1|73=1|11={ORDER}|37={ORDER}|54=2|55=VOD LN|\
                     48=GB00BH4HKS39|22=8|207=XLON|53=1500|6=94.76|453=3|448=BALTIC|447=D|452=1|448=ACC-1|447=D|\
                     452=3|448=Northgate|447=D|452=14|75=20261126|60=20261126-14:05:09.042|78=2|79=F-1|80=1000|\
                     467=1|79=F-2|80=500|467=2"
                ),
            ),
            (
                "the cancel of an allocation, a broker having declined the trade",
                FixReport::Allocation(allocation_report(format!("{ORDER}-L2"), true, None)),
                "J",
                format!(
                    "70=X-A|71=2|626=5|72={ORDER}-L2|796=2|857=1|73=1|11={ORDER}|37={ORDER}|54=2|55=VOD LN|\
                     48=GB00BH4HKS39|22=8|207=XLON|53=1500|6=94.76|453=2|448=BALTIC|447=D|452=1|448=ACC-1|447=D|\
                     452=3|75=20261126|60=20261126-14:05:09.042|78=2|79=F-1|80=1000|467=1|79=F-2|80=500|467=2"
                ),
            ),
            (
                "the cancel of a trade report, the other side's broker having declined",
                match trade(ConfirmationStep::Fill, listed()) {
                    FixReport::Trade(r) => FixReport::TradeCancel(r),
                    other => other,
                },
                "AE",
                format!(
                    "571=X-A|487=1|572={ORDER}-F|856=6|880={MATCH}|17=X-A|570=N|55=VOD LN|48=GB00BH4HKS39|22=8|207=XLON|\
                     32=1500|31=94.76|75=20261126|60=20261126-14:05:09.042|552=1|54=2|37={ORDER}|{parties}"
                ),
            ),
            (
                "a parent order accepted",
                FixReport::Execution(execution(ExecutionKind::New, OrderStatus::New)),
                "8",
                format!(
                    "17=X-A|37={PARENT}|11=C1|150=0|39=0|54=1|55=VOD LN|48=GB00BH4HKS39|22=8|207=XLON|38=5000|\
                     14=0|151=5000|6=0|60=20261126-14:05:09.042"
                ),
            ),
            (
                "a fill",
                FixReport::Execution(fill),
                "8",
                format!(
                    "17=X-A|37={PARENT}|11=C1|150=F|39=1|54=1|55=VOD LN|48=GB00BH4HKS39|22=8|207=XLON|38=5000|\
                     14=1500|151=3500|6=94.76|32=1500|31=94.76|60=20261126-14:05:09.042"
                ),
            ),
            (
                "a fill undone",
                FixReport::Execution(undone),
                "8",
                format!(
                    "17=X-A|37={PARENT}|11=C1|150=H|39=0|54=1|55=VOD LN|207=XLON|38=5000|14=0|151=5000|6=0|\
                     60=20261126-14:05:09.042"
                ),
            ),
            (
                "a parent order cancelled",
                FixReport::Execution(cancelled),
                "8",
                format!(
                    "17=X-A|37={PARENT}|11=C2|150=4|39=4|54=1|55=VOD LN|48=GB00BH4HKS39|22=8|207=XLON|38=5000|\
                     14=0|151=0|6=0|41=C1|60=20261126-14:05:09.042"
                ),
            ),
            (
                "a parent order's state asked again",
                FixReport::Execution(status),
                "8",
                format!(
                    "17=X-A|37={PARENT}|11=C1|150=I|39=2|54=1|55=VOD LN|48=GB00BH4HKS39|22=8|207=XLON|38=5000|\
                     14=5000|151=0|6=95.125|60=20261126-14:05:09.042"
                ),
            ),
            (
                "a NewOrderSingle refused, echoed as received",
                FixReport::OrderRefused(refused_order),
                "8",
                "17=X-A|37=NONE|11=C9|150=8|39=8|54=7|55=VOD LN|207=XLON|38=10.5|14=0|151=0|6=0|\
                 58=Side (54) is 1 (buy) or 2 (sell)"
                    .to_owned(),
            ),
            (
                "a cancel of an unknown order refused",
                FixReport::CancelRefused(RefusedCancel {
                    order_id: None,
                    cl_ord_id: "C3".into(),
                    orig_cl_ord_id: "NOPE".into(),
                    status: OrderStatus::Rejected,
                    reason: CancelRefusalReason::UnknownOrder,
                    text: "Unknown order".into(),
                }),
                "9",
                "37=NONE|11=C3|41=NOPE|39=8|434=1|102=1|58=Unknown order".to_owned(),
            ),
            (
                "a cancel too late refused",
                FixReport::CancelRefused(RefusedCancel {
                    order_id: Some(ParentOrderId(Uuid::parse_str(PARENT).unwrap())),
                    cl_ord_id: "C4".into(),
                    orig_cl_ord_id: "C1".into(),
                    status: OrderStatus::Filled,
                    reason: CancelRefusalReason::TooLate,
                    text: "The order is filled".into(),
                }),
                "9",
                format!("37={PARENT}|11=C4|41=C1|39=2|434=1|102=0|58=The order is filled"),
            ),
            (
                "a broker's late answer refused",
                FixReport::AnswerRefused(RefusedAnswer {
                    ref_seq_num: 7,
                    trade_report_id: format!("{ORDER}-A"),
                    text: "Order already accepted".into(),
                }),
                "j",
                format!("45=7|372=AR|379={ORDER}-A|380=0|58=Order already accepted"),
            ),
        ];
        for (what, report, msg_type, fields) in cases {
            let m = encode("X-A", &report);
            assert_eq!(m.msg_type, msg_type, "{what}");
            assert_eq!(m.fields, wire(&fields), "{what}");
            // The outbox keeps the report as JSON: what is read back writes the same.
            let stored = serde_json::to_string(&report).unwrap();
            let read: FixReport = serde_json::from_str(&stored).unwrap();
            assert_eq!(read, report, "{what}");
            assert_eq!(encode("X-A", &read), m, "{what}");
        }
    }

    #[test]
    fn values_are_cleaned() {
        let report = FixReport::AnswerRefused(RefusedAnswer {
            ref_seq_num: 1,
            trade_report_id: " \u{1}\t".into(),
            text: "two\nlines\u{1}".into(),
        });
        let m = encode("id", &report);
        assert_eq!(m.fields[2], (tag::BUSINESS_REJECT_REF_ID, "-".to_owned()));
        assert_eq!(m.fields[4], (tag::TEXT, "two lines".to_owned()));
    }

    #[test]
    fn sides_read_as_written() {
        for d in [Direction::Buy, Direction::Sell] {
            assert_eq!(read_side(side(d)), Some(d));
        }
        assert_eq!(read_side("7"), None);
    }

    #[test]
    fn a_pull_asks_for_every_order_and_reads_which_are_worked() {
        let m = encode("req-1", &FixReport::OrderStatusRequest);
        assert_eq!(m.msg_type, "AF");
        assert_eq!(
            m.fields,
            [(tag::MASS_STATUS_REQ_ID, "req-1".to_owned()), (tag::MASS_STATUS_REQ_TYPE, "7".to_owned())]
        );
        let worked: Vec<&str> = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "Z"]
            .into_iter()
            .filter(|s| working_status(s))
            .collect();
        assert_eq!(worked, ["0", "1", "5", "6", "9", "A", "D", "E"]);
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
