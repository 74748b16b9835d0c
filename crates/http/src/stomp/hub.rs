//! The realtime hub of one node: listens to the engine's typed events, turns each into
//! its STOMP destination and JSON once, conflates book and order pushes, and fans the
//! result out to every session (which filters by user and subscription).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::task::JoinHandle;
use upstairs_domain::UserId;
use upstairs_engine::presence::{Presence, PresenceSlot};
use upstairs_engine::{BroadcastPublisher, Engine, Event, Store};

use super::book_push::{BookPusher, WINDOW};
use super::messages::{Outgoing, Sequences};
use super::order_push::{OrderChange, OrderFeed};
use super::rfq_push::RfqFeed;
use super::user_push::UserPusher;

/// How many encoded messages a slow session may fall behind before it drops some
/// (its screens poll as the fallback).
const SESSION_BUFFER: usize = 1024;

/// A handle on the running hub; sessions subscribe to it. The hub stops when the last
/// handle is dropped (the server has stopped).
#[derive(Clone)]
pub struct Hub {
    tx: broadcast::Sender<Outgoing>,
    _task: Arc<AbortOnDrop>,
    presence: Arc<Presence>,
    book_reads: Arc<AtomicU64>,
}

struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Hub {
    /// Starts listening to `events` (before returning, so no event after this call is missed).
    pub fn start<S: Store>(engine: Engine<S>, events: &BroadcastPublisher) -> Self {
        let rx = events.subscribe();
        let presence = engine.presence.clone();
        let (tx, _) = broadcast::channel(SESSION_BUFFER);
        let pushers = Pushers {
            presence: presence.clone(),
            orders: UserPusher::new(OrderFeed(engine.clone()), tx.clone(), WINDOW),
            rfqs: UserPusher::new(RfqFeed(engine.clone()), tx.clone(), WINDOW),
            books: BookPusher::new(engine, tx.clone(), WINDOW),
        };
        let book_reads = pushers.books.reads();
        let task = tokio::spawn(run(rx, tx.clone(), pushers));
        Self { tx, _task: Arc::new(AbortOnDrop(task)), presence, book_reads }
    }

    /// Books read back to push them since the node started (one per window per changed
    /// instrument, never per watcher).
    pub fn book_reads(&self) -> u64 {
        self.book_reads.load(Ordering::Relaxed)
    }

    /// Counts a session of `user`; `None` when the user already has `max` open here.
    pub fn open_session(&self, user: UserId, max: usize) -> Option<PresenceSlot> {
        self.presence.open(user, max)
    }

    /// Open STOMP sessions on this node.
    pub fn open_sessions(&self) -> usize {
        self.presence.total()
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Outgoing> {
        self.tx.subscribe()
    }
}

/// The pushers that read back what a frame carries: books per instrument, orders and
/// RFQs per user.
struct Pushers<S: Store> {
    books: BookPusher<Engine<S>>,
    orders: UserPusher<OrderFeed<S>>,
    rfqs: UserPusher<RfqFeed<S>>,
    /// Who has a session here: a user with none is pushed nothing, so nothing is read for
    /// them (a session that opens later reads its screens after it subscribes).
    presence: Arc<Presence>,
}

async fn run<S: Store>(
    mut rx: broadcast::Receiver<Event>,
    tx: broadcast::Sender<Outgoing>,
    Pushers { books, orders, rfqs, presence }: Pushers<S>,
) {
    // Numbers of each user's frames per destination (ADR 0029): this task alone sends them.
    let mut seqs = Sequences::default();
    loop {
        match rx.recv().await {
            Ok(Event::BookChanged { instrument_id }) => books.changed(instrument_id),
            Ok(Event::OrderChanged { user_id, order }) if presence.has(user_id) => {
                orders.changed(user_id, OrderChange::Order(order))
            }
            Ok(Event::ParentOrderChanged { user_id, parent_order_id, .. }) if presence.has(user_id) => {
                orders.changed(user_id, OrderChange::Parent(parent_order_id))
            }
            Ok(Event::AllocationChanged { user_id, order_id }) if presence.has(user_id) => {
                orders.changed(user_id, OrderChange::Allocation(order_id))
            }
            Ok(Event::RfqChanged { user_id, rfq_id, role, .. }) if presence.has(user_id) => {
                rfqs.changed(user_id, (rfq_id, role))
            }
            // No session of that user here: nothing to push, nothing to read.
            Ok(
                Event::OrderChanged { .. }
                | Event::ParentOrderChanged { .. }
                | Event::AllocationChanged { .. }
                | Event::RfqChanged { .. },
            ) => {}
            Ok(event) => {
                if let Some(out) = Outgoing::of(&event, &mut seqs) {
                    // No receiver means no session is connected.
                    let _ = tx.send(out);
                }
            }
            // Only encoding happens here, so this means a burst far beyond the buffer;
            // screens poll as the fallback.
            Err(RecvError::Lagged(n)) => tracing::warn!(missed = n, "realtime hub lagged behind the engine"),
            Err(RecvError::Closed) => return,
        }
    }
}
