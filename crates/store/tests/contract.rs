#![allow(clippy::unwrap_used)]
//! The store contract: every test runs against SQLite and PostgreSQL.

use chrono::{DateTime, Duration, Utc};
use rust_decimal::Decimal;
use serde_json::json;
use std::str::FromStr;
use upstairs_domain::{AutoAccept, InstrumentId, Role, SessionId, UiMetadataEntry, UserId};
use upstairs_engine::StoreError;
use upstairs_engine::model::*;
use upstairs_engine::ports::*;
use upstairs_store::testing::{fresh_postgres, fresh_sqlite};
use uuid::Uuid;

macro_rules! contract {
    ($($name:ident),* $(,)?) => {
        $(mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() { super::$name(super::fresh_sqlite().await).await }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() { super::$name(super::fresh_postgres().await).await }
        })*
    };
}

contract!(
    fix_frames_are_filed_in_one_statement,
    fix_outbox_rings_only_its_company_once_committed,
    users_round_trip,
    email_is_unique,
    sessions,
    link_tokens,
    a_link_is_claimed_once,
    audit_rows,
    action_log_pages,
    outbox_lifecycle,
    timers_claim_and_reschedule,
    timers_are_claimed_once_under_concurrency,
    presence_leases_lapse_once,
    band_history_is_kept,
    exchanges_round_trip,
    uncommitted_writes_vanish,
    companies_with_brokers,
    instruments_exact_filtered_sorted,
    user_lists,
    book_rows_sum_working_orders,
    order_writes_keep_counters_and_levels,
    stale_order_write_is_refused,
    database_refuses_negative_tradable,
    database_refuses_unbounded_quantities,
    levels_follow_the_domain_display_rule,
    an_iceberg_shows_by_the_block_it_is_written_with,
    database_refuses_a_stopped_company_s_orders,
    order_and_audit_in_one_write,
    concurrent_order_writes_keep_each_outcome,
    concurrent_order_writes_leave_out_ended_parents,
    match_requests_and_notifications,
    rfqs_and_responses,
);

fn t0() -> DateTime<Utc> {
    // Microsecond precision: what both backends keep.
    DateTime::parse_from_rfc3339("2026-03-02T09:30:00.123456Z").unwrap().with_timezone(&Utc)
}

fn company(name: &str) -> Company {
    Company { full_name: format!("{name} Ltd"), roles: vec!["broker".into()], ..Company::named(name, t0()) }
}

fn user(company: &Company, email: &str) -> User {
    User {
        user_id: UserId::new(),
        company_id: company.company_id,
        email: email.into(),
        first_name: "Ada".into(),
        last_name: "Lovelace".into(),
        roles: vec![Role::Trader, Role::CompanyAdmin],
        password_hash: None,
        active: true,
        verified: false,
        auto_accept: None,
        parent_order_limit_multiplier: None,
        ui_metadata: vec![],
        fix_integration: false,
        cancel_on_disconnect: false,
        ems_trader_id: None,
        created_at: t0(),
        updated_at: t0(),
    }
}

async fn seeded<S: Store>(s: &S) -> (Company, User) {
    let c = company("Halyard");
    let u = user(&c, "ada@halyard.test");
    let mut tx = s.write().await.unwrap();
    tx.insert_company(&c).await.unwrap();
    tx.insert_user(&u).await.unwrap();
    tx.commit().await.unwrap();
    (c, u)
}

async fn users_round_trip<S: Store>(s: S) {
    let (c, mut u) = seeded(&s).await;
    // Read ahead in one go, then answered as read (an unknown id as none), in a
    // transaction and outside one.
    let (nobody, no_user) = (upstairs_domain::CompanyId::new(), UserId::new());
    for mut tx in [s.read().await.unwrap(), s.single().await.unwrap()] {
        tx.read_ahead(&[c.company_id, nobody, c.company_id], &[u.user_id, no_user]).await.unwrap();
        assert_eq!(tx.company(c.company_id).await.unwrap(), Some(c.clone()));
        assert_eq!(tx.company(nobody).await.unwrap(), None);
        assert_eq!(tx.user(u.user_id).await.unwrap().map(|v| v.user), Some(u.clone()));
        assert_eq!(tx.user(no_user).await.unwrap(), None);
        tx.read_ahead(&[], &[]).await.unwrap();
    }
    let mut tx = s.read().await.unwrap();
    assert_eq!(tx.company(c.company_id).await.unwrap(), Some(c.clone()));
    assert_eq!(tx.company_by_name("Halyard").await.unwrap(), Some(c.clone()));
    assert_eq!(tx.company_by_name("Nobody").await.unwrap(), None);
    assert_eq!(tx.count_companies().await.unwrap(), 1);
    let got = tx.user(u.user_id).await.unwrap().unwrap();
    assert_eq!(got.user, u);
    assert_eq!(got.company_name, "Halyard");
    assert_eq!(tx.user_by_email("ada@halyard.test").await.unwrap().unwrap().user, u);
    assert!(tx.user_by_email("nobody@halyard.test").await.unwrap().is_none());
    drop(tx);

    u.auto_accept = Some(AutoAccept::RejectWithDelay);
    u.password_hash = Some("$argon2id$x".into());
    u.verified = true;
    u.parent_order_limit_multiplier = Some(4);
    u.ui_metadata =
        vec![UiMetadataEntry { key: "TOOLTIPS".into(), value: json!([{"key": "FIRST_PARENT_ORDER", "read": true}]) }];
    u.ems_trader_id = Some("EMS-7".into());
    u.cancel_on_disconnect = true;
    u.updated_at = t0() + Duration::seconds(5);
    let mut tx = s.write().await.unwrap();
    tx.update_user(&u).await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = s.read().await.unwrap();
    assert_eq!(tx.user(u.user_id).await.unwrap().unwrap().user, u);
}

async fn email_is_unique<S: Store>(s: S) {
    let (c, _) = seeded(&s).await;
    let mut tx = s.write().await.unwrap();
    let err = tx.insert_user(&user(&c, "ada@halyard.test")).await.unwrap_err();
    assert!(matches!(err, StoreError::Unique(_)), "{err:?}");
}

async fn sessions<S: Store>(s: S) {
    let (_, u) = seeded(&s).await;
    let live = Session {
        session_id: SessionId::new(),
        user_id: u.user_id,
        token_hash: "h1".into(),
        created_at: t0(),
        expires_at: t0() + Duration::hours(12),
    };
    let old = Session { session_id: SessionId::new(), token_hash: "h2".into(), expires_at: t0(), ..live.clone() };
    let mut tx = s.write().await.unwrap();
    tx.insert_session(&live).await.unwrap();
    tx.insert_session(&old).await.unwrap();
    tx.commit().await.unwrap();

    // The one-statement read outside a transaction sees what was committed.
    let (session, view) = s.single().await.unwrap().session_user("h1").await.unwrap().unwrap();
    assert_eq!((session, view.user.email, view.company_name), (live.clone(), u.email.clone(), "Halyard".to_owned()));
    let session_of = |r: Option<(Session, UserView)>| r.map(|(s, _)| s);
    let mut tx = s.write().await.unwrap();
    assert_eq!(session_of(tx.session_user("h1").await.unwrap()), Some(live.clone()));
    assert_eq!(tx.delete_expired_sessions(t0()).await.unwrap(), 1);
    assert_eq!(session_of(tx.session_user("h2").await.unwrap()), None);
    tx.delete_session(live.session_id).await.unwrap();
    assert_eq!(session_of(tx.session_user("h1").await.unwrap()), None);
    tx.insert_session(&live).await.unwrap();
    assert_eq!(tx.delete_sessions_of_user(u.user_id).await.unwrap(), 1);
    tx.commit().await.unwrap();
}

async fn link_tokens<S: Store>(s: S) {
    let (_, u) = seeded(&s).await;
    let reset = LinkToken {
        token_hash: "lt1".into(),
        user_id: u.user_id,
        purpose: LinkPurpose::Reset,
        created_at: t0(),
        expires_at: t0() + Duration::hours(1),
        used_at: None,
    };
    let act = LinkToken { token_hash: "lt2".into(), purpose: LinkPurpose::Activation, ..reset.clone() };
    let mut tx = s.write().await.unwrap();
    tx.insert_link_token(&reset).await.unwrap();
    tx.insert_link_token(&act).await.unwrap();
    assert_eq!(tx.link_token("lt1").await.unwrap(), Some(reset.clone()));
    assert_eq!(tx.link_token("missing").await.unwrap(), None);
    let used_at = t0() + Duration::minutes(3);
    assert_eq!(tx.use_link_tokens_of_user(u.user_id, used_at).await.unwrap(), 2);
    assert_eq!(tx.use_link_tokens_of_user(u.user_id, used_at).await.unwrap(), 0, "already used");
    assert_eq!(tx.link_token("lt2").await.unwrap().unwrap().used_at, Some(used_at));
    assert_eq!(tx.delete_stale_link_tokens(t0()).await.unwrap(), 0);
    assert_eq!(tx.delete_stale_link_tokens(used_at).await.unwrap(), 2);
    tx.commit().await.unwrap();
}

/// A link is used up by one compare-and-set: a claim racing another transaction's
/// uncommitted claim (it waits for its row lock on PostgreSQL, for the writer on SQLite)
/// finds the link used; an expired link is never claimed.
async fn a_link_is_claimed_once<S: Store>(s: S) {
    let (_, u) = seeded(&s).await;
    let link = LinkToken {
        token_hash: "once".into(),
        user_id: u.user_id,
        purpose: LinkPurpose::Reset,
        created_at: t0(),
        expires_at: t0() + Duration::hours(1),
        used_at: None,
    };
    let mut tx = s.write().await.unwrap();
    tx.insert_link_token(&link).await.unwrap();
    tx.insert_link_token(&LinkToken { token_hash: "old".into(), expires_at: t0(), ..link.clone() }).await.unwrap();
    tx.commit().await.unwrap();
    let at = t0() + Duration::minutes(1);
    let mut first = s.write().await.unwrap();
    let claimed = first.claim_link_token("once", at, None).await.unwrap().expect("the first claim gets it");
    assert_eq!(claimed.used_at, Some(at));
    let racer = {
        let s = s.clone();
        tokio::spawn(async move {
            let mut tx = s.write().await.unwrap();
            let c = tx.claim_link_token("once", at, None).await.unwrap();
            tx.commit().await.unwrap();
            c
        })
    };
    first.commit().await.unwrap();
    assert_eq!(racer.await.unwrap(), None, "the second claim finds the link used");
    let mut tx = s.write().await.unwrap();
    assert_eq!(tx.claim_link_token("old", at, None).await.unwrap(), None, "an expired link");
    assert_eq!(tx.claim_link_token("missing", at, None).await.unwrap(), None);
    tx.commit().await.unwrap();
}

