//! The FIX 4.4 data dictionary of what the venue reads (ADR 0033): every message type
//! FIX 4.4 defines, and for the administrative messages (Logon and Logout aside) and the
//! application messages the venue acts on (NewOrderSingle, OrderCancelRequest,
//! TradeCaptureReportAck, AllocationInstructionAck, BusinessMessageReject, and an
//! ExecutionReport answering the venue's OrderMassStatusRequest) the fields each may
//! carry, which are required, their types and values, the party group, and the order of
//! header, body and trailer. A message that breaks it gets a session Reject (35=3) with
//! the SessionRejectReason (373) and RefTagID (371) the FIX session test cases name; a
//! FIX 4.4 message type the venue does not act on gets a BusinessMessageReject (35=j,
//! 380=3).

use ironfix_core::message::RawMessage;
use ironfix_core::validation::{InboundDefect, InboundRejection, InboundValidator};
use ironfix_engine::application::RejectReason;
use ironfix_engine::{InboundValidation, ValidationPolicy, ValidationRejectMessage};
use std::sync::Arc;

use crate::messages::msg_type;

/// Every MsgType (35) FIX 4.4 defines.
const FIX44_MSG_TYPES: &[&str] = &[
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F", "G", "H", "J", "K", "L", "M", "N",
    "P", "Q", "R", "S", "T", "V", "W", "X", "Y", "Z", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m",
    "n", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x", "y", "z", "AA", "AB", "AC", "AD", "AE", "AF", "AG", "AH",
    "AI", "AJ", "AK", "AL", "AM", "AN", "AO", "AP", "AQ", "AR", "AS", "AT", "AU", "AV", "AW", "AX", "AY", "AZ", "BA",
    "BB", "BC", "BD", "BE", "BF", "BG", "BH",
];

/// The application messages the venue acts on.
const SUPPORTED: &[&str] = &[
    msg_type::NEW_ORDER_SINGLE,
    msg_type::ORDER_CANCEL_REQUEST,
    msg_type::TRADE_CAPTURE_REPORT_ACK,
    msg_type::ALLOCATION_INSTRUCTION_ACK,
    msg_type::BUSINESS_MESSAGE_REJECT,
    msg_type::EXECUTION_REPORT,
];

/// The highest tag number FIX 4.4 defines; user-defined tags (5000–9999) are not read
/// by the venue either.
const FIX44_LAST_TAG: u32 = 956;

/// SessionRejectReason (373) codes.
pub mod reason {
    pub const INVALID_TAG_NUMBER: u32 = 0;
    pub const REQUIRED_TAG_MISSING: u32 = 1;
    pub const TAG_NOT_DEFINED_FOR_MSG_TYPE: u32 = 2;
    pub const TAG_WITHOUT_VALUE: u32 = 4;
    pub const VALUE_INCORRECT: u32 = 5;
    pub const INVALID_MSG_TYPE: u32 = 11;
    pub const INCORRECT_DATA_FORMAT: u32 = 6;
    pub const TAG_REPEATED: u32 = 13;
    pub const TAG_OUT_OF_ORDER: u32 = 14;
    pub const GROUP_FIELDS_OUT_OF_ORDER: u32 = 15;
    pub const INCORRECT_NUM_IN_GROUP: u32 = 16;
}

/// The check run before an application message is queued: a FIX 4.4 type the venue
/// does not act on is answered with a BusinessMessageReject (380=3, unsupported message
/// type); a type FIX 4.4 does not define goes on to `from_app`, which answers 373=11.
pub fn unsupported_types() -> InboundValidation {
    InboundValidation::new(Arc::new(Unsupported), ValidationPolicy::Reject)
        .with_reject_message(ValidationRejectMessage::BusinessMessageReject)
}

struct Unsupported;

impl InboundValidator for Unsupported {
    fn validate(&self, m: &RawMessage<'_>) -> Result<(), InboundRejection> {
        let t = m.msg_type().as_str();
        if FIX44_MSG_TYPES.contains(&t) && !SUPPORTED.contains(&t) {
            return Err(InboundRejection::new(
                InboundDefect::InvalidMsgType,
                Some(35),
                format!("MsgType {t} is not supported by this venue"),
            ));
        }
        Ok(())
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Any text.
    Str,
    /// A non-negative whole number, digits only.
    Int,
    /// A decimal: an optional minus sign, digits, an optional point and digits.
    Float,
    /// A UTCTimestamp: YYYYMMDD-HH:MM:SS with optional .sss.
    Time,
    /// One of the values listed.
    Enum(&'static [&'static str]),
    /// A NumInGroup count.
    Group,
}

