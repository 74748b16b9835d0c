//! Cancel on disconnect (issue 29, ADR 0043): a trader who chose it has their working
//! child orders cancelled, and their pending match requests ended, when their last
//! realtime connection has been gone for the grace period, whichever node it was on; a
//! company's FIX session does the same for the orders of the parent orders it sent,
//! unless the company turned it off.
//!
//! Each node holds a presence lease per user with a session on it, and per FIX session it
//! holds (`presence`), renewed by its loop and ended when the last such session there
//! closes; a node that dies stops renewing, so its leases lapse. Whichever node's loop
//! sees a holder's last lease lapse writes a durable timer due a grace period later; the
//! timer pulls the orders only if the holder is still gone then. Each order is cancelled
//! in its own transaction with its owner's notification and its action-log row, so a
//! crash leaves every order working, or cancelled and told, never in between; the timer
//! runs again.

use chrono::Duration;
use serde_json::json;
use std::collections::{HashMap, HashSet};
use std::time::Duration as StdDuration;
use upstairs_domain::match_request::{MatchRequestEvent, MatchRequestState};
use upstairs_domain::order::{OrderEvent, OrderState, transition};
use upstairs_domain::{CompanyId, UserId};
use uuid::Uuid;

use crate::Store;
use crate::context::audit;
use crate::core::service;
use crate::error::EngineError;
use crate::matches::{By, Matches};
use crate::model::*;
use crate::ports::*;

/// The timer kind of a cancel on disconnect.
pub const CANCEL: &str = "disconnect.cancel";

/// How long a node's presence lease lasts unless renewed.
const LEASE: Duration = Duration::seconds(15);

/// How often the presence loop renews its leases when nobody arrives or leaves.
pub const RENEW_EVERY: StdDuration = StdDuration::from_secs(5);

/// What one cancel on disconnect ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pulled {
    pub match_requests: usize,
    pub orders: usize,
}

service!(
    /// Cancel on disconnect: presence leases across nodes, and the orders pulled.
    Disconnects { matches: Matches }
);

impl<S: Store> Disconnects<S> {
    /// One pass of the node's presence loop: renews its leases on the sessions here,
    /// ends those whose last session here closed, and schedules the cancel of every holder
    /// (who chose it) whose last lease anywhere has lapsed. Returns how many.
    pub async fn presence_pass(&self) -> Result<usize, EngineError> {
        let _one = self.presence.passes.lock().await;
        let now = self.clock.now();
        // Every lease each RENEW_EVERY; between, a pass a session's arrival woke writes the
        // newcomers' alone (the others were renewed less than RENEW_EVERY ago).
        let every = Duration::from_std(RENEW_EVERY).unwrap_or(Duration::seconds(5));
        let all = self.presence.all_due(now, every);
        let arrived = self.presence.take_arrived();
        let renew = if all { self.presence.here() } else { arrived };
        let left = self.presence.take_left();
        let grace = Duration::from_std(self.config.disconnect_grace).unwrap_or(Duration::seconds(10));
        let mut tx = self.store.write().await?;
        tx.renew_presence(self.node(), &renew, now + LEASE).await?;
        tx.release_presence(self.node(), &left, now).await?;
        let mut scheduled = 0;
        for (holder, until) in tx.take_lapsed_presence(now).await? {
            if tx.present(holder, now).await? {
                continue;
            }
            let (chosen, key, payload) = match holder {
                Holder::User(u) => (
                    tx.user(u).await?.is_some_and(|v| v.user.cancel_on_disconnect),
                    format!("{CANCEL}:user:{u}"),
                    json!({"user_id": u}),
                ),
                Holder::Fix(c) => (
                    tx.company(c).await?.is_some_and(|c| c.fix_cancel_on_disconnect),
                    format!("{CANCEL}:fix:{c}"),
                    json!({"fix_company_id": c}),
                ),
            };
            if !chosen {
                continue;
            }
            let timer = Timer {
                timer_id: Uuid::now_v7(),
                kind: CANCEL.into(),
                payload,
                due_at: until + grace,
                dedupe_key: Some(key.clone()),
                attempts: 0,
            };
            // Already pending (its sessions on another node ended earlier): counted from
            // the last one.
            if !tx.insert_timer(&timer).await? {
                tx.postpone_timer(&key, timer.due_at).await?;
            }
            scheduled += 1;
        }
        tx.commit().await?;
        if all {
            self.presence.renewed_all(now);
        }
        Ok(scheduled)
    }

    /// The node's presence loop, until `stop`: a pass when a session arrives or leaves,
    /// and every [`RENEW_EVERY`].
    pub async fn run_presence(self, mut stop: tokio::sync::watch::Receiver<bool>) {
        loop {
            if let Err(e) = self.presence_pass().await {
                tracing::warn!(error = %e, "presence pass failed; retried at the next");
            }
            tokio::select! {
                _ = self.presence.changed() => {}
                _ = tokio::time::sleep(RENEW_EVERY) => {}
                _ = stop.changed() => return,
            }
        }
    }