async fn audit_rows<S: Store>(s: S) {
    let (_, u) = seeded(&s).await;
    let mut tx = s.write().await.unwrap();
    for (i, op) in ["login_failed", "login"].iter().enumerate() {
        tx.insert_action_log(&ActionLog {
            action_log_id: Uuid::now_v7(),
            entity: "session".into(),
            entity_id: None,
            operation: (*op).into(),
            user_id: (i == 1).then_some(u.user_id),
            created_at: t0() + Duration::seconds(i as i64),
            details: json!({"n": i}),
            keyed: None,
        })
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
    let mut tx = s.read().await.unwrap();
    let logs = tx.action_logs(10).await.unwrap();
    assert_eq!(logs.iter().map(|l| l.operation.as_str()).collect::<Vec<_>>(), ["login", "login_failed"]);
    assert_eq!(logs[0].user_id, Some(u.user_id));
    assert_eq!(logs[1].user_id, None);
    assert_eq!(logs[0].details, json!({"n": 1}));
}

async fn action_log_pages<S: Store>(s: S) {
    let (_, ada) = seeded(&s).await;
    let kestrel = company("Kestrel");
    let kai = user(&kestrel, "kai@kestrel.test");
    let mut tx = s.write().await.unwrap();
    tx.insert_company(&kestrel).await.unwrap();
    tx.insert_user(&kai).await.unwrap();
    // (entity, operation, user, seconds after t0); the last two share their instant.
    let rows = [
        ("user", "create", Some(ada.user_id), 0),
        ("order", "cancel", Some(kai.user_id), 1),
        ("order", "expire_at_close", None, 2),
        ("company", "update", Some(ada.user_id), 3),
        ("instrument", "create", Some(kai.user_id), 4),
        ("session", "login", Some(kai.user_id), 4),
    ];
    let mut ids = Vec::new();
    for (i, (entity, operation, user_id, secs)) in rows.into_iter().enumerate() {
        let log = ActionLog {
            action_log_id: Uuid::now_v7(),
            entity: entity.into(),
            entity_id: Some(Uuid::now_v7()),
            operation: operation.into(),
            user_id,
            created_at: t0() + Duration::seconds(secs),
            details: json!({"n": i, "nested": {"list": [1, "two", null]}}),
            keyed: None,
        };
        ids.push(log.action_log_id);
        tx.insert_action_log(&log).await.unwrap();
    }
    tx.commit().await.unwrap();

    let mut tx = s.read().await.unwrap();
    let all = ActionLogFilter { page: 0, size: 10, descending: true, ..Default::default() };
    let ops = |p: &Page<ActionLogEntry>| p.items.iter().map(|e| e.log.operation.clone()).collect::<Vec<_>>();

    // Newest first by default, ties by the newer id; the user's e-mail and company joined.
    let p = tx.action_log_page(&all).await.unwrap();
    assert_eq!(p.total_items, 6);
    assert_eq!(ops(&p), ["login", "create", "update", "expire_at_close", "cancel", "create"]);
    let first = &p.items[0];
    assert_eq!(first.log.action_log_id, ids[5]);
    assert_eq!((first.email.as_deref(), first.company_name.as_deref()), (Some("kai@kestrel.test"), Some("Kestrel")));
    assert_eq!(first.log.details, json!({"n": 5, "nested": {"list": [1, "two", null]}}));
    assert_eq!(first.log.created_at, t0() + Duration::seconds(4));
    let venue = &p.items[3];
    assert_eq!((venue.log.user_id, venue.email.as_deref(), venue.company_name.as_deref()), (None, None, None));

    // Pages: the total stays, the pages do not overlap.
    let page = |page, size| ActionLogFilter { page, size, ..all.clone() };
    let (p0, p1, p2) = (
        tx.action_log_page(&page(0, 4)).await.unwrap(),
        tx.action_log_page(&page(1, 4)).await.unwrap(),
        tx.action_log_page(&page(2, 4)).await.unwrap(),
    );
    assert_eq!((p0.total_items, p1.total_items, p2.total_items), (6, 6, 6));
    assert_eq!([p0.items.len(), p1.items.len(), p2.items.len()], [4, 2, 0]);
    assert_eq!(ops(&p1), ["cancel", "create"]);

    // Oldest first.
    let p = tx.action_log_page(&ActionLogFilter { descending: false, ..all.clone() }).await.unwrap();
    assert_eq!(p.items.iter().map(|e| e.log.action_log_id).collect::<Vec<_>>(), ids);

    // By e-mail: a part of it in any case; the venue's own rows (no user) never match.
    let by = |email: &str| ActionLogFilter { email: Some(email.into()), ..all.clone() };
    let p = tx.action_log_page(&by("KESTREL.T")).await.unwrap();
    assert_eq!((p.total_items, ops(&p)), (3, vec!["login".to_owned(), "create".into(), "cancel".into()]));
    assert_eq!(tx.action_log_page(&by("ada@halyard.test")).await.unwrap().total_items, 2);
    assert_eq!(tx.action_log_page(&by("nobody")).await.unwrap(), Page { items: vec![], total_items: 0 });
    // Characters that mean something to LIKE are plain text here.
    assert_eq!(tx.action_log_page(&by("%")).await.unwrap().total_items, 0);
    assert_eq!(tx.action_log_page(&by("_")).await.unwrap().total_items, 0);

    // By a column, ties newest first; the venue's rows sort as an empty e-mail.
    let sorted = |sort, descending| ActionLogFilter { sort, descending, ..all.clone() };
    let entities = |p: Page<ActionLogEntry>| p.items.into_iter().map(|e| e.log.entity).collect::<Vec<_>>();
    let p = tx.action_log_page(&sorted(ActionLogSort::Entity, false)).await.unwrap();
    assert_eq!(entities(p), ["company", "instrument", "order", "order", "session", "user"]);
    let p = tx.action_log_page(&sorted(ActionLogSort::Entity, false)).await.unwrap();
    assert_eq!(ops(&p)[2..4], ["expire_at_close".to_owned(), "cancel".into()]);
    let p = tx.action_log_page(&sorted(ActionLogSort::Operation, true)).await.unwrap();
    assert_eq!(ops(&p), ["update", "login", "expire_at_close", "create", "create", "cancel"]);
    assert_eq!(p.items[3].log.action_log_id, ids[4]);
    let emails = |p: Page<ActionLogEntry>| p.items.into_iter().map(|e| e.email).collect::<Vec<_>>();
    let p = tx.action_log_page(&sorted(ActionLogSort::Email, false)).await.unwrap();
    let (a, k) = (Some("ada@halyard.test".to_owned()), Some("kai@kestrel.test".to_owned()));
    assert_eq!(emails(p), [None, a.clone(), a.clone(), k.clone(), k.clone(), k.clone()]);
    let p = tx.action_log_page(&sorted(ActionLogSort::Email, true)).await.unwrap();
    assert_eq!(ops(&p), ["login", "create", "cancel", "update", "create", "expire_at_close"]);
}

async fn outbox_lifecycle<S: Store>(s: S) {
    let email = OutgoingEmail {
        message_id: "<m1@test>".into(),
        to: "ada@halyard.test".into(),
        template: EmailTemplate::PasswordReset {
            first_name: "Ada".into(),
            link: "http://x/reset-password?hash=abc".into(),
        },
    };
    let m = OutboxMessage {
        outbox_id: Uuid::now_v7(),
        email: email.clone(),
        created_at: t0(),
        sent_at: None,
        attempts: 0,
        last_error: None,
    };
    let mut tx = s.write().await.unwrap();
    tx.insert_outbox(&m).await.unwrap();
    tx.record_outbox_failure(m.outbox_id, "connection refused").await.unwrap();
    let got = tx.outbox(m.outbox_id).await.unwrap().unwrap();
    assert_eq!((got.attempts, got.last_error.as_deref(), got.sent_at), (1, Some("connection refused"), None));
    let redacted = OutgoingEmail { template: email.template.redacted(), ..email.clone() };
    tx.mark_outbox_sent(m.outbox_id, t0() + Duration::seconds(9), &redacted).await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = s.read().await.unwrap();
    let got = tx.outbox(m.outbox_id).await.unwrap().unwrap();
    assert_eq!(got.sent_at, Some(t0() + Duration::seconds(9)));
    assert_eq!(got.email, redacted);
    assert_eq!(got.email.message_id, "<m1@test>");
    assert_eq!(tx.outbox_messages(0, 5).await.unwrap().items.len(), 1);
}

/// A commit that queued FIX messages rings the sessions of those companies only, once it
/// committed: a transaction dropped unfinished rings none, and another company's
/// messages never wake a session.
async fn fix_outbox_rings_only_its_company_once_committed<S: Store>(s: S) {
    use upstairs_engine::fix::{FixReport, RefusedAnswer};
    let (c, _) = seeded(&s).await;
    let other = company("Bollard");
    let mut tx = s.write().await.unwrap();
    tx.insert_company(&other).await.unwrap();
    tx.commit().await.unwrap();
    let (mut mine, theirs) = (s.fix_bell().listen(c.company_id), s.fix_bell().listen(other.company_id));
    let message = |id: &str| FixOutboxMessage {
        fix_outbox_id: id.into(),
        company_id: c.company_id,
        report: FixReport::AnswerRefused(RefusedAnswer {
            ref_seq_num: 1,
            trade_report_id: id.into(),
            text: "Order already accepted".into(),
        }),
        created_at: t0(),
        sent_seq: None,
    };

    let mut tx = s.write().await.unwrap();
    tx.insert_fix_outbox(&message("dropped")).await.unwrap();
    drop(tx);
    assert!(!mine.has_changed().unwrap(), "a transaction that never committed rings no one");

    let mut tx = s.write().await.unwrap();
    tx.insert_fix_outbox(&message("m1")).await.unwrap();
    tx.insert_fix_outbox(&message("m2")).await.unwrap();
    assert!(!mine.has_changed().unwrap(), "not before the commit: the session would find nothing");
    tx.commit().await.unwrap();
    assert!(mine.has_changed().unwrap());
    mine.mark_unchanged();
    assert!(!theirs.has_changed().unwrap(), "another company's session sleeps on");
    let pending = s.single().await.unwrap().pending_fix_outbox(c.company_id, 10).await.unwrap();
    let ids: Vec<String> = pending.into_iter().map(|m| m.fix_outbox_id).collect();
    assert_eq!(ids, ["m1", "m2"]);
}

/// A frame filed moves the session's next number and marks the outbox message it carries
/// sent, in the one statement of `file_fix_message` (ADR 0030); filed again under its
/// number, it replaces the frame and never moves the number back.
async fn fix_frames_are_filed_in_one_statement<S: Store>(s: S) {
    use upstairs_engine::fix::{FixReport, RefusedAnswer};
    let (c, _) = seeded(&s).await;
    let report = |n: i64| {
        FixReport::AnswerRefused(RefusedAnswer {
            ref_seq_num: n,
            trade_report_id: format!("T{n}"),
            text: "Order already accepted".into(),
        })
    };
    let mut tx = s.write().await.unwrap();
    let mut session = tx.fix_session(c.company_id, t0()).await.unwrap();
    session.next_target_seq = 7;
    tx.update_fix_session(&session).await.unwrap();
    for id in ["r1", "r2"] {
        let m = FixOutboxMessage {
            fix_outbox_id: id.into(),
            company_id: c.company_id,
            report: report(if id == "r1" { 1 } else { 2 }),
            created_at: t0(),
            sent_seq: None,
        };
        tx.insert_fix_outbox(&m).await.unwrap();
    }
    tx.commit().await.unwrap();
    let file = |seq: i64, frame: &str, id: Option<&str>, at: i64| FiledFixMessage {
        company_id: c.company_id,
        seq,
        msg_type: "x".into(),
        frame: frame.as_bytes().to_vec(),
        fix_outbox_id: id.map(Into::into),
        created_at: t0() + Duration::seconds(at),
    };
    let state = || async {
        let mut tx = s.read().await.unwrap();
        let session = tx.read_fix_session(c.company_id).await.unwrap().unwrap();
        let pending: Vec<String> =
            tx.pending_fix_outbox(c.company_id, 10).await.unwrap().into_iter().map(|m| m.fix_outbox_id).collect();
        let frames: Vec<Vec<u8>> =
            tx.fix_messages(c.company_id, 1, 10, 10).await.unwrap().into_iter().map(|m| m.frame).collect();
        (session, pending, frames)
    };

    let (_, pending, _) = state().await;
    assert_eq!(pending, ["r1", "r2"]);
    let read = s.single().await.unwrap().pending_fix_outbox(c.company_id, 10).await.unwrap();
    assert_eq!(read[0].report, report(1), "the report reads back as written");

    s.file_fix_message(&file(1, "admin", None, 1)).await.unwrap();
    let (session, pending, frames) = state().await;
    assert_eq!((session.next_sender_seq, session.next_target_seq), (2, 7));
    assert_eq!(session.last_message_at, Some(t0() + Duration::seconds(1)));
    assert_eq!(pending, ["r1", "r2"], "a frame carrying no message marks none");
    assert_eq!(frames, [b"admin".to_vec()]);

    s.file_fix_message(&file(2, "first", Some("r1"), 2)).await.unwrap();
    let (session, pending, _) = state().await;
    assert_eq!(session.next_sender_seq, 3);
    assert_eq!(pending, ["r2"]);

    // Filed again under 2 (a filing whose success was not heard): the frame is replaced,
    // and the message it now carries is marked.
    s.file_fix_message(&file(2, "again", Some("r2"), 3)).await.unwrap();
    // An old number filed again: the next number does not go back.
    s.file_fix_message(&file(1, "admin2", None, 4)).await.unwrap();
    let (session, pending, frames) = state().await;
    assert_eq!((session.next_sender_seq, session.next_target_seq), (3, 7));
    assert!(pending.is_empty());
    assert_eq!(frames, [b"admin2".to_vec(), b"again".to_vec()]);
    // A frame naming a message sent already still moves the number, and nothing is
    // pending to mark.
    s.file_fix_message(&file(5, "late", Some("r1"), 5)).await.unwrap();
    let mut tx = s.write().await.unwrap();
    assert!(!tx.mark_fix_outbox_sent(c.company_id, "r1", 9, t0()).await.unwrap());
    assert!(!tx.mark_fix_outbox_sent(c.company_id, "r2", 9, t0()).await.unwrap());
    assert_eq!(tx.read_fix_session(c.company_id).await.unwrap().unwrap().next_sender_seq, 6);
}

fn timer(kind: &str, due: DateTime<Utc>, key: Option<&str>) -> Timer {
    Timer {
        timer_id: Uuid::now_v7(),
        kind: kind.into(),
        payload: json!({"k": kind}),
        due_at: due,
        dedupe_key: key.map(Into::into),
        attempts: 0,
    }
}

const ABC: &[&str] = &["a", "b", "c"];

async fn timers_claim_and_reschedule<S: Store>(s: S) {
    let now = t0();
    let due = timer("a", now - Duration::seconds(1), None);
    let later = timer("b", now + Duration::minutes(5), None);
    let mut tx = s.write().await.unwrap();
    assert!(tx.insert_timer(&due).await.unwrap());
    assert!(tx.insert_timer(&later).await.unwrap());
    assert!(tx.insert_timer(&timer("c", now + Duration::hours(1), Some("cleanup"))).await.unwrap());
    assert!(!tx.insert_timer(&timer("c", now, Some("cleanup"))).await.unwrap(), "dedupe key");
    tx.commit().await.unwrap();

    // Only the kinds asked for (a lane): "a" is due, but not of these.
    let mut tx = s.write().await.unwrap();
    assert!(tx.claim_due_timers(now, now + Duration::minutes(2), 10, &["b", "c"]).await.unwrap().is_empty());
    let claimed = tx.claim_due_timers(now, now + Duration::minutes(2), 10, ABC).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!((claimed[0].timer_id, claimed[0].attempts), (due.timer_id, 1));
    assert_eq!(claimed[0].payload, json!({"k": "a"}));

    // Held by the lease: not claimed again until it lapses.
    let mut tx = s.write().await.unwrap();
    assert!(
        tx.claim_due_timers(now + Duration::minutes(1), now + Duration::minutes(3), 10, ABC).await.unwrap().is_empty()
    );
    let again = tx.claim_due_timers(now + Duration::minutes(2), now + Duration::minutes(4), 10, ABC).await.unwrap();
    assert_eq!(again.iter().map(|t| (t.timer_id, t.attempts)).collect::<Vec<_>>(), [(due.timer_id, 2)]);
    // Renewing a lease: only the latest claim may, and the renewed lease holds.
    assert!(!tx.renew_timer_lease(due.timer_id, 1, now + Duration::minutes(9)).await.unwrap(), "an older claim");
    assert!(tx.renew_timer_lease(due.timer_id, 2, now + Duration::minutes(6)).await.unwrap());
    assert!(
        tx.claim_due_timers(now + Duration::minutes(4), now + Duration::minutes(7), 10, ABC).await.unwrap().is_empty(),
        "held by the renewed lease"
    );
    tx.reschedule_timer(due.timer_id, now + Duration::minutes(10)).await.unwrap();
    tx.delete_timer(later.timer_id).await.unwrap();
    tx.commit().await.unwrap();

    let mut tx = s.read().await.unwrap();
    let pending = tx.pending_timers().await.unwrap();
    assert_eq!(pending.iter().map(|t| t.kind.as_str()).collect::<Vec<_>>(), ["a", "c"]);
    assert_eq!(pending[0].due_at, now + Duration::minutes(10));
    drop(tx);

    // Bring forward moves only unheld timers of the kind.
    let mut tx = s.write().await.unwrap();
    assert_eq!(tx.bring_forward("a", now).await.unwrap(), 1);
    assert_eq!(tx.bring_forward("a", now).await.unwrap(), 0, "already due");
    let held = tx.claim_due_timers(now, now + Duration::minutes(2), 10, ABC).await.unwrap();
    assert_eq!(held.len(), 1);
    tx.reschedule_timer(held[0].timer_id, now + Duration::minutes(10)).await.unwrap();
    tx.claim_due_timers(now + Duration::minutes(10), now + Duration::minutes(12), 10, ABC).await.unwrap();
    assert_eq!(tx.bring_forward("a", now).await.unwrap(), 0, "held by a lease");
    tx.commit().await.unwrap();
}

/// Presence leases (ADR 0043): renewed per node, ended when a node's last session of a
/// holder closes, and each lapsed one taken once; a holder (a user, a company's FIX
/// session) is present while any node's lease holds.
/// A later cause of a deduplicated timer moves it later, never earlier.
async fn presence_leases_lapse_once<S: Store>(s: S) {
    let (c, u) = seeded(&s).await;
    let (u, other, fix) = (Holder::User(u.user_id), Holder::User(UserId::new()), Holder::Fix(c.company_id));
    let now = t0();
    let mut tx = s.write().await.unwrap();
    tx.renew_presence("n1", &[u, other, fix], now + Duration::seconds(15)).await.unwrap();
    tx.renew_presence("n2", &[u], now + Duration::seconds(15)).await.unwrap();
    tx.renew_presence("n1", &[u], now + Duration::seconds(20)).await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = s.write().await.unwrap();
    assert!(tx.present(u, now + Duration::seconds(16)).await.unwrap(), "n1's renewed lease");
    assert!(!tx.present(other, now + Duration::seconds(16)).await.unwrap());
    assert!(tx.present(fix, now).await.unwrap());
    assert!(!tx.present(Holder::Fix(upstairs_domain::CompanyId(u.parts().1)), now).await.unwrap(), "kinds apart");
    assert!(tx.take_lapsed_presence(now).await.unwrap().is_empty());
    // n1's sessions of `u` close: n2's lease still holds.
    tx.release_presence("n1", &[u], now + Duration::seconds(1)).await.unwrap();
    assert!(tx.present(u, now + Duration::seconds(1)).await.unwrap());
    let mut lapsed = tx.take_lapsed_presence(now + Duration::seconds(15)).await.unwrap();
    lapsed.sort();
    let mut want = vec![
        (u, now + Duration::seconds(1)),
        (u, now + Duration::seconds(15)),
        (other, now + Duration::seconds(15)),
        (fix, now + Duration::seconds(15)),
    ];
    want.sort();
    assert_eq!(lapsed, want);
    assert!(tx.take_lapsed_presence(now + Duration::seconds(15)).await.unwrap().is_empty(), "taken once");
    assert!(!tx.present(u, now + Duration::seconds(15)).await.unwrap());

    let key = "disconnect.cancel:x";
    assert!(tx.insert_timer(&timer("a", now + Duration::seconds(10), Some(key))).await.unwrap());
    tx.postpone_timer(key, now + Duration::seconds(25)).await.unwrap();
    tx.postpone_timer(key, now + Duration::seconds(12)).await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = s.read().await.unwrap();
    assert_eq!(tx.pending_timers().await.unwrap()[0].due_at, now + Duration::seconds(25), "later, never earlier");
}

/// Every band an instrument had (issue 29's scorecards): a window starts with the band in
/// force at its start; a second move at one instant keeps the last.
async fn band_history_is_kept<S: Store>(s: S) {
    let mut i = instrument("Euribor", "I", true, false, 0);
    let mut tx = s.write().await.unwrap();
    tx.insert_instrument(&i).await.unwrap();
    for (min, max, at) in
        [("-0.04", "-0.01", 0), ("-0.035", "-0.01", 60), ("-0.03", "-0.01", 120), ("-0.03", "-0.005", 120)]
    {
        i.min_tick_price = d(min);
        i.max_tick_price = d(max);
        tx.record_band(&i, t0() + Duration::seconds(at)).await.unwrap();
    }
    tx.commit().await.unwrap();
    let mut tx = s.read().await.unwrap();
    let at = |s: i64| t0() + Duration::seconds(s);
    let all = tx.band_history(i.instrument_id, at(-60), at(600)).await.unwrap();
    assert_eq!(
        all,
        [(at(0), d("-0.04"), d("-0.01")), (at(60), d("-0.035"), d("-0.01")), (at(120), d("-0.03"), d("-0.005"))]
    );
    let window = tx.band_history(i.instrument_id, at(90), at(100)).await.unwrap();
    assert_eq!(window, [(at(60), d("-0.035"), d("-0.01"))], "the band in force at the start");
    drop(tx);

    // Pruned before 90 s: the moves before go, but the band in force then stays.
    let mut tx = s.write().await.unwrap();
    assert_eq!(tx.prune_band_history(at(90)).await.unwrap(), 1);
    assert_eq!(tx.prune_band_history(at(90)).await.unwrap(), 0, "twice is once");
    tx.commit().await.unwrap();
    let mut tx = s.read().await.unwrap();
    let all = tx.band_history(i.instrument_id, at(-60), at(600)).await.unwrap();
    assert_eq!(all, [(at(60), d("-0.035"), d("-0.01")), (at(120), d("-0.03"), d("-0.005"))]);
    let window = tx.band_history(i.instrument_id, at(90), at(100)).await.unwrap();
    assert_eq!(window, [(at(60), d("-0.035"), d("-0.01"))], "still in force at 90 s");
}

async fn exchanges_round_trip<S: Store>(s: S) {
    use upstairs_domain::calendar::{Calendar, Holiday};
    let calendar = Calendar {
        time_zone: "Europe/Berlin".parse().unwrap(),
        holidays: vec![Holiday::parse("2026-12-24=Christmas Eve").unwrap(), Holiday::parse("2026-12-31").unwrap()],
        ..Calendar::default()
    };
    let eurex = Exchange { mic: "XEUR".into(), name: "Eurex".into(), calendar, created_at: t0(), updated_at: t0() };
    let mut tx = s.write().await.unwrap();
    tx.insert_instrument(&instrument("Euribor", "I", true, false, 0)).await.unwrap();
    tx.save_exchange(&Exchange { mic: "IFEU".into(), name: "ICE Futures Europe".into(), ..eurex.clone() })
        .await
        .unwrap();
    tx.save_exchange(&eurex).await.unwrap();
    tx.insert_timer(&timer("day.close", t0(), Some("day.close:XEUR"))).await.unwrap();
    tx.insert_timer(&timer("day.close", t0(), Some("day.close"))).await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = s.read().await.unwrap();
    let all = tx.exchanges().await.unwrap();
    let listed: Vec<(&str, i64)> = all.iter().map(|(e, n)| (e.mic.as_str(), *n)).collect();
    assert_eq!(listed, [("IFEU", 1), ("XEUR", 0)], "by MIC, with the instruments naming each");
    assert_eq!(all[1].0, eurex, "every field back, the holidays and the zone included");
    drop(tx);

    // Replaced in place (created_at kept as given), a close removed by its key, one deleted.
    let mut tx = s.write().await.unwrap();
    let later = Exchange { name: "Eurex Frankfurt".into(), updated_at: t0() + Duration::hours(1), ..eurex.clone() };
    tx.save_exchange(&later).await.unwrap();
    tx.delete_timers_of("day.close:XEUR").await.unwrap();
    assert!(tx.delete_exchange("IFEU").await.unwrap());
    assert!(!tx.delete_exchange("IFEU").await.unwrap(), "twice is once");
    tx.commit().await.unwrap();
    let mut tx = s.read().await.unwrap();
    assert_eq!(tx.exchange("XEUR").await.unwrap(), Some(later));
    assert_eq!(tx.exchange("IFEU").await.unwrap(), None);
    let keys: Vec<_> = tx.pending_timers().await.unwrap().into_iter().filter_map(|t| t.dedupe_key).collect();
    assert_eq!(keys, ["day.close"]);
}

async fn timers_are_claimed_once_under_concurrency<S: Store>(s: S) {
    let now = t0();
    let mut tx = s.write().await.unwrap();
    for _ in 0..40 {
        tx.insert_timer(&timer("job", now, None)).await.unwrap();
    }
    tx.commit().await.unwrap();
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            loop {
                let mut tx = s.write().await.unwrap();
                let c = tx.claim_due_timers(now, now + Duration::minutes(2), 3, &["job"]).await.unwrap();
                tx.commit().await.unwrap();
                if c.is_empty() {
                    return mine;
                }
                mine.extend(c.into_iter().map(|t| t.timer_id));
            }
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!((n, all.len()), (40, 40), "every timer claimed exactly once");
}

async fn uncommitted_writes_vanish<S: Store>(s: S) {
    let (c, _) = seeded(&s).await;
    {
        let mut tx = s.write().await.unwrap();
        tx.insert_user(&user(&c, "ghost@halyard.test")).await.unwrap();
        tx.insert_outbox(&OutboxMessage {
            outbox_id: Uuid::now_v7(),
            email: OutgoingEmail {
                message_id: "<ghost@test>".into(),
                to: "ghost@halyard.test".into(),
                template: EmailTemplate::AccountActivation { first_name: "G".into(), link: "l".into() },
            },
            created_at: t0(),
            sent_at: None,
            attempts: 0,
            last_error: None,
        })
        .await
        .unwrap();
        // dropped without commit
    }
    let mut tx = s.read().await.unwrap();
    assert!(tx.user_by_email("ghost@halyard.test").await.unwrap().is_none());
    assert!(tx.outbox_messages(0, 10).await.unwrap().items.is_empty());
}

fn d(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap()
}

async fn companies_with_brokers<S: Store>(s: S) {
    let north = company("Northgate");
    let baltic = company("Baltic");
    let mut lp = company("Meridian");
    lp.roles = vec!["liquidity-provider".into()];
    let mut firm = Company {
        ems_identifier: Some("EMS-HAL".into()),
        account: Some("ACC-1".into()),
        trade_confirmation_email: Some("confirm@halyard.test".into()),
        trade_confirmation_via_email_enabled: true,
        brokers: vec![
            CompanyRef { company_id: baltic.company_id, name: String::new() },
            CompanyRef { company_id: north.company_id, name: String::new() },
        ],
        default_broker: Some(CompanyRef { company_id: north.company_id, name: String::new() }),
        roles: vec![],
        ..Company::named("Halyard", t0())
    };
    let mut tx = s.write().await.unwrap();
    for c in [&north, &baltic, &lp, &firm] {
        tx.insert_company(c).await.unwrap();
    }
    tx.commit().await.unwrap();

    let mut tx = s.write().await.unwrap();
    let got = tx.company(firm.company_id).await.unwrap().unwrap();
    let names: Vec<&str> = got.brokers.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["Baltic", "Northgate"], "brokers keep their order and carry names");
    assert_eq!(got.default_broker.as_ref().map(|b| b.name.as_str()), Some("Northgate"));
    assert_eq!(got.ems_identifier.as_deref(), Some("EMS-HAL"));
    assert!(got.trade_confirmation_via_email_enabled);

    firm.brokers = vec![CompanyRef { company_id: north.company_id, name: String::new() }];
    firm.full_name = "Halyard Capital".into();
    tx.update_company(&firm).await.unwrap();
    let got = tx.company(firm.company_id).await.unwrap().unwrap();
    assert_eq!(got.brokers.len(), 1);
    assert_eq!(got.full_name, "Halyard Capital");
    firm.brokers = [&north, &baltic].map(|b| CompanyRef { company_id: b.company_id, name: String::new() }).to_vec();
    tx.update_company(&firm).await.unwrap();
    let got = tx.company(firm.company_id).await.unwrap().unwrap();
    let names: Vec<&str> = got.brokers.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["Northgate", "Baltic"], "read in the order given, in the company's own statement");

    let page = tx.companies(0, 2).await.unwrap();
    assert_eq!(page.total_items, 4);
    assert_eq!(page.items.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["Baltic", "Halyard"]);
    let page = tx.companies(1, 2).await.unwrap();
    assert_eq!(page.items.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["Meridian", "Northgate"]);
    let lps = tx.companies_of_type("liquidity-provider").await.unwrap();
    assert_eq!(lps.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["Meridian"]);
    assert!(matches!(tx.insert_company(&company("Baltic")).await, Err(StoreError::Unique(_))));
}

