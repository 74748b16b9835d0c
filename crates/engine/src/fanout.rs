//! Several nodes on one database (ADR 0026): what one node publishes after a commit is
//! announced to the others as kinds and ids; each reads the rest back, drops what its
//! caches hold of it and publishes it to its own sessions, exactly as if it had made the
//! change. A node skips its own announcements, so no session hears an event twice.

use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::events::{Announced, Announcement, Event};
use crate::ports::{Fanout, FanoutListener, InstrumentRepo, NotificationRepo, OrderRepo, Store};
use crate::{Core, EngineError};

/// How long a node waits before listening again after its connection broke.
const RELISTEN: Duration = Duration::from_secs(1);

impl<S: Store> Core<S> {
    /// This node's name in announcements and logs.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// Whether there can be other nodes on this database (PostgreSQL).
    pub fn has_peers(&self) -> bool {
        self.fanout.is_some()
    }

    /// False while this node should hear the other nodes but does not (its listening
    /// connection broke); `/readyz` says so.
    pub fn hears_peers(&self) -> bool {
        self.fanout.is_none() || self.listening.load(Ordering::Acquire)
    }

    /// Announcements this node could not queue (its queue was full), since start.
    pub fn announcements_dropped(&self) -> u64 {
        self.fanout.as_ref().map_or(0, |f| f.dropped())
    }

    pub(crate) fn announce(&self, event: &Event) {
        let Some(fanout) = &self.fanout else { return };
        tell(&**fanout, &self.node, Announced::of(event));
    }

    /// Starts hearing the other nodes: listens before returning (so nothing committed
    /// after this call is missed), then hears them on a task until `stop`. `None` where
    /// there are no other nodes.
    pub async fn hear_peers(&self, stop: watch::Receiver<bool>) -> Result<Option<JoinHandle<()>>, EngineError> {
        let Some(fanout) = self.fanout.clone() else { return Ok(None) };
        let first = fanout.listen().await?;
        self.listening.store(true, Ordering::Release);
        // A node skips its own announcements by their first bytes, unread.
        let hearing = Hearing(self.clone(), Announcement::prefix(&self.node));
        Ok(Some(tokio::spawn(async move { hearing.keep_hearing(first, stop).await })))
    }
}

/// Puts one announcement of `node` on the wire.
pub(crate) fn tell(fanout: &dyn Fanout, node: &str, what: Announced) {
    match serde_json::to_string(&Announcement { node: node.to_owned(), what }) {
        Ok(payload) => fanout.announce(payload),
        Err(e) => tracing::error!(error = %e, "could not encode an announcement"),
    }
}

/// The task that hears the other nodes, over the core it publishes to, and how this
/// node's own announcements begin.
struct Hearing<S: Store>(Core<S>, String);

impl<S: Store> std::ops::Deref for Hearing<S> {
    type Target = Core<S>;
    fn deref(&self) -> &Core<S> {
        &self.0
    }
}

impl<S: Store> Hearing<S> {
    async fn keep_hearing(self, mut listener: Box<dyn FanoutListener>, mut stop: watch::Receiver<bool>) {
        let Some(fanout) = self.fanout.clone() else { return };
        loop {
            loop {
                let next = tokio::select! {
                    _ = stop.changed() => return,
                    next = listener.recv() => next,
                };
                match next {
                    Ok(Some(packet)) => {
                        for payload in packet.lines().filter(|p| !p.starts_with(&self.1)) {
                            self.hear(payload).await;
                        }
                    }
                    Ok(None) => {
                        tracing::warn!("lost the connection that hears the other nodes");
                        break;
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot hear the other nodes");
                        break;
                    }
                }
            }
            self.listening.store(false, Ordering::Release);
            listener = loop {
                tokio::select! {
                    _ = stop.changed() => return,
                    _ = tokio::time::sleep(RELISTEN) => {}
                }
                match fanout.listen().await {
                    Ok(l) => break l,
                    Err(e) => tracing::warn!(error = %e, "cannot listen to the other nodes yet"),
                }
            };
            // What the others changed while this node was deaf may be in its caches.
            self.caches.drop_everything();
            self.listening.store(true, Ordering::Release);
            tracing::info!("hears the other nodes again");
        }
    }

    /// Acts on one announcement: skips this node's own, reads the rest back, publishes.
    async fn hear(&self, payload: &str) {
        let a = match serde_json::from_str::<Announcement>(payload) {
            Ok(a) => a,
            Err(e) => return tracing::warn!(error = %e, payload, "unreadable announcement"),
        };
        if *a.node == *self.node {
            return;
        }
        self.counters.announcements_heard.fetch_add(1, Ordering::Relaxed);
        if let Announced::FixQueued { company } = a.what {
            self.store.fix_bell().ring_here(&[company]);
            return;
        }
        if let Some(user) = a.what.only_for()
            && !self.presence.has(user)
        {
            // No session here hears of it: only what the caches hold matters.
            if let Announced::Parent { id, active: Some(false), .. } = a.what {
                self.caches.parents.drop_key(&id);
            }
            self.counters.announcements_skipped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        match self.event_of(a.what).await {
            Ok(Some(event)) => {
                self.caches.apply(&event);
                self.events.publish(event);
            }
            // Gone since (an expired session's row, say): nothing left to tell.
            Ok(None) => {}
            Err(e) => {
                // Its cache entries may be stale and no one can tell which: drop them all.
                tracing::warn!(error = %e, "could not read back an announced change");
                self.caches.drop_everything();
            }
        }
    }

    /// The event an announcement stands for, with what it carries read back.
    async fn event_of(&self, what: Announced) -> Result<Option<Event>, EngineError> {
        let read = || self.store.single();
        Ok(match what {
            Announced::Order { id, .. } => read().await?.order(id).await?.map(|o| Event::order_changed(&o)),
            // All it carries is said: its row is read by whoever shows it.
            Announced::Parent { id, user: Some(user_id), active: Some(active) } => {
                Some(Event::ParentOrderChanged { user_id, parent_order_id: id, active })
            }
            // From a node of an earlier version.
            Announced::Parent { id, .. } => {
                read().await?.parent_order(id).await?.map(|v| Event::parent_order_changed(&v.parent))
            }
            Announced::Book { id } => Some(Event::book_changed(id)),
            Announced::Instrument { id } => read().await?.instrument(id).await?.map(|i| Event::instrument_changed(&i)),
            Announced::Rfq { user, rfq, state, role } => {
                Some(Event::RfqChanged { user_id: user, rfq_id: rfq, state, role })
            }
            Announced::Allocation { id, user } => Some(Event::AllocationChanged { user_id: user, order_id: id }),
            Announced::Notification { id, .. } => read()
                .await?
                .notification(id)
                .await?
                .map(|n| Event::NotificationChanged { user_id: n.user_id, notification: n }),
            Announced::Company { id } => Some(Event::CompanyChanged { company_id: id }),
            Announced::CounterpartyFilters => Some(Event::CounterpartyFiltersChanged),
            Announced::Exchanges => Some(Event::ExchangesChanged),
            Announced::SessionsEnded { user } => Some(Event::sessions_ended(user)),
            Announced::User { user } => Some(Event::UserChanged { user_id: user }),
            // Rung as it is heard, never read back.
            Announced::FixQueued { .. } => None,
        })
    }
}
