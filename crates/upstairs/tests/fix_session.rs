#![allow(clippy::unwrap_used)]
//! The FIX session layer's standard test cases (logon, sequence numbers, possible
//! duplicates, BeginString and message types, heart-beats and test requests, resends,
//! sequence resets, logout, field validation and the mid-session reset), scripted against
//! the venue's real acceptor over a socket on both backends. Each case names its number
//! in QuickFIX's FIX 4.4 acceptance scripts (e.g. 2i_BeginStringValueUnexpected); where
//! the venue answers differently from them it says so (ADR 0033).
mod support;

use reqwest::StatusCode;
use serde_json::json;
use std::time::{Duration, Instant};
use support::fix::*;
use support::venue::*;
use support::*;
use upstairs_fix::FixSettings;

on_both_backends!(
    logon_and_sequence_numbers,
    possible_duplicates,
    begin_string_identity_and_message_types,
    resend_requests_and_the_mid_session_reset,
    sequence_resets,
    field_validation,
    logons_heartbeats_and_garbled_frames,
);

const PW: &str = "Baltic-FIX-pass";
const WITHIN: Duration = Duration::from_secs(10);

/// The venue with its FIX gateway, Baltic's CompID BALTIC allowed to reset on Logon.
async fn fix_venue(b: Backend) -> (Venue, u16) {
    let v = venue_with(b, |s| {
        s.fix = Some(FixSettings {
            bind: "127.0.0.1:0".into(),
            comp_id: "UPSTAIRS".into(),
            tls: None,
            outbox_poll: upstairs_fix::OUTBOX_POLL,
        });
    })
    .await;
    let admin = v.app.admin_token().await;
    let (s, c) = v
        .app
        .patch(
            &format!("/api/admin/companies/{}", v.broker),
            Some(&admin),
            json!({"fix_comp_id": "BALTIC", "fix_password": PW, "fix_reset_on_logon": true}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{c}");
    let port = v.app.running.as_ref().unwrap().fix.as_ref().unwrap().local_addr().port();
    (v, port)
}

/// 1a: a session logged on afresh, by a Logon with ResetSeqNumFlag as number 1 (tried
/// again while the previous case's session is still being let go).
async fn session(port: u16) -> RawFix {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut c = RawFix::connect(port, "BALTIC").await;
        c.send("A", &[(98, "0"), (108, "30"), (141, "Y"), (554, PW)]).await;
        if let Some(ack) = c.next(WITHIN).await {
            assert_eq!(tag(&ack, 35).as_deref(), Some("A"), "{ack:?}");
            assert_eq!((tag(&ack, 34).as_deref(), tag(&ack, 141).as_deref()), (Some("1"), Some("Y")), "{ack:?}");
            assert_eq!(tag(&ack, 108).as_deref(), Some("30"), "{ack:?}");
            return c;
        }
        assert!(Instant::now() < deadline, "BALTIC could not log on again");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn utc(offset_ms: i64) -> String {
    (chrono::Utc::now() + chrono::TimeDelta::milliseconds(offset_ms)).format("%Y%m%d-%H:%M:%S%.3f").to_string()
}

/// A frame under `begin` with the given fields after BodyLength.
fn frame_as(begin: &str, fields: &[(u32, String)]) -> Vec<u8> {
    let body: String = fields.iter().map(|(t, v)| format!("{t}={v}\x01")).collect();
    let head = format!("8={begin}\x019={}\x01", body.len());
    let sum = head.bytes().chain(body.bytes()).fold(0u32, |s, b| s + u32::from(b)) % 256;
    format!("{head}{body}10={sum:03}\x01").into_bytes()
}

/// Sends a message numbered `seq` (the client's own counter is not moved), with extra
/// header fields after the standard ones, then the body.
async fn send_at(c: &mut RawFix, msg_type: &str, seq: u64, header: &[(u32, &str)], body: &[(u32, &str)]) {
    let mut fields: Vec<(u32, String)> = vec![
        (35, msg_type.into()),
        (34, seq.to_string()),
        (49, "BALTIC".into()),
        (52, utc(0)),
        (56, "UPSTAIRS".into()),
    ];
    fields.extend(header.iter().map(|(t, v)| (*t, (*v).to_owned())));
    fields.extend(body.iter().map(|(t, v)| (*t, (*v).to_owned())));
    c.write(&frame_as("FIX.4.4", &fields)).await;
}

/// Sends a TestRequest as the next number and reads up to its Heartbeat: what the venue
/// said before it (nothing, when the session is in step), proving the number was taken.
async fn probe(c: &mut RawFix, id: &str) -> Vec<Vec<(u32, String)>> {
    c.send("1", &[(112, id)]).await;
    let mut before = Vec::new();
    loop {
        let m = c.next(WITHIN).await.unwrap_or_else(|| panic!("no Heartbeat for {id}; before it {before:?}"));
        if tag(&m, 35).as_deref() == Some("0") && tag(&m, 112).as_deref() == Some(id) {
            return before;
        }
        if tag(&m, 35).as_deref() != Some("0") {
            before.push(m);
        }
    }
}

/// Reads until the venue closes the connection: the message types it said first.
async fn closed_after(c: &mut RawFix) -> Vec<Vec<(u32, String)>> {
    let mut said = Vec::new();
    while let Some(m) = c.next(WITHIN).await {
        said.push(m);
    }
    said
}

fn types(ms: &[Vec<(u32, String)>]) -> Vec<String> {
    ms.iter().map(|m| tag(m, 35).unwrap_or_default()).collect()
}

async fn logon_and_sequence_numbers(b: Backend) {
    let (v, port) = fix_venue(b).await;
    // 1a, 2a, 4b: in sequence, a TestRequest is answered by a Heartbeat naming it.
    let mut c = session(port).await;
    assert!(probe(&mut c, "2a").await.is_empty());

    // 2b, 10 (MsgSeqNumEqual): a number above the expected one asks for the gap; a gap fill closes it
    // and the message above it is then acted on.
    let expected = c.seq;
    send_at(&mut c, "0", expected + 3, &[], &[]).await;
    let rr = c.expect("2", WITHIN).await;
    assert_eq!((tag(&rr, 7), tag(&rr, 16).as_deref()), (Some(expected.to_string()), Some("0")), "{rr:?}");
    let (high, fill) = ((expected + 3).to_string(), expected.to_string());
    send_at(&mut c, "4", expected, &[(43, "Y"), (122, &utc(-1000))], &[(123, "Y"), (36, &high)]).await;
    c.seq = expected + 4;
    assert_eq!(types(&probe(&mut c, "after-fill").await), Vec::<String>::new(), "filled at {fill}");

    // 4b above a gap, 20 (simultaneous ResendRequests): the ResendRequest first, the Heartbeat only once the
    // gap is filled. A ResendRequest above the gap is served at once, so whatever the
    // venue said before serving it shows whether the Heartbeat jumped the gap.
    let expected = c.seq;
    send_at(&mut c, "1", expected + 2, &[], &[(112, "early")]).await;
    send_at(&mut c, "2", expected + 3, &[], &[(7, "1"), (16, "0")]).await;
    let mut said = Vec::new();
    loop {
        let m = c.next(WITHIN).await.expect("the venue serves the ResendRequest");
        let t = tag(&m, 35).unwrap_or_default();
        said.push((t.clone(), tag(&m, 112)));
        if t == "4" {
            break;
        }
    }
    assert_eq!(said.first().map(|s| s.0.as_str()), Some("2"), "{said:?}");
    assert!(!said.iter().any(|s| s.1.as_deref() == Some("early")), "answered before the gap was filled: {said:?}");
    let (to, fill) = ((expected + 2).to_string(), expected.to_string());
    send_at(&mut c, "4", expected, &[(43, "Y"), (122, &utc(-1000))], &[(123, "Y"), (36, &to)]).await;
    let hb = c.expect("0", WITHIN).await;
    assert_eq!(tag(&hb, 112).as_deref(), Some("early"), "answered once {fill} was filled: {hb:?}");
    c.seq = expected + 4;
    assert!(probe(&mut c, "after-early").await.is_empty());

    // 2c: a number below the expected one without PossDupFlag: Logout, then the end.
    send_at(&mut c, "0", 1, &[], &[]).await;
    let said = closed_after(&mut c).await;
    assert_eq!(types(&said), ["5"], "{said:?}");
    assert!(tag(&said[0], 58).unwrap_or_default().contains("too low"), "{said:?}");

    // 13b: the peer's Logout is answered by one, and the venue closes.
    let mut c = session(port).await;
    c.send("5", &[]).await;
    assert_eq!(types(&closed_after(&mut c).await), ["5"]);
    v.app.stop().await;
}

async fn possible_duplicates(b: Backend) {
    let (v, port) = fix_venue(b).await;
    let mut c = session(port).await;
    assert!(probe(&mut c, "first").await.is_empty());
    // 2e: a possible duplicate below the expected number, sent before: ignored.
    send_at(&mut c, "0", 2, &[(43, "Y"), (122, &utc(-5000))], &[]).await;
    assert!(probe(&mut c, "after-2e").await.is_empty());
    // 2g: a possible duplicate without OrigSendingTime: a Reject naming 122, its number
    // taken; in sequence and below it alike.
    let n = c.seq;
    send_at(&mut c, "0", n, &[(43, "Y")], &[]).await;
    c.seq += 1;
    let r = c.expect("3", WITHIN).await;
    assert_eq!(
        (tag(&r, 45), tag(&r, 371).as_deref(), tag(&r, 372).as_deref(), tag(&r, 373).as_deref()),
        (Some(n.to_string()), Some("122"), Some("0"), Some("1")),
        "{r:?}"
    );
    assert!(probe(&mut c, "after-2g").await.is_empty());
    send_at(&mut c, "0", 2, &[(43, "Y")], &[]).await;
    let r = c.expect("3", WITHIN).await;
    assert_eq!((tag(&r, 371).as_deref(), tag(&r, 373).as_deref()), (Some("122"), Some("1")), "{r:?}");
    assert!(probe(&mut c, "after-2g-low").await.is_empty());
    // 2f: OrigSendingTime later than SendingTime: a Reject (SendingTime accuracy), then
    // a Logout.
    let n = c.seq;
    send_at(&mut c, "0", n, &[(43, "Y"), (122, &utc(60_000))], &[]).await;
    let said = closed_after(&mut c).await;
    assert_eq!(types(&said), ["3", "5"], "{said:?}");
    assert_eq!((tag(&said[0], 371).as_deref(), tag(&said[0], 373).as_deref()), (Some("122"), Some("10")));
    v.app.stop().await;
}

async fn begin_string_identity_and_message_types(b: Backend) {
    let (v, port) = fix_venue(b).await;
    let mut c = session(port).await;
    // 2q: a MsgType FIX does not define: a session Reject (373=11), the number taken.
    let n = c.seq;
    c.send("ZZ", &[]).await;
    let r = c.expect("3", WITHIN).await;
    assert_eq!((tag(&r, 45), tag(&r, 373).as_deref()), (Some(n.to_string()), Some("11")), "{r:?}");
    // 2r: a FIX 4.4 MsgType the venue does not act on (OrderCancelReplaceRequest): a
    // BusinessMessageReject (380=3), the number taken.
    let n = c.seq;
    c.send("G", &[(41, "a"), (11, "b"), (55, "X"), (54, "1"), (60, &utc(0)), (38, "1"), (40, "1")]).await;
    let r = c.expect("j", WITHIN).await;
    assert_eq!(
        (tag(&r, 45), tag(&r, 372).as_deref(), tag(&r, 380).as_deref()),
        (Some(n.to_string()), Some("G"), Some("3")),
        "{r:?}"
    );
    assert!(probe(&mut c, "after-2n").await.is_empty());
    // 2i: another BeginString in a FIX.4.4 session: a Logout, and the end.
    let fields = vec![
        (35, "0".to_owned()),
        (34, c.seq.to_string()),
        (49, "BALTIC".to_owned()),
        (52, utc(0)),
        (56, "UPSTAIRS".to_owned()),
    ];
    c.write(&frame_as("FIX.4.1", &fields)).await;
    let said = closed_after(&mut c).await;
    assert_eq!(types(&said), ["5"], "{said:?}");
    assert_eq!(tag(&said[0], 58).as_deref(), Some("Incorrect BeginString"), "{said:?}");

    // 2o: a SendingTime far from the venue's clock: a Reject (373=10) and a Logout.
    let mut c = session(port).await;
    let mut fields = vec![
        (35, "0".to_owned()),
        (34, c.seq.to_string()),
        (49, "BALTIC".to_owned()),
        (52, utc(-600_000)),
        (56, "UPSTAIRS".to_owned()),
    ];
    c.write(&frame_as("FIX.4.4", &fields)).await;
    let said = closed_after(&mut c).await;
    assert_eq!(types(&said), ["3", "5"], "{said:?}");
    assert_eq!(tag(&said[0], 373).as_deref(), Some("10"), "{said:?}");

    // 2k: another SenderCompID on the session: a Reject (373=9) and a Logout.
    let mut c = session(port).await;
    fields[1].1 = c.seq.to_string();
    fields[2].1 = "SOMEONE".to_owned();
    fields[3].1 = utc(0);
    c.write(&frame_as("FIX.4.4", &fields)).await;
    let said = closed_after(&mut c).await;
    assert_eq!(types(&said), ["3", "5"], "{said:?}");
    assert_eq!(tag(&said[0], 373).as_deref(), Some("9"), "{said:?}");
    v.app.stop().await;
}

async fn resend_requests_and_the_mid_session_reset(b: Backend) {
    let (v, port) = fix_venue(b).await;
    let mut c = session(port).await;
    assert!(probe(&mut c, "one").await.is_empty());
    // 8: a ResendRequest is served: the venue's administrative messages (its Logon,
    // heart-beats) are gap-filled, possible duplicates with their OrigSendingTime.
    c.send("2", &[(7, "1"), (16, "0")]).await;
    let fill = c.expect("4", WITHIN).await;
    assert_eq!((tag(&fill, 34).as_deref(), tag(&fill, 123).as_deref()), (Some("1"), Some("Y")), "{fill:?}");
    assert_eq!(tag(&fill, 43).as_deref(), Some("Y"), "{fill:?}");
    assert!(tag(&fill, 122).is_some(), "{fill:?}");
    assert!(probe(&mut c, "two").await.is_empty());
    // A ResendRequest numbered below the expected one is served too, and takes no number.
    send_at(&mut c, "2", 2, &[], &[(7, "1"), (16, "0")]).await;
    c.expect("4", WITHIN).await;
    assert!(probe(&mut c, "three").await.is_empty());

    // 10 (MsgSeqNumLess, PossDupFlag): a repeated gap fill (PossDupFlag) below the expected number is ignored, even
    // when its NewSeqNo reaches past it: no ResendRequest.
    let past = (c.seq + 5).to_string();
    send_at(&mut c, "4", 2, &[(43, "Y"), (122, &utc(-1000))], &[(123, "Y"), (36, &past)]).await;
    assert!(probe(&mut c, "after-10c").await.is_empty(), "ignored");

    // ResetSeqNumFlag: a Logon with it in the middle of the session (the company allows
    // resets): both numbers start again, the venue's answer is its number 1.
    c.seq = 1;
    c.send("A", &[(98, "0"), (108, "30"), (141, "Y")]).await;
    let ack = c.expect("A", WITHIN).await;
    assert_eq!((tag(&ack, 34).as_deref(), tag(&ack, 141).as_deref()), (Some("1"), Some("Y")), "{ack:?}");
    assert!(probe(&mut c, "after-reset").await.is_empty());
    c.send("1", &[(112, "numbered")]).await;
    let hb = c.expect("0", WITHIN).await;
    assert_eq!((tag(&hb, 112).as_deref(), tag(&hb, 34).as_deref()), (Some("numbered"), Some("3")), "{hb:?}");
    // The reset is not a new Logon: the session stays the one logged on.
    let admin = v.app.admin_token().await;
    let (_, sessions) = v.app.get("/api/admin/fix-sessions", Some(&admin)).await;
    let row = sessions["items"].as_array().unwrap().iter().find(|i| i["fix_comp_id"] == "BALTIC").unwrap().clone();
    assert_eq!(row["state"], "LOGGED_ON", "{row}");
    // The page says where the node that answered accepts sessions (issue 28.20).
    let at = format!("127.0.0.1:{port}");
    assert_eq!(sessions["acceptor"], json!({"address": at, "tls": false, "comp_id": "UPSTAIRS"}));
    // The reset is in the action log, from what to what (the newest reset first).
    let (_, logs) = v.app.get("/api/admin/action-logs?size=200", Some(&admin)).await;
    let resets: Vec<_> = logs["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["entity"] == "fix_session" && l["operation"] == "sequence_reset")
        .map(|l| (l["details"]["before"]["next_target_seq"].as_i64().unwrap_or(0), l["details"]["after"].clone()))
        .collect();
    // Filed as the reset happened: the venue's Logon answer (1) is numbered after it.
    let (before, after) = resets.first().cloned().unwrap();
    assert!(before > 2, "{before}");
    assert_eq!(after, json!({"next_sender_seq": 1, "next_target_seq": 2}), "{logs}");

    // 10 (MsgSeqNumLess): a gap fill below the expected number without PossDupFlag: a Logout.
    send_at(&mut c, "4", 1, &[], &[(123, "Y"), (36, "9")]).await;
    assert_eq!(types(&closed_after(&mut c).await), ["5"]);
    v.app.stop().await;
}

async fn sequence_resets(b: Backend) {
    let (v, port) = fix_venue(b).await;
    let mut c = session(port).await;
    // 10 (MsgSeqNumGreater): a gap fill above the expected number: the gap is asked for first.
    let expected = c.seq;
    let to = (expected + 4).to_string();
    send_at(&mut c, "4", expected + 2, &[], &[(123, "Y"), (36, &to)]).await;
    let rr = c.expect("2", WITHIN).await;
    assert_eq!(tag(&rr, 7), Some(expected.to_string()), "{rr:?}");
    let two = (expected + 2).to_string();
    send_at(&mut c, "4", expected, &[(43, "Y"), (122, &utc(-1000))], &[(123, "Y"), (36, &two)]).await;
    c.seq = expected + 4;
    assert!(probe(&mut c, "after-10b").await.is_empty());
    // 10, 11c: a gap fill whose NewSeqNo is not above its own number: a Reject (373=5).
    let n = c.seq;
    send_at(&mut c, "4", n, &[], &[(123, "Y"), (36, &n.to_string())]).await;
    c.seq += 1;
    let r = c.expect("3", WITHIN).await;
    assert_eq!((tag(&r, 371).as_deref(), tag(&r, 373).as_deref()), (Some("36"), Some("5")), "{r:?}");
    assert!(probe(&mut c, "after-10e").await.is_empty());
    // 11a: a Reset to a higher number moves the expected one there, whatever its own.
    let ahead = c.seq + 10;
    send_at(&mut c, "4", 1, &[], &[(36, &ahead.to_string())]).await;
    c.seq = ahead;
    assert!(probe(&mut c, "after-11a").await.is_empty());
    // 11c: a Reset to a lower number: a Reject (373=5), and the expected number stays
    // (a Reset's own number is never read).
    let n = c.seq;
    send_at(&mut c, "4", n, &[], &[(36, "2")]).await;
    let r = c.expect("3", WITHIN).await;
    assert_eq!((tag(&r, 371).as_deref(), tag(&r, 373).as_deref()), (Some("36"), Some("5")), "{r:?}");
    assert!(probe(&mut c, "after-11c").await.is_empty());
    v.app.stop().await;
}

/// A defect case: what it is, extra header fields, the body, and the RefTagID and
/// SessionRejectReason the Reject must give.
type Defect<'a> = (&'a str, Vec<(u32, &'a str)>, Vec<(u32, String)>, &'a str, &'a str);

/// 14a–14i, 21 (a group counted 0), and a resent message and routing hops: every application message is checked
/// against the venue's FIX 4.4 data dictionary; each defect gets a session Reject with
/// its reason and RefTagID, the message's number is taken and the session goes on.
async fn field_validation(b: Backend) {
    let (v, port) = fix_venue(b).await;
    let mut c = session(port).await;
    let now = utc(0);
    let order = |extra: &[(u32, &'static str)]| {
        let mut f: Vec<(u32, String)> = [(11, "c1"), (55, "X"), (54, "1"), (38, "500"), (40, "1")]
            .iter()
            .map(|(t, v)| (*t, (*v).to_owned()))
            .collect();
        f.push((60, now.clone()));
        f.extend(extra.iter().map(|(t, v)| (*t, (*v).to_owned())));
        f
    };
    let without = |t: u32| order(&[]).into_iter().filter(|(k, _)| *k != t).collect::<Vec<_>>();
    let mut plus = without(38);
    plus.push((38, "+200.00".into()));
    let cases: Vec<Defect> = vec![
        ("an unknown tag", vec![], order(&[(999, "x")]), "999", "0"),
        ("a user-defined tag", vec![], order(&[(5000, "x")]), "5000", "0"),
        ("a tag of another message type", vec![], order(&[(571, "x")]), "571", "2"),
        ("a tag without a value", vec![], order(&[(58, "")]), "58", "4"),
        ("a required tag missing", vec![], without(11), "11", "1"),
        ("HandlInst out of range", vec![], order(&[(21, "4")]), "21", "5"),
        ("SecurityType out of range", vec![], order(&[(167, "BOO")]), "167", "5"),
        ("a quantity with a sign", vec![], plus, "38", "6"),
        ("a repeated tag", vec![], order(&[(58, "a"), (58, "b")]), "58", "13"),
        ("a group count above its entries", vec![], order(&[(453, "2"), (448, "T1"), (452, "11")]), "453", "16"),
        ("a header field after the body", vec![], order(&[(97, "N")]), "97", "14"),
        ("a routing hop without a value", vec![(627, "1"), (628, "")], order(&[]), "628", "4"),
    ];
    for (what, header, body, ref_tag, reason) in cases {
        let n = c.seq;
        let body: Vec<(u32, &str)> = body.iter().map(|(t, v)| (*t, v.as_str())).collect();
        send_at(&mut c, "D", n, &header, &body).await;
        c.seq += 1;
        let r = c.expect("3", WITHIN).await;
        assert_eq!(
            (tag(&r, 45), tag(&r, 371).as_deref(), tag(&r, 372).as_deref(), tag(&r, 373).as_deref()),
            (Some(n.to_string()), Some(ref_tag), Some("D"), Some(reason)),
            "{what}: {r:?}"
        );
    }
    // The administrative messages too: a Heartbeat with a tag FIX 4.4 does not define, a
    // TestRequest without its TestReqID, a ResendRequest with a signed number.
    for (msg_type, body, ref_tag, reason) in
        [("0", vec![(999, "HI")], "999", "0"), ("1", vec![], "112", "1"), ("2", vec![(7, "-1"), (16, "0")], "7", "6")]
    {
        let n = c.seq;
        c.send(msg_type, &body).await;
        let r = c.expect("3", WITHIN).await;
        assert_eq!(
            (tag(&r, 45), tag(&r, 371).as_deref(), tag(&r, 372).as_deref(), tag(&r, 373).as_deref()),
            (Some(n.to_string()), Some(ref_tag), Some(msg_type), Some(reason)),
            "{msg_type}: {r:?}"
        );
    }
    // A resent message (PossDupFlag, in sequence) with a malformed field is rejected the
    // same way.
    let n = c.seq;
    let body = order(&[(44, "abc")]);
    let body: Vec<(u32, &str)> = body.iter().map(|(t, v)| (*t, v.as_str())).collect();
    send_at(&mut c, "D", n, &[(43, "Y"), (122, &utc(-2000))], &body).await;
    c.seq += 1;
    let r = c.expect("3", WITHIN).await;
    assert_eq!((tag(&r, 371).as_deref(), tag(&r, 373).as_deref()), (Some("44"), Some("6")), "{r:?}");
    // Tag 0 cannot be read at all: a Reject for the malformed message, its number taken.
    let n = c.seq;
    c.send("D", &[(0, "x"), (11, "c2")]).await;
    let r = c.expect("3", WITHIN).await;
    assert_eq!(tag(&r, 45), Some(n.to_string()), "{r:?}");
    assert_eq!(tag(&r, 373).as_deref(), Some("0"), "{r:?}");
    assert!(probe(&mut c, "still-in-step").await.is_empty());
    // 21: a group counted 0 with no entries, 15: the header's fields in another order,
    // 19: PossResend (97=Y) and 2e (a possible duplicate not received before): each is a
    // sound message, acted on (Baltic is a broker, so the order itself is refused by an
    // ExecutionReport, not by a session Reject).
    let zero = order(&[(453, "0")]);
    let zero: Vec<(u32, &str)> = zero.iter().map(|(t, v)| (*t, v.as_str())).collect();
    let n = c.seq;
    send_at(&mut c, "D", n, &[(97, "Y")], &zero).await;
    c.seq += 1;
    let n = c.seq;
    send_at(&mut c, "0", n, &[(43, "Y"), (122, &utc(-3000))], &[]).await;
    c.seq += 1;
    let mut fields = vec![(35, "0".to_owned()), (49, "BALTIC".into()), (56, "UPSTAIRS".into())];
    fields.extend([(52, utc(0)), (34, c.seq.to_string())]);
    c.write(&frame_as("FIX.4.4", &fields)).await;
    c.seq += 1;
    let before = probe(&mut c, "sound").await;
    assert!(!types(&before).contains(&"3".to_owned()), "{before:?}");
    v.app.stop().await;
}

async fn logons_heartbeats_and_garbled_frames(b: Backend) {
    let (v, port) = fix_venue(b).await;
    // 1e: a first message other than a Logon: the connection is closed, nothing said.
    let mut c = RawFix::connect(port, "BALTIC").await;
    c.send("1", &[(112, "who")]).await;
    assert!(closed_after(&mut c).await.is_empty());

    // 1d: a Logon under another BeginString, or with a SendingTime far off: no Logon
    // answers it.
    for (begin, at) in [("FIX.4.1", 0), ("FIX.4.4", -600_000)] {
        let mut c = RawFix::connect(port, "BALTIC").await;
        let fields = vec![
            (35, "A".to_owned()),
            (34, "1".into()),
            (49, "BALTIC".into()),
            (52, utc(at)),
            (56, "UPSTAIRS".into()),
            (98, "0".into()),
            (108, "30".into()),
            (141, "Y".into()),
            (554, PW.into()),
        ];
        c.write(&frame_as(begin, &fields)).await;
        let said = closed_after(&mut c).await;
        assert!(!types(&said).contains(&"A".to_owned()), "{begin} {at}: {said:?}");
    }

    // 2m, 2t: a frame with a wrong BodyLength, or MsgType not third, is garbled: ignored,
    // its number not taken.
    let mut c = session(port).await;
    let n = c.seq.to_string();
    let mut long = frame_as("FIX.4.4", &[(35, "0".into()), (34, n.clone()), (49, "BALTIC".into()), (52, utc(0))]);
    let at = long.windows(2).position(|w| w == b"9=").unwrap() + 2;
    long[at] = b'9';
    c.write(&long).await;
    let fields = vec![(34, n), (35, "0".to_owned()), (49, "BALTIC".into()), (52, utc(0)), (56, "UPSTAIRS".into())];
    c.write(&frame_as("FIX.4.4", &fields)).await;
    assert!(probe(&mut c, "after-garbled").await.is_empty(), "the probe takes the number they did not");
    // 7: a session Reject from the peer takes its number and changes nothing else.
    c.send("3", &[(45, "1"), (58, "a reject of ours")]).await;
    assert!(probe(&mut c, "after-reject").await.is_empty());

    // 1a, 2b: a Logon numbered above the expected number: the Logon is answered, then the
    // gap is asked for.
    c.send("5", &[]).await;
    assert_eq!(types(&closed_after(&mut c).await), ["5"]);
    let expected = c.seq;
    let mut c = RawFix::connect(port, "BALTIC").await;
    c.seq = expected + 4;
    let deadline = Instant::now() + Duration::from_secs(30);
    let ack = loop {
        c.send("A", &[(98, "0"), (108, "1"), (554, PW)]).await;
        if let Some(ack) = c.next(WITHIN).await {
            break ack;
        }
        assert!(Instant::now() < deadline, "BALTIC could not log on again");
        tokio::time::sleep(Duration::from_millis(50)).await;
        c = RawFix::connect(port, "BALTIC").await;
        c.seq = expected + 4;
    };
    assert_eq!(tag(&ack, 35).as_deref(), Some("A"), "{ack:?}");
    let rr = c.expect("2", WITHIN).await;
    assert_eq!(tag(&rr, 7), Some(expected.to_string()), "{rr:?}");
    let to = (expected + 4).to_string();
    send_at(&mut c, "4", expected, &[(43, "Y"), (122, &utc(-1000))], &[(123, "Y"), (36, &to)]).await;
    c.seq = expected + 5;
    // 4a, 6 (HeartBtInt 1 s): a quiet peer hears Heartbeats; one that answers nothing
    // is sent a TestRequest, and then the connection is taken as lost and closed.
    let mut seen = Vec::new();
    while seen.last().map(String::as_str) != Some("1") {
        let m = c.next(WITHIN).await.unwrap_or_else(|| panic!("no TestRequest after {seen:?}"));
        seen.push(tag(&m, 35).unwrap_or_default());
    }
    assert_eq!(seen.first().map(String::as_str), Some("0"), "a Heartbeat first: {seen:?}");
    assert!(c.until_closed(WITHIN).await.is_some(), "closed once the TestRequest went unanswered");
    v.app.stop().await;
}