    /// Runs a cancel-on-disconnect timer: nothing when the holder came back meanwhile or
    /// no longer wants it.
    pub(crate) async fn run_cancel_timer(&self, timer: &Timer) -> Result<Pulled, EngineError> {
        let id = |key: &str| timer.payload.get(key).and_then(|v| v.as_str()).and_then(|s| Uuid::parse_str(s).ok());
        let holder = match (id("user_id"), id("fix_company_id")) {
            (Some(u), _) => Holder::User(UserId(u)),
            (None, Some(c)) => Holder::Fix(CompanyId(c)),
            _ => return Err(EngineError::Internal(format!("{} timer without its holder", timer.kind))),
        };
        if self.store.single().await?.present(holder, self.clock.now()).await? {
            return Ok(Pulled::default());
        }
        let pulled = match holder {
            Holder::User(u) => self.pull_user(u).await?,
            Holder::Fix(c) => self.pull_fix_session(c).await?,
        };
        tracing::info!(?holder, ?pulled, "cancel on disconnect");
        Ok(pulled)
    }

    /// A trader's working orders and pending match requests, when they chose it.
    async fn pull_user(&self, user: UserId) -> Result<Pulled, EngineError> {
        let view = self.store.single().await?.user(user).await?;
        let Some(view) = view.filter(|v| v.user.cancel_on_disconnect) else { return Ok(Pulled::default()) };
        let pending = self.store.single().await?.match_requests_of_user(user, MatchRequestState::Pending).await?;
        let filter = OrderFilter {
            company_id: Some(view.user.company_id),
            created_by: Some(user),
            states: vec![OrderState::Working],
            ..Default::default()
        };
        let working = self.store.single().await?.orders(&filter).await?;
        self.pull("The trader's last connection dropped.", view.user.company_id, pending, working).await
    }

    /// The working orders of the parent orders a company's FIX session sent, and their
    /// pending match requests, unless the company turned it off.
    async fn pull_fix_session(&self, company: CompanyId) -> Result<Pulled, EngineError> {
        let mut c = self.store.single().await?;
        if !c.company(company).await?.is_some_and(|c| c.fix_cancel_on_disconnect) {
            return Ok(Pulled::default());
        }
        let states = vec![OrderState::Working, OrderState::AwaitingMatch];
        let open = c.orders(&OrderFilter { company_id: Some(company), states, ..Default::default() }).await?;
        let mut parents: Vec<_> = open.iter().map(|o| o.parent_order_id).collect();
        parents.sort();
        parents.dedup();
        let sent: HashSet<_> = c.fix_parent_orders(&parents).await?.into_iter().map(|(p, _, _)| p).collect();
        let of_fix: HashMap<_, _> =
            open.into_iter().filter(|o| sent.contains(&o.parent_order_id)).map(|o| (o.order_id, o)).collect();
        let pending = c.match_requests_in_state(MatchRequestState::Pending).await?;
        drop(c);
        let own = |m: &MatchRequest| {
            if m.requesting_company_id == company { m.requesting_order_id } else { m.responding_order_id }
        };
        let pending: Vec<_> =
            pending.into_iter().filter(|m| crate::matches::party(m, company) && of_fix.contains_key(&own(m))).collect();
        let working = of_fix.into_values().filter(|o| o.state == OrderState::Working).collect();
        self.pull("The firm's FIX session dropped.", company, pending, working).await
    }

    /// Ends `pending` (withdrawn where `company` is the taker, declined where it is the
    /// responder: nobody is there to answer; each counterparty told as when done by hand),
    /// then cancels `working`, each order in its own transaction.
    async fn pull(
        &self,
        reason: &str,
        company: CompanyId,
        pending: Vec<MatchRequest>,
        working: Vec<ChildOrder>,
    ) -> Result<Pulled, EngineError> {
        let mut pulled = Pulled::default();
        let tolerated = |r: Result<(), EngineError>, n: &mut usize| match r {
            Ok(()) => {
                *n += 1;
                Ok(())
            }
            // Ended meanwhile by someone else.
            Err(EngineError::Conflict { .. } | EngineError::NotFound(_)) => Ok(()),
            Err(e) => Err(e),
        };
        for m in pending {
            let event =
                if m.requesting_company_id == company { MatchRequestEvent::Cancel } else { MatchRequestEvent::Reject };
            let done = self.matches.end_match_request(m, event, By::Venue).await.map(|_| ());
            tolerated(done, &mut pulled.match_requests)?;
        }
        for seen in working {
            let done = self.cancel_order(&seen, reason).await;
            tolerated(done, &mut pulled.orders)?;
        }
        Ok(pulled)
    }

    /// Cancels one working order whose holder is gone, with its owner's notification and
    /// the action-log row, in one transaction.
    async fn cancel_order(&self, seen: &ChildOrder, reason: &str) -> Result<(), EngineError> {
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let parent = tx.lock_parent_order(seen.parent_order_id).await?.map(|v| v.parent);
        // Read again under the parent's lock: what it is now is what the compare-and-set expects.
        let before = tx.order(seen.order_id).await?.ok_or_else(crate::orders::not_found_order)?;
        let gone = || EngineError::Conflict { detail: "The order is no longer working.".into(), errors: vec![] };
        if before.state != OrderState::Working {
            return Err(gone());
        }
        let state = transition(before.state, OrderEvent::Cancel).map_err(|_| gone())?;
        let after = ChildOrder { state, updated_at: now, ..before.clone() };
        tx.update_order(&before, &after).await?;
        let told = crate::notifications::cancelled_on_disconnect(&after, now);
        tx.insert_notification(&told).await?;
        audit(
            &mut tx,
            now,
            None,
            "order",
            Some(after.order_id.0),
            "cancel_on_disconnect",
            json!({"company_id": after.company_id, "user_id": after.created_by, "quantity": after.quantity,
                   "reason": reason}),
        )
        .await?;
        tx.commit().await?;
        crate::core::publish_order_told(self, &after, parent.as_ref(), told);
        Ok(())
    }
}