fn instrument(name: &str, exchange: &str, active: bool, sandbox: bool, created: i64) -> Instrument {
    Instrument {
        instrument_id: InstrumentId::new(),
        name: name.into(),
        term: "Dec26-Mar27".into(),
        description: String::new(),
        min_quantity: 500,
        tick_size: d("0.005"),
        exchange_tick_size: Some(d("0.0025")),
        exchange_id: exchange.into(),
        exchange: "ICE Futures Europe".into(),
        exchange_iso_code: "IFEU".into(),
        exchange_instrument_id: None,
        bbg_code: Some("ERZ6ERH7 Comdty".into()),
        country: "GB".into(),
        currency: "EUR".into(),
        min_tick_price: d("-0.035"),
        max_tick_price: d("0.015"),
        active,
        is_sandbox: sandbox,
        reversed_spread: false,
        band_seen_at: t0(),
        prices_stale_after: None,
        prices_stale: false,
        created_at: t0() + Duration::seconds(created),
        updated_at: t0(),
    }
}

async fn instruments_exact_filtered_sorted<S: Store>(s: S) {
    let a = instrument("Euribor 3M Dec26-Mar27", "IFEU", true, false, 1);
    let b = instrument("SONIA 3M Mar27-Jun27", "IFEU", true, false, 2);
    let c = instrument("Euro-Bund Dec26-Mar27", "XEUR", false, false, 3);
    let sb = instrument("Euribor 3M Jun27-Sep27", "IFEU", true, true, 4);
    let mut tx = s.write().await.unwrap();
    for i in [&a, &b, &c, &sb] {
        tx.insert_instrument(i).await.unwrap();
    }
    tx.commit().await.unwrap();
    let mut tx = s.write().await.unwrap();
    let got = tx.instrument(a.instrument_id).await.unwrap().unwrap();
    assert_eq!(got, a, "decimals come back exact");
    assert_eq!(got.min_tick_price.to_string(), "-0.035");

    let names = |p: Page<Instrument>| p.items.into_iter().map(|i| i.name).collect::<Vec<_>>();
    let all = InstrumentFilter { page: 0, size: 10, ..Default::default() };
    assert_eq!(tx.instruments(&all).await.unwrap().total_items, 4);
    let f = InstrumentFilter { name: Some("euribor".into()), ..all.clone() };
    assert_eq!(names(tx.instruments(&f).await.unwrap()), ["Euribor 3M Dec26-Mar27", "Euribor 3M Jun27-Sep27"]);
    let f = InstrumentFilter { name: Some("100%_".into()), ..all.clone() };
    assert_eq!(tx.instruments(&f).await.unwrap().total_items, 0, "no wildcard injection");
    let f = InstrumentFilter { exchange_id: Some("XEUR".into()), ..all.clone() };
    assert_eq!(names(tx.instruments(&f).await.unwrap()), ["Euro-Bund Dec26-Mar27"]);
    let f = InstrumentFilter { active: Some(true), is_sandbox: Some(false), ..all.clone() };
    assert_eq!(names(tx.instruments(&f).await.unwrap()), ["Euribor 3M Dec26-Mar27", "SONIA 3M Mar27-Jun27"]);
    let f = InstrumentFilter { sort: InstrumentSort::CreatedAt, descending: true, size: 2, ..all.clone() };
    let p = tx.instruments(&f).await.unwrap();
    assert_eq!(
        (p.total_items, names(p)),
        (4, vec!["Euribor 3M Jun27-Sep27".to_owned(), "Euro-Bund Dec26-Mar27".to_owned()])
    );

    let mut moved = a.clone();
    moved.min_tick_price = d("-0.030");
    moved.max_tick_price = d("0.020");
    moved.exchange_tick_size = None;
    tx.update_instrument(&moved).await.unwrap();
    let got = tx.instrument(a.instrument_id).await.unwrap().unwrap();
    assert_eq!((got.min_tick_price, got.max_tick_price, got.exchange_tick_size), (d("-0.03"), d("0.02"), None));
    tx.commit().await.unwrap();
}