/// One field a message may carry.
struct Field {
    tag: u32,
    kind: Kind,
    required: bool,
}

const fn f(tag: u32, kind: Kind) -> Field {
    Field { tag, kind, required: false }
}

const fn req(tag: u32, kind: Kind) -> Field {
    Field { tag, kind, required: true }
}

use Kind::*;

/// The standard header (after BeginString, BodyLength and MsgType) of FIX 4.4.
const HEADER: &[Field] = &[
    req(49, Str),
    req(56, Str),
    f(115, Str),
    f(128, Str),
    f(90, Int),
    f(91, Str),
    req(34, Int),
    f(50, Str),
    f(142, Str),
    f(57, Str),
    f(143, Str),
    f(116, Str),
    f(144, Str),
    f(129, Str),
    f(145, Str),
    f(43, Enum(&["Y", "N"])),
    f(97, Enum(&["Y", "N"])),
    req(52, Time),
    f(122, Time),
    f(212, Int),
    f(213, Str),
    f(347, Str),
    f(369, Int),
    f(627, Group),
    f(628, Str),
    f(629, Time),
    f(630, Int),
];

/// The trailer's optional signature fields (CheckSum ends every frame).
const TRAILER: &[u32] = &[93, 89, 10];

/// The party group (NoPartyIDs 453): its entries start with PartyID (448).
const PARTIES: &[u32] = &[448, 447, 452];
/// The SecurityType (167) values the venue's instruments can be (futures and their spreads
/// among them).
const SECURITY_TYPES: &[&str] = &["FUT", "OPT", "MLEG", "CS", "FOR", "CASH", "NONE", "?"];
const PARTY_SOURCES: &[&str] = &["B", "C", "D", "E", "F", "G", "H", "I", "1", "2", "3", "4", "5", "6", "7", "8", "9"];

const NEW_ORDER_SINGLE: &[Field] = &[
    req(11, Str),
    f(1, Str),
    f(453, Group),
    f(448, Str),
    f(447, Enum(PARTY_SOURCES)),
    f(452, Int),
    f(21, Enum(&["1", "2", "3"])),
    req(55, Str),
    f(48, Str),
    f(22, Str),
    f(167, Enum(SECURITY_TYPES)),
    f(200, Str),
    f(207, Str),
    req(54, Enum(&["1", "2"])),
    req(60, Time),
    req(38, Float),
    req(40, Enum(&["1", "2"])),
    f(44, Float),
    f(59, Enum(&["0", "1", "3", "4", "6"])),
    f(110, Float),
    f(15, Str),
    f(58, Str),
];

const ORDER_CANCEL_REQUEST: &[Field] = &[
    req(41, Str),
    f(37, Str),
    req(11, Str),
    f(1, Str),
    f(453, Group),
    f(448, Str),
    f(447, Enum(PARTY_SOURCES)),
    f(452, Int),
    req(55, Str),
    f(48, Str),
    f(22, Str),
    f(167, Enum(SECURITY_TYPES)),
    f(207, Str),
    req(54, Enum(&["1", "2"])),
    req(60, Time),
    f(38, Float),
    f(58, Str),
];

const TRADE_CAPTURE_REPORT_ACK: &[Field] = &[
    req(571, Str),
    f(487, Enum(&["0", "1", "2", "3"])),
    f(856, Int),
    f(150, Str),
    f(572, Str),
    f(939, Enum(&["0", "1"])),
    f(751, Int),
    f(55, Str),
    f(48, Str),
    f(22, Str),
    f(167, Enum(SECURITY_TYPES)),
    f(200, Str),
    f(207, Str),
    f(58, Str),
];

