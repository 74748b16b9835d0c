//! Durable timers and the e-mail outbox. A timer is a row with a due time; the loop
//! claims due rows (safely across nodes), runs them, then deletes or reschedules
//! them. Outgoing e-mails are outbox rows plus a `outbox.deliver` timer, both written
//! in the transaction of the change that caused them.

use chrono::{DateTime, Duration, Utc};
use serde_json::json;
use std::time::Duration as StdDuration;
use uuid::Uuid;

use crate::Store;
use crate::core::service;
use crate::disconnects::Disconnects;
use crate::error::EngineError;
use crate::kill_switch::KillSwitch;
use crate::matches::Matches;
use crate::model::*;
use crate::orders::Orders;
use crate::ports::*;
use crate::reference::Reference;
use crate::rfqs::Rfqs;
use crate::withdrawals::Withdrawals;

pub use crate::core::OUTBOX_DELIVER;
pub const CLEANUP: &str = "cleanup.tokens";
const CLEANUP_KEY: &str = "cleanup.tokens";
const CLEANUP_EVERY: Duration = Duration::hours(1);
/// How long an instrument's band moves are kept: two years, a scorecard's longest period
/// (366 days) and the one before it (ADR 0047).
pub const BAND_HISTORY_KEPT: Duration = Duration::days(732);
/// A claimed timer not finished within this time is taken by another run.
const LEASE: Duration = Duration::minutes(2);
const BATCH: i64 = 50;

/// Delay before retry number `attempts` (1-based): 5 s doubling, at most one hour.
pub fn backoff(attempts: i32) -> Duration {
    let exp = attempts.clamp(1, 20) - 1;
    let secs = 5i64.saturating_mul(1i64 << exp.min(10));
    Duration::seconds(secs.min(3600))
}

pub enum Outcome {
    Done,
    Retried,
}

/// What one pass of the scheduler did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RunReport {
    pub done: usize,
    pub retried: usize,
}

service!(
    /// The timers' lanes: e-mail delivery, time-outs, the close, the sweeps.
    Scheduler {
        orders: Orders,
        matches: Matches,
        rfqs: Rfqs,
        withdrawals: Withdrawals,
        kill_switch: KillSwitch,
        disconnects: Disconnects,
        reference: Reference,
    }
);

impl<S: Store> Scheduler<S> {
    /// What waits in the database now (`/metrics`).
    pub async fn backlog(&self) -> Result<Backlog, EngineError> {
        Ok(self.store.single().await?.backlog(self.clock.now()).await?)
    }

    /// The e-mail outbox, newest first, for venue admins: each message, its delivery state
    /// and, in the demo where the transport keeps copies (its files), its links.
    pub async fn outbox(
        &self,
        actor: &crate::context::Actor,
        page: i64,
        size: i64,
    ) -> Result<Page<OutboxMessage>, EngineError> {
        crate::context::require(actor, upstairs_domain::Permission::Admin)?;
        let (page, size) = (page.clamp(0, crate::context::MAX_PAGE), size.clamp(1, crate::context::MAX_PAGE_SIZE));
        let mut messages = self.store.single().await?.outbox_messages(page, size).await?;
        // A reset, activation or broker link is a live secret: with it the reader takes an
        // account over or answers for the broker. The outbox says it was sent, and shows it
        // only in the demo (whose logins are public) when the transport keeps copies anyway.
        if !(self.config.demo && self.mailer.keeps_copies()) {
            for m in &mut messages.items {
                m.email.template = m.email.template.links_hidden();
            }
        }
        Ok(messages)
    }