async fn user_lists<S: Store>(s: S) {
    let (c, u) = seeded(&s).await;
    let other = company("Kestrel");
    let mut tx = s.write().await.unwrap();
    tx.insert_company(&other).await.unwrap();
    let mut k = user(&other, "kai@kestrel.test");
    k.active = false;
    tx.insert_user(&k).await.unwrap();
    tx.insert_user(&user(&c, "bob@halyard.test")).await.unwrap();
    let all = UserFilter { page: 0, size: 10, ..Default::default() };
    let emails = |p: Page<UserView>| p.items.into_iter().map(|v| v.user.email).collect::<Vec<_>>();
    assert_eq!(emails(tx.users(&all).await.unwrap()), ["ada@halyard.test", "bob@halyard.test", "kai@kestrel.test"]);
    let f = UserFilter { company_id: Some(c.company_id), ..all.clone() };
    assert_eq!(tx.users(&f).await.unwrap().total_items, 2);
    let f = UserFilter { email: Some("KESTREL".into()), ..all.clone() };
    assert_eq!(emails(tx.users(&f).await.unwrap()), ["kai@kestrel.test"]);
    let f = UserFilter { active: Some(false), ..all.clone() };
    assert_eq!(emails(tx.users(&f).await.unwrap()), ["kai@kestrel.test"]);
    let f = UserFilter { size: 1, page: 1, ..all.clone() };
    let p = tx.users(&f).await.unwrap();
    assert_eq!((p.total_items, emails(p)), (3, vec!["bob@halyard.test".to_owned()]));
    assert_eq!(tx.user(u.user_id).await.unwrap().unwrap().company_name, "Halyard");
}

async fn book_rows_sum_working_orders<S: Store>(s: S) {
    use upstairs_domain::order::{Direction, OrderState};
    use upstairs_domain::{OrderId, ParentOrderId};
    let (c, u) = seeded(&s).await;
    let other = company("Kestrel");
    let i = instrument("Euribor", "IFEU", true, false, 0);
    let mut tx = s.write().await.unwrap();
    tx.insert_company(&other).await.unwrap();
    let mut k = user(&other, "kai@kestrel.test");
    k.company_id = other.company_id;
    tx.insert_user(&k).await.unwrap();
    tx.insert_instrument(&i).await.unwrap();
    let parent = ParentOrder {
        parent_order_id: ParentOrderId::new(),
        company_id: c.company_id,
        created_by: u.user_id,
        instrument_id: i.instrument_id,
        direction: Direction::Buy,
        quantity: 100_000,
        broker_instructions: None,
        min_execution: None,
        state: ParentState::Active,
        created_at: t0(),
        updated_at: t0(),
    };
    tx.insert_parent_order(&parent).await.unwrap();
    let kparent = ParentOrder {
        parent_order_id: ParentOrderId::new(),
        company_id: other.company_id,
        created_by: k.user_id,
        ..parent.clone()
    };
    tx.insert_parent_order(&kparent).await.unwrap();
    let order = |p: &ParentOrder, price: &str, q: i64, iceberg: bool, state: OrderState| ChildOrder {
        order_id: OrderId::new(),
        parent_order_id: p.parent_order_id,
        company_id: p.company_id,
        created_by: p.created_by,
        instrument_id: i.instrument_id,
        direction: Direction::Buy,
        state,
        price: d(price).normalize(),
        quantity: q,
        iceberg,
        residual: true,
        min_execution: None,
        broker_id: c.company_id,
        created_at: t0(),
        updated_at: t0(),
    };
    let orders = [
        order(&parent, "-0.020", 1000, false, OrderState::Working),
        order(&parent, "-0.02", 2000, true, OrderState::Working),
        order(&parent, "-0.02", 700, false, OrderState::Cancelled),
        order(&kparent, "-0.02", 300, false, OrderState::Working),
        order(&kparent, "-0.025", 400, true, OrderState::Working),
    ];
    for o in &orders {
        tx.insert_order(o).await.unwrap();
    }
    assert_eq!(i.min_quantity, BLOCK);
    assert_eq!(
        levels(&mut tx, i.instrument_id, c.company_id).await,
        [("-0.025".into(), false, 400), ("-0.02".into(), false, 300), ("-0.02".into(), true, 1500)]
    );
    let view = tx.parent_order(parent.parent_order_id).await.unwrap().unwrap();
    assert_eq!((view.working, view.matched), (3000, 0));

    // Each resting iceberg written again after a new minimum block (as the engine does
    // when it changes the instrument's) moves its level by what it shows now.
    tx.update_instrument(&Instrument { min_quantity: 1500, ..i.clone() }).await.unwrap();
    for o in orders.iter().filter(|o| o.iceberg) {
        tx.update_order(o, o).await.unwrap();
    }
    assert_eq!(
        levels(&mut tx, i.instrument_id, c.company_id).await,
        [("-0.025".into(), false, 400), ("-0.02".into(), false, 300), ("-0.02".into(), true, 2500)]
    );
    tx.commit().await.unwrap();
}

/// The book's levels as (price, own, shown), lowest price first, others before own.
async fn levels<T: Tx>(
    tx: &mut T,
    instrument: InstrumentId,
    own: upstairs_domain::CompanyId,
) -> Vec<(String, bool, i64)> {
    let mut rows = tx.book_rows(instrument).await.unwrap();
    rows.sort_by_key(|r| (r.price, r.company_id == own));
    rows.iter().map(|r| (r.price.normalize().to_string(), r.company_id == own, r.shown)).collect()
}

/// The minimum block of the instruments these tests make (`instrument`).
const BLOCK: i64 = 500;

/// A parent order of `quantity` on a fresh instrument (min block 500), and a function
/// making its child orders.
async fn parent_with_orders<S: Store>(s: &S, quantity: i64) -> (ParentOrder, impl Fn(&str, i64, bool) -> ChildOrder) {
    use upstairs_domain::order::{Direction, OrderState};
    use upstairs_domain::{OrderId, ParentOrderId};
    let (c, u) = seeded(s).await;
    let i = instrument("Euribor", "IFEU", true, false, 0);
    let parent = ParentOrder {
        parent_order_id: ParentOrderId::new(),
        company_id: c.company_id,
        created_by: u.user_id,
        instrument_id: i.instrument_id,
        direction: Direction::Sell,
        quantity,
        broker_instructions: None,
        min_execution: None,
        state: ParentState::Active,
        created_at: t0(),
        updated_at: t0(),
    };
    let mut tx = s.write().await.unwrap();
    tx.insert_instrument(&i).await.unwrap();
    tx.insert_parent_order(&parent).await.unwrap();
    tx.commit().await.unwrap();
    let p = parent.clone();
    let order = move |price: &str, q: i64, iceberg: bool| ChildOrder {
        order_id: OrderId::new(),
        parent_order_id: p.parent_order_id,
        company_id: p.company_id,
        created_by: p.created_by,
        instrument_id: p.instrument_id,
        direction: p.direction,
        state: OrderState::Working,
        price: d(price).normalize(),
        quantity: q,
        iceberg,
        residual: true,
        min_execution: None,
        broker_id: c.company_id,
        created_at: t0(),
        updated_at: t0(),
    };
    (parent, order)
}