const ALLOCATION_INSTRUCTION_ACK: &[Field] = &[
    req(70, Str),
    f(453, Group),
    f(448, Str),
    f(447, Enum(PARTY_SOURCES)),
    f(452, Int),
    f(793, Str),
    f(75, Str),
    req(60, Time),
    req(87, Enum(&["0", "1", "2", "3", "4", "5", "6", "7"])),
    f(88, Int),
    f(626, Int),
    f(808, Int),
    f(573, Str),
    f(460, Int),
    f(167, Enum(SECURITY_TYPES)),
    f(58, Str),
    f(354, Int),
    f(355, Str),
    f(78, Group),
];

/// AllocAckGrp (NoAllocs 78 in an AllocationInstructionAck): one entry per account, as a
/// broker's account-level reject names them.
const ALLOC_ACK_GROUP: &[u32] = &[79, 661, 366, 467, 776, 161, 360, 361];

/// An ExecutionReport, read as an execution system's answer to the venue's
/// OrderMassStatusRequest (ADR 0050): the fields of an order's status.
const EXECUTION_REPORT: &[Field] = &[
    req(37, Str),
    f(11, Str),
    f(41, Str),
    f(584, Str),
    f(911, Int),
    f(912, Enum(&["Y", "N"])),
    req(17, Str),
    req(150, Str),
    req(39, Str),
    f(1, Str),
    f(453, Group),
    f(448, Str),
    f(447, Enum(PARTY_SOURCES)),
    f(452, Int),
    f(55, Str),
    f(48, Str),
    f(22, Str),
    f(167, Enum(SECURITY_TYPES)),
    f(200, Str),
    f(207, Str),
    req(54, Str),
    f(38, Float),
    f(40, Str),
    f(44, Float),
    f(59, Str),
    f(110, Float),
    f(15, Str),
    f(18, Str),
    f(21, Str),
    f(30, Str),
    f(31, Float),
    f(32, Float),
    req(151, Float),
    req(14, Float),
    req(6, Float),
    f(75, Str),
    f(60, Time),
    f(526, Str),
    f(58, Str),
];

const BUSINESS_MESSAGE_REJECT: &[Field] = &[f(45, Int), req(372, Str), f(379, Str), req(380, Int), f(58, Str)];

/// The administrative messages checked (a Logon is checked by its own rules, a Logout
/// never refused).
const HEARTBEAT: &[Field] = &[f(112, Str)];
const TEST_REQUEST: &[Field] = &[req(112, Str)];
const RESEND_REQUEST: &[Field] = &[req(7, Int), req(16, Int)];
const REJECT: &[Field] = &[req(45, Int), f(371, Int), f(372, Str), f(373, Int), f(58, Str), f(354, Int), f(355, Str)];
const SEQUENCE_RESET: &[Field] = &[f(123, Enum(&["Y", "N"])), req(36, Int)];

fn body_of(msg_type: &str) -> Option<&'static [Field]> {
    Some(match msg_type {
        "0" => HEARTBEAT,
        "1" => TEST_REQUEST,
        "2" => RESEND_REQUEST,
        "3" => REJECT,
        "4" => SEQUENCE_RESET,
        msg_type::NEW_ORDER_SINGLE => NEW_ORDER_SINGLE,
        msg_type::ORDER_CANCEL_REQUEST => ORDER_CANCEL_REQUEST,
        msg_type::TRADE_CAPTURE_REPORT_ACK => TRADE_CAPTURE_REPORT_ACK,
        msg_type::ALLOCATION_INSTRUCTION_ACK => ALLOCATION_INSTRUCTION_ACK,
        msg_type::BUSINESS_MESSAGE_REJECT => BUSINESS_MESSAGE_REJECT,
        msg_type::EXECUTION_REPORT => EXECUTION_REPORT,
        _ => return None,
    })
}

fn reject(code: u32, tag: u32, text: impl Into<String>) -> RejectReason {
    RejectReason::new(code, text).with_ref_tag(tag)
}

/// Checks a message against the dictionary: the application messages the venue acts on
/// and the administrative ones but Logon and Logout; other types pass (the validator and
/// `from_app` answer them).
pub fn check(m: &RawMessage<'_>) -> Result<(), RejectReason> {
    let Some(body) = body_of(m.msg_type().as_str()) else { return Ok(()) };
    let fields: Vec<(u32, &[u8])> = m.fields().map(|fr| (fr.tag, fr.value)).collect();
    check_fields(&fields, body)
}