    /// Run at start: makes sure the recurring jobs exist (idempotent), and retries
    /// undelivered e-mail at once rather than at its backoff time (a restart usually
    /// follows a fix, and nothing may wait behind a crash).
    pub async fn on_start(&self) -> Result<(), EngineError> {
        let mut tx = self.store.write().await?;
        let moved = tx.bring_forward(OUTBOX_DELIVER, self.clock.now()).await?;
        if moved > 0 {
            tracing::info!(emails = moved, "retrying undelivered e-mail now");
        }
        tx.insert_timer(&Timer {
            timer_id: Uuid::now_v7(),
            kind: CLEANUP.into(),
            payload: json!({}),
            due_at: self.clock.now() + CLEANUP_EVERY,
            dedupe_key: Some(CLEANUP_KEY.into()),
            attempts: 0,
        })
        .await?;
        self.orders.schedule_close(&mut tx, self.clock.now()).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Runs every timer due now, lane by lane, until none is left.
    pub async fn run_due_timers(&self) -> Result<RunReport, EngineError> {
        let mut report = RunReport::default();
        for lane in Lane::ALL {
            let r = self.run_lane(lane).await?;
            report.done += r.done;
            report.retried += r.retried;
        }
        Ok(report)
    }

    /// Runs the timers of one lane due now, until none is left. Each job runs supervised
    /// (`supervise`): a panic or an overrun is a failure, retried later like an error.
    async fn run_lane(&self, lane: Lane) -> Result<RunReport, EngineError> {
        // One pass per lane at a time in this process: a pass asked for by hand (the
        // tests' `run_due_timers`) waits for the loop's pass that may have just claimed
        // the due timers, so that when it returns every timer due now has run.
        let _pass = self.lane_passes.of(lane).lock().await;
        let mut report = RunReport::default();
        loop {
            let now = self.clock.now();
            let claimed = {
                let mut tx = self.store.write().await?;
                let c = tx.claim_due_timers(now, now + LEASE, BATCH, lane.kinds()).await?;
                tx.commit().await?;
                c
            };
            if claimed.is_empty() {
                return Ok(report);
            }
            let lease_until = now + LEASE;
            let job_limit = Duration::from_std(JOB_LIMIT).unwrap_or(LEASE);
            for timer in claimed {
                // The batch shares one lease: a job that could outlive what is left of it
                // first renews its own, so that no other run claims it meanwhile; one
                // another run claimed already is left to that run.
                let started = self.clock.now();
                if started + job_limit >= lease_until {
                    let mut tx = self.store.write().await?;
                    let ours = tx.renew_timer_lease(timer.timer_id, timer.attempts, started + LEASE).await?;
                    tx.commit().await?;
                    if !ours {
                        continue;
                    }
                }
                let engine = self.clone();
                let job = timer.clone();
                let outcome = supervise(async move { engine.run_timer(&job).await }, JOB_LIMIT).await;
                self.heartbeat.beat(lane);
                match outcome {
                    Ok(Outcome::Done) => report.done += 1,
                    Ok(Outcome::Retried) => report.retried += 1,
                    Err(e) => {
                        report.retried += 1;
                        let due = self.clock.now() + backoff(timer.attempts);
                        tracing::warn!(timer_id = %timer.timer_id, kind = %timer.kind, attempts = timer.attempts,
                                       retry_at = %due, error = %e, "timer failed; will retry");
                        let mut tx = self.store.write().await?;
                        tx.reschedule_timer(timer.timer_id, due).await?;
                        tx.commit().await?;
                    }
                }
            }
        }
    }

    /// The lane whose loop has not beaten for longer than `limit` (dead or stuck), if any.
    pub fn stalled_lane(&self, limit: StdDuration) -> Option<&'static str> {
        Lane::ALL.into_iter().find(|l| self.heartbeat.stalled(*l, std::time::Instant::now(), limit)).map(Lane::name)
    }