async fn order_writes_keep_counters_and_levels<S: Store>(s: S) {
    use upstairs_domain::order::OrderState;
    let (parent, order) = parent_with_orders(&s, 10_000).await;
    let (id, own) = (parent.instrument_id, parent.company_id);
    let mut tx = s.write().await.unwrap();
    let a = order("-0.02", 1000, false);
    let b = order("-0.02", 2000, true);
    tx.insert_order(&a).await.unwrap();
    tx.insert_order(&b).await.unwrap();
    assert_eq!(levels(&mut tx, id, own).await, [("-0.02".into(), true, 1500)]);

    // Moving a's price and size moves its level; the emptied level disappears.
    let mut a2 = a.clone();
    a2.price = d("-0.015");
    a2.quantity = 1200;
    tx.update_order(&a, &a2).await.unwrap();
    assert_eq!(levels(&mut tx, id, own).await, [("-0.02".into(), true, 500), ("-0.015".into(), true, 1200)]);
    let mut b2 = b.clone();
    b2.state = OrderState::Matched;
    tx.update_order(&b, &b2).await.unwrap();
    assert_eq!(levels(&mut tx, id, own).await, [("-0.015".into(), true, 1200)]);
    let view = tx.parent_order(parent.parent_order_id).await.unwrap().unwrap();
    assert_eq!((view.working, view.matched), (1200, 2000));
    let mut a3 = a2.clone();
    a3.state = OrderState::Cancelled;
    tx.update_order(&a2, &a3).await.unwrap();
    assert!(levels(&mut tx, id, own).await.is_empty());
    let view = tx.parent_order(parent.parent_order_id).await.unwrap().unwrap();
    assert_eq!((view.working, view.matched), (0, 2000));

    // A take's read of the side it faces: working orders only, other companies' only,
    // oldest first, none priced beyond the taker's limit (sells above it for a buy; an
    // equal price written otherwise is within), each with its creator's auto-answer; none
    // through a parent of another company than the caller's, or through a seller.
    let c = order("-0.01", 700, false);
    tx.insert_order(&c).await.unwrap();
    let taker = company("Kestrel");
    let mut trader = user(&taker, "bo@kestrel.test");
    trader.auto_accept = Some(AutoAccept::Instant);
    tx.insert_company(&taker).await.unwrap();
    tx.insert_user(&trader).await.unwrap();
    let buying = ParentOrder {
        parent_order_id: upstairs_domain::ParentOrderId::new(),
        company_id: taker.company_id,
        created_by: trader.user_id,
        direction: parent.direction.opposite(),
        ..parent.clone()
    };
    tx.insert_parent_order(&buying).await.unwrap();
    let side = |f: &FacingOrder| (f.order.order_id, f.order.state, f.auto_accept);
    let (them, me) = (buying.parent_order_id, taker.company_id);
    let got = tx.orders_facing(them, me, d("-0.0100"), None).await.unwrap();
    assert_eq!(got.iter().map(side).collect::<Vec<_>>(), vec![(c.order_id, OrderState::Working, None)]);
    assert!(tx.orders_facing(them, me, d("-0.015"), None).await.unwrap().is_empty());
    assert!(tx.orders_facing(them, own, d("0"), None).await.unwrap().is_empty());
    assert!(tx.orders_facing(parent.parent_order_id, own, d("-1"), None).await.unwrap().is_empty());
    // The best price for the taker first (the lowest sell for a buy), then the oldest; at
    // most `most` of them.
    let later = |n: i64, o: ChildOrder| ChildOrder { created_at: t0() + Duration::seconds(n), ..o };
    let (d1, d2) = (later(2, order("-0.02", 500, false)), later(1, order("-0.02", 600, false)));
    tx.insert_order(&d1).await.unwrap();
    tx.insert_order(&d2).await.unwrap();
    let ids_of = |v: Vec<FacingOrder>| v.into_iter().map(|f| f.order.order_id).collect::<Vec<_>>();
    let all = tx.orders_facing(them, me, d("-0.01"), None).await.unwrap();
    assert_eq!(ids_of(all), [d2.order_id, d1.order_id, c.order_id]);
    assert_eq!(ids_of(tx.orders_facing(them, me, d("-0.01"), Some(2)).await.unwrap()), [d2.order_id, d1.order_id]);
    for o in [&d1, &d2] {
        tx.update_order(o, &ChildOrder { state: OrderState::Cancelled, ..o.clone() }).await.unwrap();
    }
    // A seller faces the buys at or above its limit, with their creators' preference.
    let mut bid = order("-0.03", 500, false);
    bid = ChildOrder {
        parent_order_id: them,
        company_id: me,
        created_by: trader.user_id,
        direction: buying.direction,
        ..bid
    };
    tx.insert_order(&bid).await.unwrap();
    let got = tx.orders_facing(parent.parent_order_id, own, d("-0.03"), None).await.unwrap();
    assert_eq!(
        got.iter().map(side).collect::<Vec<_>>(),
        vec![(bid.order_id, OrderState::Working, Some(AutoAccept::Instant))]
    );
    assert!(tx.orders_facing(parent.parent_order_id, own, d("-0.025"), None).await.unwrap().is_empty());
    // The highest buy first for a seller, however new.
    let higher = ChildOrder {
        order_id: upstairs_domain::OrderId::new(),
        price: d("-0.02").normalize(),
        created_at: t0() + Duration::seconds(5),
        ..bid.clone()
    };
    tx.insert_order(&higher).await.unwrap();
    let best = tx.orders_facing(parent.parent_order_id, own, d("-0.03"), Some(1)).await.unwrap();
    assert_eq!(
        best.iter().map(side).collect::<Vec<_>>(),
        vec![(higher.order_id, OrderState::Working, Some(AutoAccept::Instant))]
    );
    tx.update_order(&higher, &ChildOrder { state: OrderState::Cancelled, ..higher.clone() }).await.unwrap();

    // A take's locks: its own parent only when the caller's, the others only when not.
    let ids = |v: Vec<ParentOrderView>| v.into_iter().map(|v| v.parent.parent_order_id).collect::<Vec<_>>();
    let both = std::collections::BTreeSet::from([parent.parent_order_id]);
    let mut expect = vec![them, parent.parent_order_id];
    expect.sort();
    assert_eq!(ids(tx.lock_take_parents(me, them, &both).await.unwrap()), expect);
    // Read without a lock, in id order, with their counters; an unknown id is left out.
    let read = [them, parent.parent_order_id, upstairs_domain::ParentOrderId::new()].into_iter().collect();
    let views = tx.parent_orders_by_id(&read).await.unwrap();
    assert_eq!(ids(views.clone()), expect);
    for v in &views {
        assert_eq!(Some(v), tx.parent_order(v.parent.parent_order_id).await.unwrap().as_ref());
    }
    assert!(tx.parent_orders_by_id(&Default::default()).await.unwrap().is_empty());
    assert_eq!(
        ids(tx.lock_take_parents(own, them, &both).await.unwrap()),
        Vec::<upstairs_domain::ParentOrderId>::new()
    );
    assert_eq!(ids(tx.lock_take_parents(me, them, &Default::default()).await.unwrap()), vec![them]);
    let mine = std::collections::BTreeSet::from([them]);
    assert_eq!(ids(tx.lock_take_parents(me, them, &mine).await.unwrap()), vec![them]);
    tx.update_order(&bid, &ChildOrder { state: OrderState::Cancelled, ..bid.clone() }).await.unwrap();

    // Several orders read, and several parents' states written, each in one statement.
    let mut got = tx.orders_by_id(&[a.order_id, b.order_id, upstairs_domain::OrderId::new()]).await.unwrap();
    got.sort_by_key(|o| o.quantity);
    assert_eq!(got, vec![a3, b2]);
    assert!(tx.orders_by_id(&[]).await.unwrap().is_empty());
    let other = ParentOrder { parent_order_id: upstairs_domain::ParentOrderId::new(), ..parent.clone() };
    tx.insert_parent_order(&other).await.unwrap();
    let at = t0() + Duration::hours(1);
    let want = [(parent.parent_order_id, ParentState::Filled), (other.parent_order_id, ParentState::Cancelled)];
    tx.update_parent_order_states(&want, at).await.unwrap();
    for (id, state) in want {
        let v = tx.parent_order(id).await.unwrap().unwrap();
        assert_eq!((v.parent.state, v.parent.updated_at), (state, at));
    }
    tx.update_parent_order_states(&[], at).await.unwrap();
    tx.commit().await.unwrap();
}

/// The book's levels show what `shown_quantity` says for every kind of order, as orders
/// are written and when they are written again with another minimum block: the rule is
/// the domain's alone, and the levels are sums of what each row shows.
async fn levels_follow_the_domain_display_rule<S: Store>(s: S) {
    use upstairs_domain::order::shown_quantity;
    let (parent, order) = parent_with_orders(&s, 1_000_000).await;
    let (id, own) = (parent.instrument_id, parent.company_id);
    // (price, quantity, iceberg): below, at and above the block of 500, and one lot.
    let cases = [
        ("-0.03", 1, true),
        ("-0.025", 499, true),
        ("-0.02", 500, true),
        ("-0.015", 501, true),
        ("-0.01", 10_000, true),
        ("-0.005", 499, false),
        ("0", 10_000, false),
    ];
    let mut tx = s.write().await.unwrap();
    let orders: Vec<_> = cases.iter().map(|&(price, quantity, iceberg)| order(price, quantity, iceberg)).collect();
    for o in &orders {
        tx.insert_order(o).await.unwrap();
    }
    let expect = |block: i64| -> Vec<(String, bool, i64)> {
        cases.iter().map(|&(p, q, ice)| (p.to_owned(), true, shown_quantity(q, ice, block))).collect()
    };
    assert_eq!(levels(&mut tx, id, own).await, expect(500));
    tx.commit().await.unwrap();
    // Each order written again one by one, or all in one statement (`show_by_block`).
    for (n, block) in [1, 499, 501, 20_000, 500].into_iter().enumerate() {
        let mut tx = s.write().await.unwrap();
        let i = tx.lock_instrument(id).await.unwrap().unwrap();
        tx.update_instrument(&Instrument { min_quantity: block, ..i }).await.unwrap();
        if n % 2 == 0 {
            for o in &orders {
                tx.update_order(o, o).await.unwrap();
            }
        } else {
            assert_eq!(tx.show_by_block(&orders).await.unwrap(), []);
        }
        assert_eq!(levels(&mut tx, id, own).await, expect(block), "min block {block}");
        tx.commit().await.unwrap();
    }
    // An order changed since it was read is not written, and is named.
    let mut tx = s.write().await.unwrap();
    let i = tx.lock_instrument(id).await.unwrap().unwrap();
    tx.update_instrument(&Instrument { min_quantity: 1, ..i }).await.unwrap();
    let read_before = ChildOrder { quantity: 9_000, ..orders[4].clone() };
    let (stale, current) = (read_before.order_id, orders[3].clone());
    assert_eq!(tx.show_by_block(&[read_before, current]).await.unwrap(), [stale]);
    let shown: Vec<i64> = levels(&mut tx, id, own).await.into_iter().map(|(_, _, shown)| shown).collect();
    assert_eq!(shown, [1, 499, 500, 1, 500, 499, 10_000], "only the current order shows by the new block");
}

/// The audit row of a new order, as the order path writes it.
fn create_log(o: &ChildOrder) -> ActionLog {
    ActionLog {
        action_log_id: Uuid::now_v7(),
        entity: "order".into(),
        entity_id: Some(o.order_id.0),
        operation: "create".into(),
        user_id: Some(o.created_by),
        created_at: t0(),
        details: json!({"quantity": o.quantity}),
        keyed: None,
    }
}

/// ADR 0057: a resting iceberg is shown by the block the write holds. The order path's
/// batch refuses one shown with a block that is no longer the instrument's (the engine
/// then reads the instrument again); an order that shows the same whatever the block goes
/// in. A transaction's own change of block is what its later writes show by.
async fn an_iceberg_shows_by_the_block_it_is_written_with<S: Store>(s: S) {
    let (parent, order) = parent_with_orders(&s, 100_000).await;
    let (id, own) = (parent.instrument_id, parent.company_id);
    // At once, so that the writer may take several in one batch.
    let orders = [
        (order("-0.03", 2000, true), 400, false),
        (order("-0.025", 2000, true), BLOCK, true),
        (order("-0.02", 2000, false), 400, true),
    ];
    let writes: Vec<_> = orders
        .iter()
        .map(|(o, block, _)| {
            let (s, o, block) = (s.clone(), o.clone(), *block);
            tokio::spawn(async move { s.insert_order_audited(&o, block, ParentState::Active, &create_log(&o)).await })
        })
        .collect();
    for ((o, block, written), w) in orders.iter().zip(writes) {
        assert_eq!(w.await.unwrap().unwrap(), *written, "{} of {} shown with {block}", o.price, o.quantity);
    }
    let mut tx = s.write().await.unwrap();
    assert!(tx.order(orders[0].0.order_id).await.unwrap().is_none(), "nothing written of the refused one");
    assert_eq!(levels(&mut tx, id, own).await, [("-0.025".into(), true, 500), ("-0.02".into(), true, 2000)]);
    // The transaction's own new block: what it writes next shows by it, read afresh.
    assert_eq!(tx.hold_block(id).await.unwrap(), BLOCK);
    let i = tx.lock_instrument(id).await.unwrap().unwrap();
    tx.update_instrument(&Instrument { min_quantity: 700, ..i }).await.unwrap();
    tx.insert_order(&order("-0.01", 2000, true)).await.unwrap();
    assert_eq!(tx.hold_block(id).await.unwrap(), 700);
    assert_eq!(levels(&mut tx, id, own).await.last().unwrap(), &("-0.01".to_owned(), true, 700));
    tx.commit().await.unwrap();
}

/// ADR 0057 on PostgreSQL, where transactions overlap: a change of block and a write that
/// holds the block wait for each other, so no iceberg is written with a block that
/// changed while it was being written. `waiting` polls until a statement of `like` waits
/// for a lock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_of_block_and_an_iceberg_write_wait_for_each_other() {
    let s = fresh_postgres().await;
    // The statements like `like` waiting for a lock now.
    let queued = |like: &'static str| {
        let pool = s.pool().clone();
        async move {
            sqlx::query_scalar::<_, i64>(
                "select count(*) from pg_stat_activity where wait_event_type = 'Lock' and query like $1",
            )
            .bind(like)
            .fetch_one(&pool)
            .await
            .unwrap()
        }
    };
    let waiting = |like: &'static str| async move {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while queued(like).await == 0 {
            assert!(std::time::Instant::now() < deadline, "no statement like {like} waited for a lock");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    let (parent, order) = parent_with_orders(&s, 100_000).await;
    let id = parent.instrument_id;
    async fn change(s: &upstairs_store::PgStore, id: InstrumentId, block: i64) -> upstairs_store::postgres::PgTx {
        let mut tx = s.write().await.unwrap();
        let i = tx.lock_instrument(id).await.unwrap().unwrap();
        tx.update_instrument(&Instrument { min_quantity: block, ..i }).await.unwrap();
        tx
    }
    // A change of block committed in a task of its own, and an iceberg shown with `block`
    // written through the order path's batch in another.
    let change_later = |block: i64| {
        let s = s.clone();
        tokio::spawn(async move { change(&s, id, block).await.commit().await.unwrap() })
    };
    let write_later = |o: &ChildOrder, block: i64| {
        let (s, o) = (s.clone(), o.clone());
        tokio::spawn(async move { s.insert_order_audited(&o, block, ParentState::Active, &create_log(&o)).await })
    };

    // A change made first: the write's hold waits for its commit, then reads the new block.
    let changing = change(&s, id, 200).await;
    let hold = tokio::spawn({
        let s = s.clone();
        async move {
            let mut tx = s.write().await.unwrap();
            tx.hold_block(id).await.unwrap()
        }
    });
    waiting("%from instrument_block where instrument_id = $1 and instrument_block_held%").await;
    changing.commit().await.unwrap();
    assert_eq!(hold.await.unwrap(), 200);

    // The order path's batch, the same: it waits, then refuses the iceberg shown with 200.
    let changing = change(&s, id, 300).await;
    let iceberg = order("-0.02", 2000, true);
    let write = write_later(&iceberg, 200);
    waiting("with v as (select * from unnest(%").await;
    changing.commit().await.unwrap();
    assert!(!write.await.unwrap().unwrap(), "the iceberg shown with the old block is refused");

    // A write that holds the block first: the change waits until the write commits, so
    // the change then finds the iceberg the write put in.
    let mut tx = s.write().await.unwrap();
    assert_eq!(tx.hold_block(id).await.unwrap(), 300);
    let changing = change_later(800);
    waiting("update instrument set %").await;
    tx.insert_order(&iceberg).await.unwrap();
    assert!(!changing.is_finished());
    tx.commit().await.unwrap();
    changing.await.unwrap();
    let mut tx = s.read().await.unwrap();
    assert_eq!(levels(&mut tx, id, parent.company_id).await, [("-0.02".into(), true, 300)]);
    drop(tx);

    // A stream of writes holding the block does not hold a change off (ADR 0064): the
    // holds asked for while the change waits wait behind it, so that it waits only for
    // the hold before it, and then each reads the new block (a write of an iceberg shown
    // with the old one is refused).
    let mut first = s.write().await.unwrap();
    assert_eq!(first.hold_block(id).await.unwrap(), 800);
    let changing = change_later(900);
    waiting("update instrument set %").await;
    let later = tokio::spawn({
        let s = s.clone();
        async move {
            let mut tx = s.write().await.unwrap();
            let block = tx.hold_block(id).await.unwrap();
            tx.commit().await.unwrap();
            block
        }
    });
    let write = write_later(&order("-0.02", 2000, true), 800);
    // Both wait (the row lock alone let them in beside the first hold).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while queued("%from instrument_block where instrument_id = $1 and instrument_block_held%").await
        + queued("with v as (select * from unnest(%").await
        < 2
    {
        assert!(!later.is_finished(), "a hold asked for while the change waits went in before it");
        assert!(!write.is_finished(), "an iceberg write while the change waits went in before it");
        assert!(std::time::Instant::now() < deadline, "the holds after the change did not wait for it");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(!changing.is_finished());
    first.commit().await.unwrap();
    changing.await.unwrap();
    assert_eq!(later.await.unwrap(), 900, "the hold after the change reads the new block");
    assert!(!write.await.unwrap().unwrap(), "the iceberg shown with the old block is refused");

    // A band move, the feed's touch and any other change of the instrument but its block
    // never wait for a write holding the block (ADR 0060): a stream of such writes would
    // otherwise hold them off for as long as it lasts.
    let mut holding = s.write().await.unwrap();
    assert_eq!(holding.hold_block(id).await.unwrap(), 900);
    let moved = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        let mut tx = s.write().await.unwrap();
        let i = tx.lock_instrument(id).await.unwrap().unwrap();
        let band = (i.min_tick_price - Decimal::ONE, i.max_tick_price - Decimal::ONE);
        tx.update_instrument(&Instrument { min_tick_price: band.0, max_tick_price: band.1, ..i }).await.unwrap();
        tx.commit().await.unwrap();
        assert!(s.touch_band(id, band.0, band.1, Utc::now()).await.unwrap());
    })
    .await;
    assert!(moved.is_ok(), "the band move waited for the iceberg write's hold");
    holding.commit().await.unwrap();
}

