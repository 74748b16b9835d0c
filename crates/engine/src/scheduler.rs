//! Durable timers and the e-mail outbox. A timer is a row with a due time; the loop
//! claims due rows (safely across nodes), runs them, then deletes or reschedules
//! them. Outgoing e-mails are outbox rows plus a `outbox.deliver` timer, both written
//! in the transaction of the change that caused them.

use chrono::{DateTime, Duration, Utc};
use serde_json::json;
use std::time::Duration as StdDuration;
use uuid::Uuid;

use crate::error::EngineError;
use crate::model::*;
use crate::ports::*;
use crate::{Engine, Store};

pub const OUTBOX_DELIVER: &str = "outbox.deliver";
pub const CLEANUP: &str = "cleanup.tokens";
const CLEANUP_KEY: &str = "cleanup.tokens";
const CLEANUP_EVERY: Duration = Duration::hours(1);
/// A claimed timer not finished within this time is taken by another run.
const LEASE: Duration = Duration::minutes(2);
const BATCH: i64 = 50;

/// Delay before retry number `attempts` (1-based): 5 s doubling, at most one hour.
pub fn backoff(attempts: i32) -> Duration {
    let exp = attempts.clamp(1, 20) - 1;
    let secs = 5i64.saturating_mul(1i64 << exp.min(10));
    Duration::seconds(secs.min(3600))
}

enum Outcome {
    Done,
    Retried,
}

/// What one pass of the scheduler did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RunReport {
    pub done: usize,
    pub retried: usize,
}

impl<S: Store> Engine<S> {
    /// Queues an e-mail inside the caller's transaction. Callers poke the scheduler
    /// after commit (`wake`) so it goes out at once.
    pub(crate) async fn enqueue_email(
        &self,
        tx: &mut S::Tx,
        now: DateTime<Utc>,
        to: &str,
        template: EmailTemplate,
    ) -> Result<Uuid, EngineError> {
        let outbox_id = Uuid::now_v7();
        let email =
            OutgoingEmail { message_id: format!("<{outbox_id}@{}>", self.mail_domain()), to: to.to_owned(), template };
        tx.insert_outbox(&OutboxMessage {
            outbox_id,
            email,
            created_at: now,
            sent_at: None,
            attempts: 0,
            last_error: None,
        })
        .await?;
        tx.insert_timer(&Timer {
            timer_id: Uuid::now_v7(),
            kind: OUTBOX_DELIVER.into(),
            payload: json!({ "outbox_id": outbox_id }),
            due_at: now,
            dedupe_key: None,
            attempts: 0,
        })
        .await?;
        Ok(outbox_id)
    }

    fn mail_domain(&self) -> String {
        let url = self.config.public_url.as_str();
        let rest = url.split_once("://").map_or(url, |(_, r)| r);
        let host = rest.split(['/', ':']).next().unwrap_or("");
        if host.is_empty() { "upstairs.local".into() } else { host.to_owned() }
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
        self.schedule_close(&mut tx, self.clock.now()).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Runs every timer due now, until none is left.
    pub async fn run_due_timers(&self) -> Result<RunReport, EngineError> {
        let mut report = RunReport::default();
        loop {
            let now = self.clock.now();
            let claimed = {
                let mut tx = self.store.write().await?;
                let c = tx.claim_due_timers(now, now + LEASE, BATCH).await?;
                tx.commit().await?;
                c
            };
            if claimed.is_empty() {
                return Ok(report);
            }
            for timer in claimed {
                match self.run_timer(&timer).await {
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
                tracing::info!(sessions = s, links = l, "cleaned up expired sessions and links");
                Ok(Outcome::Done)
            }
            crate::matches::EXPIRE | crate::matches::AUTO_RESPONSE => {
                self.run_match_request_timer(timer).await.map_err(|e| e.to_string())?;
                self.finish_timer(timer.timer_id).await
            }
            crate::orders::DAY_CLOSE => {
                let now = self.clock.now();
                // A close scheduled before the venue was switched to always open expires nothing.
                let n = if self.config.calendar.always_open {
                    0
                } else {
                    self.expire_day(now).await.map_err(|e| e.to_string())?
                };
                let mut tx = self.store.write().await.map_err(|e| e.to_string())?;
                tx.delete_timer(timer.timer_id).await.map_err(|e| e.to_string())?;
                self.schedule_close(&mut tx, now).await.map_err(|e| e.to_string())?;
                tx.commit().await.map_err(|e| e.to_string())?;
                tracing::info!(expired = n, "the venue closed; working orders expired");
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
        let redacted = OutgoingEmail { template: msg.email.template.redacted(), ..msg.email.clone() };
        let mut tx = self.store.write().await.map_err(|e| e.to_string())?;
        tx.mark_outbox_sent(outbox_id, self.clock.now(), &redacted).await.map_err(|e| e.to_string())?;
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
        let mut shutdown = shutdown;
        loop {
            if let Err(e) = self.run_due_timers().await {
                tracing::error!(error = %e, "scheduler pass failed");
            }
            tokio::select! {
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(poll) => {}
                _ = shutdown.changed() => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::backoff;
    use chrono::Duration;

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