    async fn run_timer(&self, timer: &Timer) -> Result<Outcome, String> {
        match timer.kind.as_str() {
            OUTBOX_DELIVER => {
                let id = timer
                    .payload
                    .get("outbox_id")
                    .and_then(|v| v.as_str())
                    .and_then(|s| Uuid::parse_str(s).ok())
                    .ok_or("outbox timer without outbox_id")?;
                self.deliver_outbox(timer, id).await
            }
            CLEANUP => {
                let now = self.clock.now();
                let mut tx = self.store.write().await.map_err(|e| e.to_string())?;
                let s = tx.delete_expired_sessions(now).await.map_err(|e| e.to_string())?;
                // Keep used or expired links a day, so a second click still says "expired".
                let l = tx.delete_stale_link_tokens(now - Duration::days(1)).await.map_err(|e| e.to_string())?;
                // The bands two years back and more (scorecards reach 366 days; ADR 0047).
                let b = tx.prune_band_history(now - BAND_HISTORY_KEPT).await.map_err(|e| e.to_string())?;
                tx.delete_timer(timer.timer_id).await.map_err(|e| e.to_string())?;
                tx.insert_timer(&Timer {
                    timer_id: Uuid::now_v7(),
                    kind: CLEANUP.into(),
                    payload: json!({}),
                    due_at: now + CLEANUP_EVERY,
                    dedupe_key: Some(CLEANUP_KEY.into()),
                    attempts: 0,
                })
                .await
                .map_err(|e| e.to_string())?;
                tx.commit().await.map_err(|e| e.to_string())?;
                tracing::info!(sessions = s, links = l, bands = b, "cleaned up expired sessions, links and old bands");
                Ok(Outcome::Done)
            }
            crate::kill_switch::KILL_SWEEP => {
                self.kill_switch.run_kill_sweep_timer(timer).await.map_err(|e| e.to_string())?;
                self.finish_timer(timer.timer_id).await
            }
            crate::reference::PRICES_STALE => {
                self.reference.run_stale_timer(timer).await.map_err(|e| e.to_string())?;
                Ok(Outcome::Done)
            }
            crate::reference::SETTINGS_DUE => {
                self.reference.run_settings_timer(timer).await.map_err(|e| e.to_string())?;
                self.finish_timer(timer.timer_id).await
            }
            crate::disconnects::CANCEL => {
                self.disconnects.run_cancel_timer(timer).await.map_err(|e| e.to_string())?;
                self.finish_timer(timer.timer_id).await
            }
            crate::rfqs::EXPIRE => {
                self.rfqs.run_rfq_timer(timer).await.map_err(|e| e.to_string())?;
                self.finish_timer(timer.timer_id).await
            }
            crate::matches::EXPIRE | crate::matches::AUTO_RESPONSE => {
                self.matches.run_match_request_timer(timer).await.map_err(|e| e.to_string())?;
                self.finish_timer(timer.timer_id).await
            }
            crate::orders::DAY_CLOSE => {
                let now = self.clock.now();
                // A close scheduled before the venue was switched to always open expires nothing.
                // The close it was scheduled for, even when it runs late.
                let close = timer
                    .payload
                    .get("close")
                    .and_then(|v| serde_json::from_value::<DateTime<Utc>>(v.clone()).ok())
                    .unwrap_or(now);
                // Whose close: an exchange's (ADR 0052), or the venue's own.
                let mic = timer.payload.get("mic").and_then(|v| v.as_str());
                let n = if self.config.calendar.always_open {
                    0
                } else {
                    self.withdrawals.expire_day(close, mic).await.map_err(|e| e.to_string())?
                };
                let mut tx = self.store.write().await.map_err(|e| e.to_string())?;
                tx.delete_timer(timer.timer_id).await.map_err(|e| e.to_string())?;
                self.orders.schedule_close(&mut tx, now).await.map_err(|e| e.to_string())?;
                tx.commit().await.map_err(|e| e.to_string())?;
                tracing::info!(expired = n, exchange = mic, "a trading day closed; working orders expired");
                Ok(Outcome::Done)
            }
            other => {
                // A timer kind this build does not know (e.g. written by a newer node): keep it.
                Err(format!("unknown timer kind {other}"))
            }
        }
    }