/// Where a field sits: header, body or trailer.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Part {
    Header,
    Body,
    Trailer,
}

fn check_fields(fields: &[(u32, &[u8])], body: &[Field]) -> Result<(), RejectReason> {
    let mut part = Part::Header;
    let mut seen: Vec<u32> = Vec::with_capacity(fields.len());
    let mut i = 0;
    while i < fields.len() {
        let (tag, value) = fields[i];
        i += 1;
        // BeginString, BodyLength and MsgType were read by the framing.
        if matches!(tag, 8 | 9 | 35) {
            continue;
        }
        if tag == 0 || tag > FIX44_LAST_TAG {
            return Err(reject(reason::INVALID_TAG_NUMBER, tag, format!("Tag {tag} is not a FIX 4.4 tag")));
        }
        let (here, field) = if let Some(h) = HEADER.iter().find(|h| h.tag == tag) {
            (Part::Header, h)
        } else if let Some(b) = body.iter().find(|b| b.tag == tag) {
            (Part::Body, b)
        } else if TRAILER.contains(&tag) {
            (Part::Trailer, &Field { tag, kind: Str, required: false })
        } else {
            return Err(reject(
                reason::TAG_NOT_DEFINED_FOR_MSG_TYPE,
                tag,
                format!("Tag {tag} is not defined for this message type"),
            ));
        };
        if here < part {
            return Err(reject(reason::TAG_OUT_OF_ORDER, tag, format!("Tag {tag} is out of the required order")));
        }
        part = here;
        if value.is_empty() {
            return Err(reject(reason::TAG_WITHOUT_VALUE, tag, format!("Tag {tag} has no value")));
        }
        let Ok(text) = std::str::from_utf8(value) else {
            return Err(reject(reason::INCORRECT_DATA_FORMAT, tag, format!("Tag {tag} is not text")));
        };
        check_value(tag, field.kind, text)?;
        if let Group = field.kind {
            i = check_group(fields, i, tag, text)?;
            seen.push(tag);
            continue;
        }
        if seen.contains(&tag) || is_group_member(tag) {
            return Err(reject(reason::TAG_REPEATED, tag, format!("Tag {tag} appears more than once")));
        }
        seen.push(tag);
    }
    for field in HEADER.iter().chain(body).filter(|f| f.required) {
        if !seen.contains(&field.tag) {
            let tag = field.tag;
            return Err(reject(reason::REQUIRED_TAG_MISSING, tag, format!("Tag {tag} is required")));
        }
    }
    Ok(())
}

/// The fields of the groups the venue reads: outside their group they are misplaced.
fn is_group_member(tag: u32) -> bool {
    PARTIES.contains(&tag) || matches!(tag, 628..=630)
}

/// The members of the group counted by `count_tag`, the first of which starts each
/// entry.
fn members(count_tag: u32) -> &'static [u32] {
    match count_tag {
        453 => PARTIES,
        78 => ALLOC_ACK_GROUP,
        _ => &[628, 629, 630],
    }
}

/// Reads the entries of a repeating group from `at`; where the group ends.
fn check_group(fields: &[(u32, &[u8])], mut at: usize, count_tag: u32, count: &str) -> Result<usize, RejectReason> {
    let want: usize = count.parse().unwrap_or(usize::MAX);
    let members = members(count_tag);
    let mut entries = 0;
    let mut in_entry: Vec<u32> = Vec::new();
    while let Some(&(tag, value)) = fields.get(at) {
        if !members.contains(&tag) {
            break;
        }
        if tag == members[0] {
            entries += 1;
            in_entry.clear();
        } else if entries == 0 {
            return Err(reject(
                reason::GROUP_FIELDS_OUT_OF_ORDER,
                tag,
                format!("Group {count_tag} entries start with tag {}", members[0]),
            ));
        }
        if in_entry.contains(&tag) {
            return Err(reject(reason::TAG_REPEATED, tag, format!("Tag {tag} appears twice in one entry")));
        }
        in_entry.push(tag);
        if value.is_empty() {
            return Err(reject(reason::TAG_WITHOUT_VALUE, tag, format!("Tag {tag} has no value")));
        }
        at += 1;
    }
    if entries != want {
        return Err(reject(
            reason::INCORRECT_NUM_IN_GROUP,
            count_tag,
            format!("Group {count_tag} counts {count} entries but has {entries}"),
        ));
    }
    Ok(at)
}