/// The migration that shows each resting iceberg by its block again and rebuilds every
/// book level from the rows (PostgreSQL 0040, SQLite 0036), run again on a book whose
/// iceberg and levels drifted: the levels are what the rule shows again.
async fn levels_are_rebuilt_from_rows<S: Store, F: std::future::Future<Output = ()>>(
    s: S,
    migration: &'static str,
    run: impl Fn(&'static str) -> F,
) {
    let (parent, order) = parent_with_orders(&s, 100_000).await;
    let (id, own) = (parent.instrument_id, parent.company_id);
    let mut tx = s.write().await.unwrap();
    for o in [order("-0.02", 2000, true), order("-0.02", 700, false), order("-0.01", 900, false)] {
        tx.insert_order(&o).await.unwrap();
    }
    let cancelled = order("-0.03", 800, false);
    tx.insert_order(&cancelled).await.unwrap();
    tx.update_order(
        &cancelled,
        &ChildOrder { state: upstairs_domain::order::OrderState::Cancelled, ..cancelled.clone() },
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    let rows = [("-0.02".to_owned(), true, BLOCK + 700), ("-0.01".to_owned(), true, 900)];
    let mut tx = s.read().await.unwrap();
    assert_eq!(levels(&mut tx, id, own).await, rows);
    drop(tx);
    run("update child_order set shown = 1 where iceberg and rests").await;
    run("update book_level set shown = shown + 7").await;
    run("insert into book_level (instrument_id, direction, price, company_id, shown) \
         select instrument_id, direction, '-0.03', company_id, 800 from book_level limit 1")
    .await;
    let mut tx = s.read().await.unwrap();
    assert_ne!(levels(&mut tx, id, own).await, rows, "the levels drifted");
    drop(tx);
    run(migration).await;
    let mut tx = s.read().await.unwrap();
    assert_eq!(levels(&mut tx, id, own).await, rows);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn levels_are_rebuilt_from_rows_on_sqlite() {
    let s = fresh_sqlite().await;
    let pool = s.pool().clone();
    let run = |sql: &'static str| {
        let pool = pool.clone();
        async move {
            sqlx::raw_sql(sql).execute(&pool).await.unwrap();
        }
    };
    levels_are_rebuilt_from_rows(s, include_str!("../migrations/sqlite/0036_book_levels_from_rows.sql"), run).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn levels_are_rebuilt_from_rows_on_postgres() {
    let s = fresh_postgres().await;
    let pool = s.pool().clone();
    let run = |sql: &'static str| {
        let pool = pool.clone();
        async move {
            sqlx::raw_sql(sql).execute(&pool).await.unwrap();
        }
    };
    levels_are_rebuilt_from_rows(s, include_str!("../migrations/postgres/0040_book_levels_from_rows.sql"), run).await;
}

/// The order writers plan their batch once per connection (ADR 0059): left to choose,
/// PostgreSQL planned it again for every batch, a custom plan for its arrays' sizes looking
/// cheaper than the generic one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn order_batches_are_planned_once_on_postgres() {
    let s = fresh_postgres().await;
    let (_, order) = parent_with_orders(&s, 1_000_000).await;
    const ORDERS: i64 = 12;
    for n in 0..ORDERS {
        let o = order("-0.02", 1 + n, false);
        assert!(s.insert_order_audited(&o, BLOCK, ParentState::Active, &create_log(&o)).await.unwrap());
    }
    // Every writer connection at once, so that each is asked what it planned: once all are
    // back in the pool (a connection returns after its batch is answered), none is opened.
    let writers = s.order_writers();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while writers.num_idle() < writers.size() as usize {
        assert!(std::time::Instant::now() < deadline, "the writers' connections did not come back");
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let mut held = Vec::new();
    for _ in 0..writers.size() {
        held.push(writers.acquire().await.unwrap());
    }
    let (mut generic, mut custom) = (0, 0);
    for conn in &mut held {
        let (g, c): (i64, i64) = sqlx::query_as(
            "select coalesce(sum(generic_plans), 0)::int8, coalesce(sum(custom_plans), 0)::int8 \
             from pg_prepared_statements where statement like 'with v as (select * from unnest(%'",
        )
        .fetch_one(&mut **conn)
        .await
        .unwrap();
        (generic, custom) = (generic + g, custom + c);
    }
    assert_eq!((generic, custom), (ORDERS, 0), "(generic, custom) plans of the order batch");
}

/// A take's read of the side it faces walks `child_order_facing` best first and stops at
/// what it asks for, however deep the side (ADR 0062): it used to read and sort every
/// working order of the instrument (or, planned generically, of every instrument).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_take_s_read_stops_at_what_it_asks_for_on_postgres() {
    use upstairs_domain::ParentOrderId;
    let s = fresh_postgres().await;
    let (parent, order) = parent_with_orders(&s, 1_000_000).await;
    let taker = company("Kestrel");
    let trader = user(&taker, "bo@kestrel.test");
    let buying = ParentOrder {
        parent_order_id: ParentOrderId::new(),
        company_id: taker.company_id,
        created_by: trader.user_id,
        direction: parent.direction.opposite(),
        ..parent.clone()
    };
    let mut tx = s.write().await.unwrap();
    tx.insert_company(&taker).await.unwrap();
    tx.insert_user(&trader).await.unwrap();
    tx.insert_parent_order(&buying).await.unwrap();
    const DEPTH: i64 = 200;
    let mut best = Vec::new();
    for n in 0..DEPTH {
        let o = ChildOrder {
            created_at: t0() + Duration::seconds(n),
            ..order(if n % 2 == 0 { "-0.01" } else { "-0.02" }, 1, false)
        };
        tx.insert_order(&o).await.unwrap();
        if n % 2 == 1 && best.len() < 3 {
            best.push(o.order_id);
        }
    }
    let got = tx.orders_facing(buying.parent_order_id, taker.company_id, d("-0.01"), Some(3)).await.unwrap();
    assert_eq!(got.iter().map(|f| f.order.order_id).collect::<Vec<_>>(), best);
    tx.commit().await.unwrap();

    let plan: serde_json::Value = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "explain (analyze, format json) {}",
        upstairs_store::postgres::ORDERS_FACING.as_str()
    )))
    .bind(buying.parent_order_id.0)
    .bind(taker.company_id.0)
    .bind(d("-0.01"))
    .bind(3_i64)
    .fetch_one(s.pool())
    .await
    .unwrap();
    fn scans<'a>(node: &'a serde_json::Value, out: &mut Vec<&'a serde_json::Value>) {
        if node["Relation Name"] == "child_order" {
            out.push(node);
        }
        for child in node["Plans"].as_array().into_iter().flatten() {
            scans(child, out);
        }
    }
    let mut found = Vec::new();
    scans(&plan[0]["Plan"], &mut found);
    let read: Vec<_> = found.iter().map(|n| (n["Index Name"].as_str(), n["Actual Rows"].as_i64())).collect();
    assert_eq!(
        read,
        [(Some("child_order_facing"), Some(3))],
        "the scans of child_order, out of {DEPTH} working orders"
    );
}

/// The index by which the generic plan of `statement` reads the rows it writes, executed
/// with `args`: planned as a long-lived connection plans it after a few calls, on a table
/// as young as it was then.
async fn generic_plan_index(s: &upstairs_store::postgres::PgStore, statement: &str, args: &str) -> serde_json::Value {
    generic_plan(s, statement, args).await["Plans"][0]["Index Name"].clone()
}

/// The generic plan PostgreSQL makes of `statement` (run with `args`) on `s`'s tables.
async fn generic_plan(s: &upstairs_store::postgres::PgStore, statement: &str, args: &str) -> serde_json::Value {
    let mut tx = s.pool().begin().await.unwrap();
    sqlx::query("set local plan_cache_mode = force_generic_plan").execute(&mut *tx).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!("prepare probed as {statement}"))).execute(&mut *tx).await.unwrap();
    let explain = format!("explain (format json) execute probed({args})");
    let plan: serde_json::Value = sqlx::query_scalar(sqlx::AssertSqlSafe(explain)).fetch_one(&mut *tx).await.unwrap();
    sqlx::query("deallocate probed").execute(&mut *tx).await.unwrap();
    tx.rollback().await.unwrap();
    plan[0]["Plan"].clone()
}

/// A user's read looks its company's name up by key: joined, a plan made without
/// statistics hashed every company for each read (ADR 0065).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_read_looks_its_company_up_by_key_on_postgres() {
    let s = fresh_postgres().await;
    let _ = parent_with_orders(&s, 1).await;
    let statement = format!("{} where u.user_id in ($1, $2)", upstairs_store::postgres::USER_SELECT);
    let none = "'00000000-0000-0000-0000-000000000000'";
    let plan = generic_plan(&s, &statement, &format!("{none}, {none}")).await.to_string();
    assert!(plan.contains("company_pkey") && !plan.contains("Hash"), "a user read: {plan}");
}

/// A write of one row by its key finds it by its key however its plan was made (ADR 0063).
/// Planned generically while the tables were young, without statistics (autovacuum is off
/// in CI and the bench), an order's update scanned `child_order_state_created` for every
/// order in the state and checked each one's key (5,000 rows a call in the mixed load),
/// and a FIX frame marked sent scanned its company's whole unsent backlog.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_by_key_finds_its_row_by_its_key_on_postgres() {
    let s = fresh_postgres().await;
    let (_, order) = parent_with_orders(&s, 1_000_000).await;
    let mut tx = s.write().await.unwrap();
    let mut orders = Vec::new();
    for _ in 0..20 {
        let o = order("-0.01", 1, false);
        tx.insert_order(&o).await.unwrap();
        orders.push(o);
    }
    tx.commit().await.unwrap();
    let args = format!(
        "'WORKING', -0.01, 1, false, false, now(), '{}', 'WORKING', -0.01, 1, false, 1, 0, true, null, 1",
        orders[7].order_id.0
    );
    let index = generic_plan_index(&s, upstairs_store::postgres::UPDATE_ORDER, &args).await;
    assert_eq!(index, "child_order_pkey", "an order's update");
    let args = format!("1, now(), '{}', 'frame-7'", orders[7].company_id.0);
    let index = generic_plan_index(&s, upstairs_store::postgres::MARK_FIX_OUTBOX_SENT, &args).await;
    assert_eq!(index, "fix_outbox_pkey", "a FIX frame marked sent");
}

/// The kill switch is in both schemas (ADR 0021): whatever statement writes it, a stopped
/// company's new working order is refused with the switch's name, and one without working
/// quantity (an RFQ's matched leg) is not.
async fn database_refuses_a_stopped_company_s_orders<S: Store>(s: S) {
    use upstairs_domain::order::OrderState;
    let (parent, order) = parent_with_orders(&s, 10_000).await;
    let mut tx = s.write().await.unwrap();
    tx.set_trading_stopped(parent.company_id, Some(t0()), t0()).await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = s.write().await.unwrap();
    match tx.insert_order(&order("-0.02", 1000, false)).await {
        Err(StoreError::Check(c)) => assert_eq!(c, "company_trading_stopped"),
        other => panic!("a stopped company's order was not refused: {other:?}"),
    }
    drop(tx);
    let mut tx = s.write().await.unwrap();
    let matched = ChildOrder { state: OrderState::Matched, ..order("-0.02", 1000, false) };
    tx.insert_order(&matched).await.unwrap();
    tx.commit().await.unwrap();
}

async fn stale_order_write_is_refused<S: Store>(s: S) {
    use upstairs_domain::order::OrderState;
    let (parent, order) = parent_with_orders(&s, 10_000).await;
    let o = order("-0.02", 1000, false);
    let mut tx = s.write().await.unwrap();
    tx.insert_order(&o).await.unwrap();
    tx.commit().await.unwrap();

    // An edit read the order WORKING; the close expires it before the edit writes.
    let mut tx = s.read().await.unwrap();
    let seen = tx.order(o.order_id).await.unwrap().unwrap();
    drop(tx);
    let mut tx = s.write().await.unwrap();
    let mut expired = seen.clone();
    expired.state = OrderState::Expired;
    tx.update_order(&seen, &expired).await.unwrap();
    tx.commit().await.unwrap();

    let mut edited = seen.clone();
    edited.quantity = 1500;
    let mut tx = s.write().await.unwrap();
    assert!(matches!(tx.update_order(&seen, &edited).await, Err(StoreError::Stale(_))));
    drop(tx);
    let mut tx = s.read().await.unwrap();
    assert_eq!(tx.order(o.order_id).await.unwrap().unwrap().state, OrderState::Expired, "never back to WORKING");
    let view = tx.parent_order(parent.parent_order_id).await.unwrap().unwrap();
    assert_eq!((view.working, view.matched), (0, 0));
    assert!(tx.book_rows(parent.instrument_id).await.unwrap().is_empty());
}

