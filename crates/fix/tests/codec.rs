#![allow(clippy::unwrap_used)]
//! Property tests of the tag=value codec the gateway speaks through (ironfix's encoder
//! and decoder), against a plain reading of the FIX rules written here: a frame is
//! `8=…|9=<body length>|<body>|10=<checksum>|`, the body length counts the bytes from
//! the field after 9 up to and including the SOH before 10, and the checksum is the sum
//! of every byte before `10=` modulo 256, on three digits.

use ironfix_tagvalue::decoder::Decoder;
use ironfix_tagvalue::encoder::Encoder;
use proptest::prelude::*;

/// Body fields: the tags the gateway's messages carry, or user-defined ones (5000 to
/// 9999), with values of printable ASCII (which may contain `=`) and no SOH. (Length/Data
/// pairs such as 95/96 are framed by their count and written otherwise: left out.)
fn body_fields() -> impl Strategy<Value = Vec<(u32, String)>> {
    use upstairs_fix::messages::tag::*;
    let ours = [
        AVG_PX,
        CL_ORD_ID,
        CUM_QTY,
        EXEC_ID,
        SECURITY_ID_SOURCE,
        LAST_PX,
        LAST_QTY,
        ORDER_ID,
        ORDER_QTY,
        ORD_STATUS,
        ORIG_CL_ORD_ID,
        SECURITY_ID,
        SIDE,
        SYMBOL,
        TEXT,
        TRANSACT_TIME,
        TRADE_DATE,
        ORD_TYPE,
        EXEC_TYPE,
        LEAVES_QTY,
        SECURITY_EXCHANGE,
        PARTY_ID_SOURCE,
        PARTY_ID,
        PARTY_ROLE,
        NO_PARTY_IDS,
        TRADE_REPORT_TRANS_TYPE,
        NO_SIDES,
        PREVIOUSLY_REPORTED,
        TRADE_REPORT_ID,
        TRADE_REPORT_REF_ID,
        TRADE_REPORT_TYPE,
        TRD_MATCH_ID,
        TRD_RPT_STATUS,
    ];
    let tag = prop_oneof![proptest::sample::select(ours.to_vec()), 5000u32..10_000];
    proptest::collection::vec((tag, "[ -~]{1,40}"), 0..30)
}

fn msg_type() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("AE".to_owned()),
        Just("AR".to_owned()),
        Just("D".to_owned()),
        Just("8".to_owned()),
        Just("0".to_owned())
    ]
}

/// The frame as the FIX rules build it, independently of ironfix.
fn reference_frame(msg_type: &str, fields: &[(u32, String)]) -> Vec<u8> {
    let body: String = std::iter::once(format!("35={msg_type}\x01"))
        .chain(fields.iter().map(|(t, v)| format!("{t}={v}\x01")))
        .collect();
    let head = format!("8=FIX.4.4\x019={}\x01", body.len());
    let sum = head.bytes().chain(body.bytes()).map(u32::from).sum::<u32>() % 256;
    format!("{head}{body}10={sum:03}\x01").into_bytes()
}

fn encode(msg_type: &str, fields: &[(u32, String)]) -> Vec<u8> {
    let mut e = Encoder::new("FIX.4.4");
    e.put_str(35, msg_type);
    for (t, v) in fields {
        e.put_str(*t, v);
    }
    e.finish().unwrap().to_vec()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The encoder writes exactly the frame the rules describe: same bytes, so the same
    /// body length and checksum.
    #[test]
    fn encoding_follows_the_rules(t in msg_type(), fields in body_fields()) {
        prop_assert_eq!(encode(&t, &fields), reference_frame(&t, &fields));
    }

    /// What is encoded decodes to the same fields, in the same order.
    #[test]
    fn round_trip(t in msg_type(), fields in body_fields()) {
        let frame = encode(&t, &fields);
        let m = Decoder::new(&frame).decode().unwrap();
        prop_assert_eq!(m.msg_type().as_str(), t.as_str());
        let decoded: Vec<(u32, String)> = m
            .fields()
            .filter(|f| ![8, 9, 10, 35].contains(&f.tag))
            .map(|f| (f.tag, String::from_utf8(f.value.to_vec()).unwrap()))
            .collect();
        prop_assert_eq!(&decoded, &fields);
    }

    /// Any one byte of the body changed (to another printable byte) is caught: by the
    /// checksum, or because the frame no longer parses.
    #[test]
    fn a_changed_byte_is_refused(t in msg_type(), fields in body_fields(), at in any::<prop::sample::Index>(), by in 1u8..90) {
        let mut frame = encode(&t, &fields);
        let body_start = frame.iter().enumerate().filter(|(_, b)| **b == 1).nth(1).unwrap().0 + 1;
        let body_end = frame.len() - 7;
        let i = body_start + at.index(body_end - body_start);
        let b = frame[i];
        prop_assume!(b != 1 && b != b'=');
        let mut changed = (b - 32 + by) % 95 + 32;
        if changed == b'=' {
            changed = b'#';
        }
        prop_assume!(changed != b);
        frame[i] = changed;
        prop_assert!(Decoder::new(&frame).decode().is_err());
    }

    /// A wrong BodyLength is refused.
    #[test]
    fn a_wrong_body_length_is_refused(t in msg_type(), fields in body_fields(), off in 1usize..5) {
        let good = reference_frame(&t, &fields);
        let text = String::from_utf8(good).unwrap();
        let (head, rest) = text.split_once("\x019=").unwrap();
        let (len, tail) = rest.split_once('\x01').unwrap();
        let wrong: usize = len.parse::<usize>().unwrap() + off;
        let frame = format!("{head}\x019={wrong}\x01{tail}");
        prop_assert!(Decoder::new(frame.as_bytes()).decode().is_err());
    }
}

proptest! {
    /// The engine's TradeReportIDs name their order and step, and nothing else reads as one.
    #[test]
    fn trade_report_ids_name_their_order(bytes in any::<[u8; 16]>(), fill in any::<bool>(), junk in "[ -~]{0,50}") {
        use upstairs_engine::fix::{parse_trade_report_id, trade_report_id};
        use upstairs_engine::model::ConfirmationStep;
        let order = upstairs_domain::OrderId(uuid::Uuid::from_bytes(bytes));
        let step = if fill { ConfirmationStep::Fill } else { ConfirmationStep::Accept };
        prop_assert_eq!(parse_trade_report_id(&trade_report_id(order, step)), Some((order, step)));
        // Whatever else parses names an order and step that print back to the same.
        if let Some((o, s)) = parse_trade_report_id(&junk) {
            prop_assert_eq!(parse_trade_report_id(&trade_report_id(o, s)), Some((o, s)));
        }
    }

    /// A quantity is a whole number of lots above 0, however FIX writes it.
    #[test]
    fn quantities_read_whole(n in 1i64..1_000_000_000, zeros in 0u32..6, frac in 1u32..10) {
        use rust_decimal::Decimal;
        use upstairs_fix::messages::whole_quantity;
        let scaled = Decimal::from_i128_with_scale(i128::from(n) * 10i128.pow(zeros), zeros);
        prop_assert_eq!(whole_quantity(scaled), Some(n));
        let fractional = Decimal::from_i128_with_scale(i128::from(n) * 10 + i128::from(frac), 1);
        prop_assert_eq!(whole_quantity(fractional), None);
        prop_assert_eq!(whole_quantity(-scaled), None);
    }
}