    async fn deliver_outbox(&self, timer: &Timer, outbox_id: Uuid) -> Result<Outcome, String> {
        let timer_id = timer.timer_id;
        let msg = {
            let mut tx = self.store.read().await.map_err(|e| e.to_string())?;
            tx.outbox(outbox_id).await.map_err(|e| e.to_string())?
        };
        let Some(msg) = msg else {
            return self.finish_timer(timer_id).await;
        };
        if msg.sent_at.is_some() {
            return self.finish_timer(timer_id).await;
        }
        if let Err(e) = self.mailer.send(&msg.email).await {
            // The failure and the next attempt are recorded together.
            let due = self.clock.now() + backoff(timer.attempts);
            let mut tx = self.store.write().await.map_err(|e| e.to_string())?;
            tx.record_outbox_failure(outbox_id, &e).await.map_err(|e| e.to_string())?;
            tx.reschedule_timer(timer_id, due).await.map_err(|e| e.to_string())?;
            tx.commit().await.map_err(|e| e.to_string())?;
            tracing::warn!(message_id = %msg.email.message_id, attempts = timer.attempts, retry_at = %due, error = %e,
                           "e-mail not delivered; will retry");
            return Ok(Outcome::Retried);
        }
        // If the process dies here the e-mail goes out again, with the same Message-ID.
        let kept = if self.mailer.keeps_copies() {
            msg.email.clone()
        } else {
            OutgoingEmail { template: msg.email.template.redacted(), ..msg.email.clone() }
        };
        let mut tx = self.store.write().await.map_err(|e| e.to_string())?;
        tx.mark_outbox_sent(outbox_id, self.clock.now(), &kept).await.map_err(|e| e.to_string())?;
        tx.delete_timer(timer_id).await.map_err(|e| e.to_string())?;
        tx.commit().await.map_err(|e| e.to_string())?;
        tracing::info!(message_id = %msg.email.message_id, "e-mail delivered");
        Ok(Outcome::Done)
    }

    async fn finish_timer(&self, timer_id: Uuid) -> Result<Outcome, String> {
        let mut tx = self.store.write().await.map_err(|e| e.to_string())?;
        tx.delete_timer(timer_id).await.map_err(|e| e.to_string())?;
        tx.commit().await.map_err(|e| e.to_string())?;
        Ok(Outcome::Done)
    }

    /// The job loop: runs due timers whenever poked and at least every `poll`.
    pub async fn run_scheduler(self, poll: StdDuration, shutdown: tokio::sync::watch::Receiver<bool>) {
        // One loop per lane: trading timers never wait behind e-mail delivery.
        tokio::join!(
            self.clone().lane_loop(Lane::Trading, poll, shutdown.clone()),
            self.lane_loop(Lane::Mail, poll, shutdown),
        );
    }

    async fn lane_loop(self, lane: Lane, poll: StdDuration, mut shutdown: tokio::sync::watch::Receiver<bool>) {
        loop {
            if let Err(e) = self.run_lane(lane).await {
                tracing::error!(lane = lane.name(), error = %e, "scheduler pass failed");
            }
            self.heartbeat.beat(lane);
            tokio::select! {
                _ = self.wakes.lane(lane).notified() => {}
                _ = tokio::time::sleep(poll) => {}
                _ = shutdown.changed() => return,
            }
        }
    }
}

/// One lock per lane, held through a pass of that lane (`run_lane`).
#[derive(Default)]
pub(crate) struct LanePasses([tokio::sync::Mutex<()>; 2]);

impl LanePasses {
    fn of(&self, lane: Lane) -> &tokio::sync::Mutex<()> {
        match lane {
            Lane::Trading => &self.0[0],
            Lane::Mail => &self.0[1],
        }
    }
}

/// Timer lanes, each with its own loop: trading timers (match requests, the close,
/// housekeeping) never queue behind e-mail delivery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    Trading,
    Mail,
}

impl Lane {
    pub const ALL: [Lane; 2] = [Lane::Trading, Lane::Mail];