async fn database_refuses_negative_tradable<S: Store>(s: S) {
    let (parent, order) = parent_with_orders(&s, 1000).await;
    let mut tx = s.write().await.unwrap();
    tx.insert_order(&order("-0.02", 600, false)).await.unwrap();
    assert!(matches!(tx.insert_order(&order("-0.02", 600, false)).await, Err(StoreError::Check(_))));
    drop(tx);
    let mut tx = s.read().await.unwrap();
    let view = tx.parent_order(parent.parent_order_id).await.unwrap().unwrap();
    assert_eq!((view.working, view.matched), (0, 0), "the refused transaction left nothing");
}

/// No quantity above the ceiling, no counter that leaves 64 bits (ADR 0027): on SQLite a
/// sum past `i64::MAX` would become a REAL that every CHECK compares as a float.
async fn database_refuses_unbounded_quantities<S: Store>(s: S) {
    const CEILING: i64 = 1_000_000_000_000;
    let (parent, order) = parent_with_orders(&s, CEILING).await;
    // A parent above the ceiling, and one at i64::MAX, are refused outright.
    for quantity in [CEILING + 1, i64::MAX] {
        let mut tx = s.write().await.unwrap();
        let p = ParentOrder { parent_order_id: upstairs_domain::ParentOrderId::new(), quantity, ..parent.clone() };
        assert!(matches!(tx.insert_parent_order(&p).await, Err(StoreError::Check(_))), "parent of {quantity}");
    }
    // At the ceiling: child orders up to it, and not one lot more, whatever their sum.
    let mut tx = s.write().await.unwrap();
    tx.insert_order(&order("-0.02", CEILING - 500, false)).await.unwrap();
    tx.commit().await.unwrap();
    for over in [501, CEILING, i64::MAX - CEILING + 600, i64::MAX] {
        let mut tx = s.write().await.unwrap();
        assert!(matches!(tx.insert_order(&order("-0.02", over, false)).await, Err(StoreError::Check(_))), "{over}");
    }
    let mut tx = s.write().await.unwrap();
    tx.insert_order(&order("-0.02", 500, false)).await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = s.read().await.unwrap();
    let view = tx.parent_order(parent.parent_order_id).await.unwrap().unwrap();
    assert_eq!((view.working, view.matched), (CEILING, 0));
    let shown: i64 = tx.book_rows(parent.instrument_id).await.unwrap().iter().map(|r| r.shown).sum();
    assert_eq!(shown, CEILING);
}

/// The order path's single write: order and audit row together, or neither.
async fn order_and_audit_in_one_write<S: Store>(s: S) {
    let (parent, order) = parent_with_orders(&s, 1000).await;
    let log = create_log;
    let audited = |s: S| async move {
        let mut tx = s.read().await.unwrap();
        let logs = tx.action_logs(100).await.unwrap();
        logs.into_iter()
            .filter(|l| l.entity == "order")
            .map(|l| l.details["quantity"].as_i64().unwrap())
            .collect::<Vec<_>>()
    };
    let counts = |s: S| async move {
        let mut tx = s.read().await.unwrap();
        let view = tx.parent_order(parent.parent_order_id).await.unwrap().unwrap();
        (view.working, tx.book_rows(parent.instrument_id).await.unwrap().len())
    };

    let first = order("-0.02", 600, false);
    assert!(s.insert_order_audited(&first, BLOCK, ParentState::Active, &log(&first)).await.unwrap());
    assert_eq!(audited(s.clone()).await, [600]);
    assert_eq!(counts(s.clone()).await, (600, 1));

    // Over the parent's tradable quantity: refused by the counters, nothing written,
    // and the writer is usable at once.
    let over = order("-0.02", 500, false);
    assert!(matches!(
        s.insert_order_audited(&over, BLOCK, ParentState::Active, &log(&over)).await,
        Err(StoreError::Check(_))
    ));
    assert_eq!(audited(s.clone()).await, [600]);
    assert_eq!(counts(s.clone()).await, (600, 1));

    // Into a parent no longer in the state asked for: false, nothing written.
    let mut tx = s.write().await.unwrap();
    tx.update_parent_order_state(parent.parent_order_id, ParentState::Cancelled, t0()).await.unwrap();
    tx.commit().await.unwrap();
    let late = order("-0.03", 400, false);
    assert!(!s.insert_order_audited(&late, BLOCK, ParentState::Active, &log(&late)).await.unwrap());
    assert_eq!(audited(s.clone()).await, [600]);
    assert_eq!(counts(s.clone()).await, (600, 1));
    let mut tx = s.read().await.unwrap();
    assert!(tx.order(late.order_id).await.unwrap().is_none());
}

/// Orders written at once (group commit on both backends): each gets its own outcome,
/// the ones past the parent's quantity refused alone, the ones into a parent no longer
/// active not written, every order written with its audit row and no other.
async fn concurrent_order_writes_keep_each_outcome<S: Store>(s: S) {
    orders_written_at_once(s, 500, (6, 2, 4), 3000).await;
}

/// Orders written at once where none is refused (the batch commits as one): the ones
/// into a parent no longer active are left out of it, with their audit rows.
async fn concurrent_order_writes_leave_out_ended_parents<S: Store>(s: S) {
    orders_written_at_once(s, 100, (8, 0, 4), 800).await;
}