fn check_value(tag: u32, kind: Kind, v: &str) -> Result<(), RejectReason> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let ok = match kind {
        Str => true,
        Int | Group => digits(v),
        Float => {
            let unsigned = v.strip_prefix('-').unwrap_or(v);
            match unsigned.split_once('.') {
                Some((whole, frac)) => {
                    (digits(whole) || whole.is_empty()) && (frac.is_empty() || digits(frac)) && unsigned != "."
                }
                None => digits(unsigned),
            }
        }
        Time => ironfix_session::header::parse_utc_timestamp_millis(v).is_some(),
        Enum(values) => {
            if values.contains(&v) {
                true
            } else {
                return Err(reject(reason::VALUE_INCORRECT, tag, format!("Value of tag {tag} is out of range")));
            }
        }
    };
    if ok { Ok(()) } else { Err(reject(reason::INCORRECT_DATA_FORMAT, tag, format!("Tag {tag} has a wrong format"))) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(fields: &[(u32, &str)]) -> Option<(u32, Option<u32>)> {
        let f: Vec<(u32, &[u8])> = fields.iter().map(|(t, v)| (*t, v.as_bytes())).collect();
        check_fields(&f, NEW_ORDER_SINGLE).err().map(|r| (r.code, r.ref_tag))
    }

    const HEAD: &[(u32, &str)] = &[(49, "HALYARD"), (56, "UPSTAIRS"), (34, "2"), (52, "20260303-10:00:00.000")];

    fn order(extra: &[(u32, &'static str)]) -> Vec<(u32, &'static str)> {
        let mut v: Vec<(u32, &str)> = HEAD.to_vec();
        v.extend_from_slice(&[(11, "c1"), (55, "FGBL"), (54, "1"), (60, "20260303-10:00:00"), (38, "500"), (40, "1")]);
        v.extend_from_slice(extra);
        v
    }

    #[test]
    fn the_table_of_defects() {
        type Case<'a> = (&'a str, Vec<(u32, &'a str)>, Option<(u32, Option<u32>)>);
        let cases: &[Case] = &[
            ("a sound order", order(&[(453, "1"), (448, "T1"), (447, "D"), (452, "11")]), None),
            ("an unknown tag", order(&[(999, "x")]), Some((0, Some(999)))),
            ("tag 0", order(&[(0, "x")]), Some((0, Some(0)))),
            ("a user-defined tag", order(&[(5000, "x")]), Some((0, Some(5000)))),
            ("a tag of another message", order(&[(571, "x")]), Some((2, Some(571)))),
            ("no value", order(&[(58, "")]), Some((4, Some(58)))),
            ("HandlInst out of range", order(&[(21, "4")]), Some((5, Some(21)))),
            ("SecurityType out of range", order(&[(167, "BOO")]), Some((5, Some(167)))),
            ("a signed quantity", order(&[(44, "+200.00")]), Some((6, Some(44)))),
            ("a repeated tag", order(&[(58, "a"), (58, "b")]), Some((13, Some(58)))),
            ("a count above its entries", order(&[(453, "2"), (448, "T1"), (452, "11")]), Some((16, Some(453)))),
            (
                "an entry not led by its first tag",
                order(&[(453, "1"), (452, "11"), (448, "T1")]),
                Some((15, Some(452))),
            ),
            ("a header field in the body", order(&[(43, "N")]), Some((14, Some(43)))),
            ("a hop with no value", [HEAD, &[(627, "1"), (628, "")]].concat(), Some((4, Some(628)))),
        ];
        for (what, fields, want) in cases {
            assert_eq!(codes(fields), *want, "{what}");
        }
        let mut missing = order(&[]);
        missing.retain(|(t, _)| *t != 11);
        assert_eq!(codes(&missing), Some((1, Some(11))), "a required tag missing");
        let mut plus = order(&[]);
        plus.retain(|(t, _)| *t != 38);
        plus.push((38, "+200.00"));
        assert_eq!(codes(&plus), Some((6, Some(38))), "38=+200.00");
    }
}