    pub fn kinds(self) -> &'static [&'static str] {
        match self {
            Lane::Trading => &[
                crate::matches::EXPIRE,
                crate::matches::AUTO_RESPONSE,
                crate::rfqs::EXPIRE,
                crate::orders::DAY_CLOSE,
                crate::kill_switch::KILL_SWEEP,
                crate::disconnects::CANCEL,
                crate::reference::PRICES_STALE,
                crate::reference::SETTINGS_DUE,
                CLEANUP,
            ],
            Lane::Mail => &[OUTBOX_DELIVER],
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Lane::Trading => "trading",
            Lane::Mail => "mail",
        }
    }
}

/// A job may run this long; its lease (`LEASE`) is twice that, so a job is never claimed
/// again while it still runs.
pub const JOB_LIMIT: StdDuration = StdDuration::from_secs(60);

/// Runs `job` on its own task: a panic, or a run longer than `limit` (the task is then
/// aborted), comes back as an error instead of taking the loop down.
pub async fn supervise<F>(job: F, limit: StdDuration) -> Result<Outcome, String>
where
    F: std::future::Future<Output = Result<Outcome, String>> + Send + 'static,
{
    let mut task = tokio::spawn(job);
    match tokio::time::timeout(limit, &mut task).await {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(e)) if e.is_panic() => {
            let p = e.into_panic();
            let what = p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned());
            Err(format!("the job panicked: {}", what.unwrap_or_default()))
        }
        Ok(Err(_)) => Err("the job was cancelled".into()),
        Err(_) => {
            task.abort();
            Err(format!("the job ran longer than {} s", limit.as_secs()))
        }
    }
}

/// What wakes each timer lane's loop after a commit. A commit wakes only the lanes it gave
/// a timer due now: a take's expiry, minutes away, costs no pass of either lane (each pass
/// is a claim statement in a transaction of its own); a timer due later is found by the
/// loop's poll. The FIX sessions have a bell of their own, per company (`FixBell`).
#[derive(Default)]
pub struct Wakes {
    lanes: [tokio::sync::Notify; 2],
}

impl Wakes {
    fn lane(&self, lane: Lane) -> &tokio::sync::Notify {
        match lane {
            Lane::Trading => &self.lanes[0],
            Lane::Mail => &self.lanes[1],
        }
    }

    /// Runs a pass of every lane now (or right after the one running).
    pub fn all(&self) {
        for lane in Lane::ALL {
            self.lane(lane).notify_one();
        }
    }

    /// After a commit whose new timers are `timers`: the lanes with one due by `now`.
    pub(crate) fn after(&self, timers: &[Timer], now: DateTime<Utc>) {
        for lane in Lane::ALL {
            if timers.iter().any(|t| t.due_at <= now && lane.kinds().contains(&t.kind.as_str())) {
                self.lane(lane).notify_one();
            }
        }
    }
}

/// When each lane's loop last showed life.
pub(crate) struct Heartbeat {
    started: std::time::Instant,
    /// Milliseconds after `started`, per lane.
    last: [std::sync::atomic::AtomicU64; 2],
}

impl Default for Heartbeat {
    fn default() -> Self {
        Self { started: std::time::Instant::now(), last: Default::default() }
    }
}

impl Heartbeat {
    fn slot(&self, lane: Lane) -> &std::sync::atomic::AtomicU64 {
        &self.last[lane as usize]
    }

    pub(crate) fn beat(&self, lane: Lane) {
        self.beat_at(lane, std::time::Instant::now());
    }

    fn beat_at(&self, lane: Lane, at: std::time::Instant) {
        let ms = at.saturating_duration_since(self.started).as_millis() as u64;
        self.slot(lane).fetch_max(ms, std::sync::atomic::Ordering::Relaxed);
    }