/// Twelve orders at once into a parent of 3,000: eight of `quantity`, four into a
/// cancelled parent; checks (written, refused, not written) and the parent's working.
async fn orders_written_at_once<S: Store>(s: S, quantity: i64, outcomes: (i32, i32, i32), working: i64) {
    let (parent, order) = parent_with_orders(&s, 3000).await;
    let ended = ParentOrder {
        parent_order_id: upstairs_domain::ParentOrderId::new(),
        state: ParentState::Cancelled,
        ..parent.clone()
    };
    let mut tx = s.write().await.unwrap();
    tx.insert_parent_order(&ended).await.unwrap();
    tx.commit().await.unwrap();
    let late = |o: ChildOrder| ChildOrder { parent_order_id: ended.parent_order_id, ..o };
    let orders: Vec<ChildOrder> = (0..12)
        .map(|n| if n % 3 == 1 { late(order("-0.02", 100, false)) } else { order("-0.02", quantity, false) })
        .collect();
    let writes = orders.iter().map(|o| {
        let (s, o) = (s.clone(), o.clone());
        tokio::spawn(async move { s.insert_order_audited(&o, BLOCK, ParentState::Active, &create_log(&o)).await })
    });
    let (mut written, mut refused, mut not_written) = (0, 0, 0);
    for (o, w) in orders.iter().zip(writes.collect::<Vec<_>>()) {
        match w.await.unwrap() {
            Ok(true) => written += 1,
            Err(StoreError::Check(_)) => refused += 1,
            Ok(false) if o.parent_order_id == ended.parent_order_id => not_written += 1,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((written, refused, not_written), outcomes);
    let mut tx = s.read().await.unwrap();
    let view = tx.parent_order(parent.parent_order_id).await.unwrap().unwrap();
    assert_eq!(view.working, working);
    let logs = tx.action_logs(100).await.unwrap();
    let mut audited: Vec<Uuid> = logs.iter().filter(|l| l.entity == "order").filter_map(|l| l.entity_id).collect();
    let mut stored = Vec::new();
    for o in &orders {
        if tx.order(o.order_id).await.unwrap().is_some() {
            stored.push(o.order_id.0);
        }
    }
    audited.sort();
    stored.sort();
    assert_eq!(audited, stored, "an audit row for every order written, and only for those");
}

/// sqlx's SQLite driver binds `$N` placeholders by number, reused and in any order,
/// which is what lets both backends share their SQL.
#[tokio::test]
async fn sqlite_takes_numbered_placeholders() {
    let pool = sqlx::SqlitePool::connect("sqlite::memory:").await.unwrap();
    let row: (String, String, i64) =
        sqlx::query_as("select $2 || $1, $1, $3 + $3").bind("a").bind("b").bind(20_i64).fetch_one(&pool).await.unwrap();
    assert_eq!(row, ("ba".into(), "a".into(), 40));
}

async fn match_requests_and_notifications<S: Store>(s: S) {
    use upstairs_domain::match_request::MatchRequestState as M;
    use upstairs_domain::notification::{NotificationType, Party};
    use upstairs_domain::order::{Direction, OrderState};
    use upstairs_domain::{MatchRequestId, NotificationId, OrderId, ParentOrderId};
    // Halyard rests a SELL; Kestrel's taker order is its counterpart.
    let (parent, order) = parent_with_orders(&s, 10_000).await;
    let resting = order("-0.02", 1000, false);
    let kestrel = company("Kestrel");
    let taker = user(&kestrel, "b@kestrel.test");
    let theirs = ParentOrder {
        parent_order_id: ParentOrderId::new(),
        company_id: kestrel.company_id,
        created_by: taker.user_id,
        direction: Direction::Buy,
        ..parent.clone()
    };
    let mine = ChildOrder {
        order_id: OrderId::new(),
        parent_order_id: theirs.parent_order_id,
        company_id: kestrel.company_id,
        created_by: taker.user_id,
        direction: Direction::Buy,
        state: OrderState::AwaitingMatch,
        ..resting.clone()
    };
    let mut tx = s.write().await.unwrap();
    tx.insert_company(&kestrel).await.unwrap();
    tx.insert_user(&taker).await.unwrap();
    tx.insert_parent_order(&theirs).await.unwrap();
    tx.insert_order(&resting).await.unwrap();
    tx.insert_order(&mine).await.unwrap();
    let request = |state: M, created: i64| MatchRequest {
        match_request_id: MatchRequestId::new(),
        instrument_id: parent.instrument_id,
        direction: Direction::Buy,
        price: d("-0.02"),
        take_price: d("-0.015"),
        quantity: 500,
        requesting_order_id: mine.order_id,
        requesting_company_id: kestrel.company_id,
        requesting_user_id: taker.user_id,
        responding_order_id: resting.order_id,
        responding_company_id: parent.company_id,
        responding_user_id: parent.created_by,
        iceberg: true,
        state,
        created_at: t0() + Duration::seconds(created),
        expires_at: t0() + Duration::seconds(created) + Duration::minutes(5),
        updated_at: t0() + Duration::seconds(created),
        rfq_id: None,
        auto_answer: Some(upstairs_engine::model::AutoAnswer {
            at: t0() + Duration::seconds(created + 15),
            accept: false,
        }),
        answered_automatically: false,
        answered_at: None,
        tick_size: Decimal::new(5, 3),
        min_quantity: 500,
    };
    let m = request(M::Pending, 0);
    tx.insert_match_request(&m).await.unwrap();
    tx.commit().await.unwrap();

    let mut tx = s.write().await.unwrap();
    assert_eq!(tx.match_request(m.match_request_id).await.unwrap(), Some(m.clone()));
    // Who answered: the preference, once marked.
    tx.mark_answered_automatically(m.match_request_id).await.unwrap();
    let marked = tx.match_request(m.match_request_id).await.unwrap().unwrap();
    assert!(marked.answered_automatically);
    drop(tx);
    let mut tx = s.write().await.unwrap();
    assert!(!tx.match_request(m.match_request_id).await.unwrap().unwrap().answered_automatically, "rolled back");
    assert_eq!(tx.match_requests_of_order(resting.order_id, M::Pending).await.unwrap(), vec![m.clone()]);
    assert_eq!(tx.match_requests_of_order(mine.order_id, M::Pending).await.unwrap(), vec![m.clone()]);
    assert_eq!(tx.match_requests_in_state(M::Pending).await.unwrap(), vec![m.clone()]);
    assert_eq!(tx.match_requests_of_user(taker.user_id, M::Pending).await.unwrap(), vec![m.clone()]);
    assert!(tx.match_requests_of_user(taker.user_id, M::Accepted).await.unwrap().is_empty());
    // Compare-and-set: the second answer finds it no longer pending.
    let answered = t0() + Duration::seconds(7);
    tx.update_match_request_state(m.match_request_id, M::Pending, M::Accepted, answered).await.unwrap();
    let again = tx.update_match_request_state(m.match_request_id, M::Pending, M::Rejected, t0()).await;
    assert!(matches!(again, Err(StoreError::Stale(_))), "{again:?}");
    // When it left PENDING is kept.
    let read = tx.match_request(m.match_request_id).await.unwrap().unwrap();
    assert_eq!((read.answered_at, read.state), (Some(answered), M::Accepted));
    // A broker's link: read back by its hash, answered once, listed per match and step.
    let link = BrokerConfirmation {
        token_hash: "ab".repeat(32),
        order_id: resting.order_id,
        match_request_id: m.match_request_id,
        broker_id: parent.company_id,
        step: ConfirmationStep::Accept,
        created_at: t0(),
        expires_at: t0() + Duration::days(7),
        answered: None,
    };
    tx.insert_broker_confirmation(&link).await.unwrap();
    assert_eq!(tx.broker_confirmation(&link.token_hash).await.unwrap(), Some(link.clone()));
    assert_eq!(tx.broker_confirmation("cd").await.unwrap(), None);
    tx.answer_broker_confirmation(&link.token_hash, true, t0() + Duration::seconds(1)).await.unwrap();
    let twice = tx.answer_broker_confirmation(&link.token_hash, false, t0()).await;
    assert!(matches!(twice, Err(StoreError::Stale(_))), "{twice:?}");
    let answered = BrokerConfirmation { answered: Some((t0() + Duration::seconds(1), true)), ..link.clone() };
    assert_eq!(
        tx.broker_confirmations_of_match(m.match_request_id, ConfirmationStep::Accept).await.unwrap(),
        vec![answered]
    );
    assert!(tx.broker_confirmations_of_match(m.match_request_id, ConfirmationStep::Fill).await.unwrap().is_empty());
    // Two time-outs: one by its own deadline (counts), one by the close before it (does not).
    for (at, created) in [(Duration::minutes(5), 10), (Duration::minutes(1), 20)] {
        let t = request(M::Pending, created);
        tx.insert_match_request(&t).await.unwrap();
        tx.update_match_request_state(t.match_request_id, M::Pending, M::TimedOut, t.created_at + at).await.unwrap();
    }
    let since = t0() - Duration::days(30);
    let mut by_user =
        tx.received_by_state(Responders::Users(&[parent.created_by, taker.user_id]), since).await.unwrap();
    by_user.sort_by_key(|(_, st, _)| st.as_str());
    assert_eq!(by_user, [(parent.created_by.0, M::Accepted, 1), (parent.created_by.0, M::TimedOut, 1)]);
    let by_company = tx.received_by_state(Responders::Companies(&[parent.company_id]), since).await.unwrap();
    assert_eq!(by_company.iter().map(|(_, _, n)| n).sum::<i64>(), 2);
    assert!(tx.received_by_state(Responders::Users(&[]), since).await.unwrap().is_empty());
    assert!(
        tx.received_by_state(Responders::Users(&[parent.created_by]), t0() + Duration::hours(1))
            .await
            .unwrap()
            .is_empty()
    );

    // Notifications: newest first, paged, filtered by archived, found by request.
    let notice = |n: i64| Notification {
        notification_id: NotificationId::new(),
        user_id: parent.created_by,
        notification_type: NotificationType::MatchRequestReceived,
        status: M::Pending,
        instrument_id: parent.instrument_id,
        subject: Subject::MatchRequest(m.match_request_id),
        role: Party::Responder,
        // Its terms as the responder sees them, read back exactly (issue 28.10).
        terms: Some(Terms { direction: Direction::Sell, quantity: 1500 + n, price: Decimal::new(-2_250 - n, 5) }),
        read: false,
        archived: false,
        created_at: t0() + Duration::seconds(n),
        expired_at: m.expires_at,
        updated_at: t0() + Duration::seconds(n),
    };
    let ns: Vec<Notification> = (0..3).map(notice).collect();
    for n in &ns {
        tx.insert_notification(n).await.unwrap();
    }
    let page = tx.notifications_of_user(parent.created_by, Some(false), true, 0, 2).await.unwrap();
    assert_eq!((page.total_items, page.items), (3, vec![ns[2].clone(), ns[1].clone()]));
    let oldest = tx.notifications_of_user(parent.created_by, None, false, 0, 1).await.unwrap();
    assert_eq!(oldest.items, vec![ns[0].clone()]);
    // The reader's flags and the venue's status are written apart: neither write undoes
    // the other's.
    let mut changed = ns[0].clone();
    changed.status = M::Accepted;
    tx.set_notification_status(changed.notification_id, M::Accepted, t0() + Duration::seconds(30)).await.unwrap();
    let stale = Notification { read: true, archived: true, updated_at: t0() + Duration::minutes(1), ..ns[0].clone() };
    tx.update_notification_flags(&stale).await.unwrap();
    (changed.read, changed.archived, changed.updated_at) = (true, true, stale.updated_at);
    assert_eq!(tx.notification(changed.notification_id).await.unwrap(), Some(changed.clone()));
    tx.set_notification_status(changed.notification_id, M::Accepted, changed.updated_at).await.unwrap();
    assert!(tx.notification(changed.notification_id).await.unwrap().unwrap().read, "the status kept the flags");
    assert_eq!(tx.notifications_of_user(parent.created_by, Some(false), true, 0, 10).await.unwrap().total_items, 2);
    assert_eq!(
        tx.notifications_of_user(parent.created_by, Some(true), true, 0, 10).await.unwrap().items,
        [changed.clone()]
    );
    assert!(tx.notifications_of_user(taker.user_id, None, true, 0, 10).await.unwrap().items.is_empty());
    assert_eq!(tx.notifications_of_match_request(m.match_request_id).await.unwrap().len(), 3);
    // One statement changes the status of every notification of a type, and answers them
    // as they now are; the others stay.
    let mut other = notice(4);
    other.notification_type = NotificationType::MatchRequestAccepted;
    tx.insert_notification(&other).await.unwrap();
    let at = t0() + Duration::minutes(2);
    let changed = tx
        .set_match_request_notifications_status(
            m.match_request_id,
            NotificationType::MatchRequestReceived,
            M::Rejected,
            at,
        )
        .await
        .unwrap();
    assert_eq!(
        changed.iter().map(|n| n.notification_id).collect::<Vec<_>>(),
        ns.iter().map(|n| n.notification_id).collect::<Vec<_>>()
    );
    assert!(changed.iter().all(|n| n.status == M::Rejected && n.updated_at == at));
    assert!(changed[0].read, "the reader's flags stay");
    assert_eq!(tx.notification(other.notification_id).await.unwrap(), Some(other));
    tx.commit().await.unwrap();

    // A new request with its two timers, its notification, a broker's link, an e-mail and
    // its audit row in one write; a timer with a dedupe key this transaction wrote already
    // is not written again; an empty batch writes nothing.
    let told = request(M::Pending, 40);
    let notice = Notification {
        subject: Subject::MatchRequest(told.match_request_id),
        created_at: told.created_at,
        ..notice(40)
    };
    let log = ActionLog {
        action_log_id: Uuid::now_v7(),
        entity: "match_request".into(),
        entity_id: Some(told.match_request_id.0),
        operation: "create".into(),
        user_id: Some(taker.user_id),
        created_at: told.created_at,
        details: json!({"quantity": 500}),
        keyed: None,
    };
    let timers = [timer("expire", told.expires_at, None), timer("auto", told.created_at, Some("once"))];
    let mut tx = s.write().await.unwrap();
    tx.insert_timer(&timer("auto", told.created_at, Some("once"))).await.unwrap();
    let before = tx.pending_timers().await.unwrap().len();
    let link = BrokerConfirmation {
        token_hash: "ef".repeat(32),
        order_id: resting.order_id,
        match_request_id: told.match_request_id,
        broker_id: parent.company_id,
        step: ConfirmationStep::Fill,
        created_at: told.created_at,
        expires_at: told.created_at + Duration::days(7),
        answered: None,
    };
    let mail = OutboxMessage {
        outbox_id: Uuid::now_v7(),
        email: OutgoingEmail {
            message_id: "<told@upstairs.test>".into(),
            to: "desk@broker.test".into(),
            template: EmailTemplate::PasswordReset { first_name: "Ada".into(), link: "https://x/y".into() },
        },
        created_at: told.created_at,
        sent_at: None,
        attempts: 0,
        last_error: None,
    };
    tx.insert_rows(&NewRows::default()).await.unwrap();
    let rows = NewRows {
        match_requests: vec![told.clone()],
        notifications: vec![notice.clone()],
        broker_confirmations: vec![link.clone()],
        outbox: vec![mail.clone()],
        timers: timers.to_vec(),
        action_logs: vec![log.clone()],
    };
    tx.insert_rows(&rows).await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = s.read().await.unwrap();
    assert_eq!(tx.match_request(told.match_request_id).await.unwrap(), Some(told.clone()));
    assert_eq!(tx.notification(notice.notification_id).await.unwrap(), Some(notice));
    let pending = tx.pending_timers().await.unwrap();
    assert_eq!(pending.len(), before + 1);
    assert!(pending.iter().any(|t| t.timer_id == timers[0].timer_id && t.payload == timers[0].payload));
    assert!(!pending.iter().any(|t| t.timer_id == timers[1].timer_id));
    assert!(tx.action_logs(100).await.unwrap().contains(&log));
    assert_eq!(tx.broker_confirmation(&link.token_hash).await.unwrap(), Some(link));
    assert_eq!(tx.outbox(mail.outbox_id).await.unwrap(), Some(mail));
}

async fn rfqs_and_responses<S: Store>(s: S) {
    use upstairs_domain::match_request::MatchRequestState;
    use upstairs_domain::notification::{NotificationType, Party};
    use upstairs_domain::order::OrderState;
    use upstairs_domain::rfq::{ResponseState as R, RfqState};
    use upstairs_domain::{NotificationId, RfqId, RfqResponseId};
    let (parent, order) = parent_with_orders(&s, 3000).await;
    let mut reserved = order("0", 2000, false);
    reserved.state = OrderState::AwaitingRfqAcceptance;
    let lp = company("Fathom");
    let rfq = Rfq {
        rfq_id: RfqId::new(),
        parent_order_id: parent.parent_order_id,
        order_id: reserved.order_id,
        instrument_id: parent.instrument_id,
        direction: parent.direction,
        company_id: parent.company_id,
        user_id: parent.created_by,
        quantity: 2000,
        two_way: true,
        anonymous: true,
        state: RfqState::Open,
        created_at: t0(),
        expires_at: t0() + Duration::minutes(2),
        updated_at: t0(),
    };
    let response = RfqResponse {
        rfq_response_id: RfqResponseId::new(),
        rfq_id: rfq.rfq_id,
        company_id: lp.company_id,
        state: R::AwaitingResponse,
        user_id: None,
        broker_id: None,
        buy: None,
        sell: None,
        match_request_id: None,
        created_at: t0(),
        updated_at: t0(),
    };
    let mut tx = s.write().await.unwrap();
    tx.insert_company(&lp).await.unwrap();
    tx.insert_order(&reserved).await.unwrap();
    tx.insert_rfq(&rfq).await.unwrap();
    tx.insert_rfq_response(&response).await.unwrap();
    let n = Notification {
        notification_id: NotificationId::new(),
        user_id: parent.created_by,
        notification_type: NotificationType::RfqQuoteReceived,
        status: MatchRequestState::Pending,
        instrument_id: parent.instrument_id,
        subject: Subject::Rfq(rfq.rfq_id),
        role: Party::Requester,
        terms: None,
        read: false,
        archived: false,
        created_at: t0(),
        expired_at: rfq.expires_at,
        updated_at: t0(),
    };
    tx.insert_notification(&n).await.unwrap();
    tx.commit().await.unwrap();

    let mut tx = s.write().await.unwrap();
    assert_eq!(tx.rfq(rfq.rfq_id).await.unwrap(), Some(rfq.clone()));
    assert_eq!(tx.rfqs(&[rfq.rfq_id]).await.unwrap(), vec![rfq.clone()]);
    assert_eq!(tx.rfqs_of_company(parent.company_id, RfqState::Open, None).await.unwrap(), vec![rfq.clone()]);
    assert_eq!(
        tx.rfqs_of_company(parent.company_id, RfqState::Open, Some(parent.parent_order_id)).await.unwrap(),
        vec![rfq.clone()]
    );
    assert!(tx.rfqs_of_company(lp.company_id, RfqState::Open, None).await.unwrap().is_empty());
    assert!(tx.rfqs_of_company(parent.company_id, RfqState::Expired, None).await.unwrap().is_empty());
    assert_eq!(tx.rfqs_in_state(RfqState::Open).await.unwrap(), vec![rfq.clone()]);
    assert_eq!(tx.notifications_of_rfq(rfq.rfq_id).await.unwrap(), vec![n.clone()]);
    let open = [R::AwaitingResponse, R::Responded];
    assert_eq!(
        tx.rfq_responses_of_company(lp.company_id, &open, Some(parent.instrument_id), None, 10).await.unwrap(),
        vec![response.clone()]
    );
    assert!(tx.rfq_responses_of_company(lp.company_id, &[R::Accepted], None, None, 10).await.unwrap().is_empty());
    assert!(tx.rfq_responses_of_company(parent.company_id, &open, None, None, 10).await.unwrap().is_empty());
    // `since` keeps RFQs sent at it or later.
    assert_eq!(
        tx.rfq_responses_of_company(lp.company_id, &open, None, Some(rfq.created_at), 10).await.unwrap(),
        vec![response.clone()]
    );
    let later = rfq.created_at + Duration::seconds(1);
    assert!(tx.rfq_responses_of_company(lp.company_id, &open, None, Some(later), 10).await.unwrap().is_empty());

    // A quote, exact to the last digit; then a compare-and-set on state and time: a
    // writer holding the response as it was before the quote is refused.
    let quoted = RfqResponse {
        state: R::Responded,
        user_id: Some(parent.created_by),
        broker_id: Some(lp.company_id),
        buy: Some(QuoteSide { price: d("-0.0250"), quantity: 1000 }),
        sell: Some(QuoteSide { price: d("-0.015"), quantity: 1500 }),
        updated_at: t0() + Duration::seconds(5),
        ..response.clone()
    };
    tx.update_rfq_response(&response, &quoted).await.unwrap();
    let stale = RfqResponse { state: R::RejectedByResponder, ..response.clone() };
    assert!(matches!(tx.update_rfq_response(&response, &stale).await, Err(StoreError::Stale(_))));
    let read = tx.rfq_responses(&[rfq.rfq_id]).await.unwrap();
    assert_eq!(read, vec![quoted.clone()]);
    assert_eq!(read[0].buy.unwrap().price.to_string(), "-0.0250");

    tx.update_rfq_state(rfq.rfq_id, RfqState::Open, RfqState::Expired, t0()).await.unwrap();
    let again = tx.update_rfq_state(rfq.rfq_id, RfqState::Open, RfqState::Cancelled, t0()).await;
    assert!(matches!(again, Err(StoreError::Stale(_))));
    tx.commit().await.unwrap();
    let mut tx = s.read().await.unwrap();
    assert_eq!(tx.rfq(rfq.rfq_id).await.unwrap().unwrap().state, RfqState::Expired);
}