    fn stalled(&self, lane: Lane, now: std::time::Instant, limit: StdDuration) -> bool {
        let last = self.started + StdDuration::from_millis(self.slot(lane).load(std::sync::atomic::Ordering::Relaxed));
        now.saturating_duration_since(last) > limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    #[tokio::test]
    async fn a_commit_wakes_only_the_lanes_it_gave_work_due_now() {
        let now = Utc::now();
        let timer = |kind: &str, due_at| Timer {
            timer_id: Uuid::now_v7(),
            kind: kind.into(),
            payload: json!({}),
            due_at,
            dedupe_key: None,
            attempts: 0,
        };
        // Whether a pass of the lane was asked for since the last look (a stored permit).
        async fn woken(w: &Wakes, lane: Lane) -> bool {
            tokio::time::timeout(StdDuration::ZERO, w.lane(lane).notified()).await.is_ok()
        }
        let w = Wakes::default();
        // A take: its expiry minutes away, an auto-answer 15 s away.
        let later = [
            timer(crate::matches::EXPIRE, now + Duration::minutes(5)),
            timer(crate::matches::AUTO_RESPONSE, now + Duration::seconds(15)),
        ];
        w.after(&later, now);
        assert!(!woken(&w, Lane::Trading).await && !woken(&w, Lane::Mail).await);
        // An accept that e-mails the brokers: the mail lane only.
        w.after(&[timer(OUTBOX_DELIVER, now), later[0].clone()], now);
        assert!(woken(&w, Lane::Mail).await && !woken(&w, Lane::Trading).await);
        // An instant auto-answer: the trading lane.
        w.after(&[timer(crate::matches::AUTO_RESPONSE, now)], now);
        assert!(woken(&w, Lane::Trading).await && !woken(&w, Lane::Mail).await);
        w.all();
        assert!(woken(&w, Lane::Trading).await && woken(&w, Lane::Mail).await);
    }

    #[tokio::test(start_paused = true)]
    async fn a_panicking_or_overrunning_job_is_a_failure_not_the_end_of_the_loop() {
        let panics = supervise(async { panic!("boom") }, JOB_LIMIT).await;
        assert_eq!(panics.err().as_deref(), Some("the job panicked: boom"));
        // Tokio's paused clock moves on by itself: no real minute passes.
        let slow = supervise(
            async {
                tokio::time::sleep(JOB_LIMIT * 2).await;
                Ok(Outcome::Done)
            },
            JOB_LIMIT,
        )
        .await;
        assert_eq!(slow.err().as_deref(), Some("the job ran longer than 60 s"));
        assert!(matches!(supervise(async { Ok(Outcome::Done) }, JOB_LIMIT).await, Ok(Outcome::Done)));
        // The lease outlives the longest run, so no job is claimed twice while it runs.
        assert!(LEASE.to_std().unwrap() >= JOB_LIMIT * 2);
    }

    #[test]
    fn a_lane_that_stops_beating_is_stalled() {
        let h = Heartbeat::default();
        let t0 = h.started;
        let limit = StdDuration::from_secs(90);
        h.beat_at(Lane::Trading, t0 + StdDuration::from_secs(10));
        assert!(!h.stalled(Lane::Trading, t0 + StdDuration::from_secs(100), limit));
        assert!(h.stalled(Lane::Trading, t0 + StdDuration::from_secs(101), limit));
        // Lanes beat apart: the mail lane never beat, so it is stalled first.
        assert!(h.stalled(Lane::Mail, t0 + StdDuration::from_secs(91), limit));
        // A beat never moves back.
        h.beat_at(Lane::Trading, t0);
        assert!(!h.stalled(Lane::Trading, t0 + StdDuration::from_secs(100), limit));
    }

    #[test]
    fn backoff_doubles_and_caps() {
        assert_eq!(backoff(1), Duration::seconds(5));
        assert_eq!(backoff(2), Duration::seconds(10));
        assert_eq!(backoff(3), Duration::seconds(20));
        assert_eq!(backoff(10), Duration::seconds(2560));
        assert_eq!(backoff(11), Duration::seconds(3600));
        assert_eq!(backoff(1000), Duration::seconds(3600));
        assert_eq!(backoff(0), Duration::seconds(5));
    }
}
