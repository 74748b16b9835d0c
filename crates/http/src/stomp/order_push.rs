//! Order pushes (ADR 0029): a change of one of a user's child or parent orders reaches
//! their `/user/topic/orders` as the row their lists show, so the screen writes it in
//! instead of reading its lists again. A child order comes with the event; a parent's
//! quantities are kept by the database, so its row is read back: changes are gathered per
//! user and read at most once per window, in one statement for all of that user's changed
//! parents, and the last frame always shows the state after the last change. Frames are
//! numbered per user; a read that fails skips a number, so the screen reads its lists.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::broadcast;
use tokio::time::Instant;
use upstairs_domain::{ParentOrderId, UserId};
use upstairs_engine::model::ChildOrder;
use upstairs_engine::{Engine, Store};

use super::messages::{Audience, ORDERS, OrderMessage, OrderUpdated, Outgoing, ParentOrderUpdated, Sequences};
use crate::routes::orders::{OrderDto, ParentOrderDto};

/// Reads what the owner's lists show of changed orders: each child order as listed, and
/// the current rows of the parents (those found).
pub trait OrderSource: Send + Sync + 'static {
    fn read(
        &self,
        orders: Vec<ChildOrder>,
        parents: BTreeSet<ParentOrderId>,
    ) -> impl Future<Output = Result<(Vec<OrderDto>, Vec<ParentOrderDto>), String>> + Send;
}

impl<S: Store> OrderSource for Engine<S> {
    async fn read(
        &self,
        orders: Vec<ChildOrder>,
        parents: BTreeSet<ParentOrderId>,
    ) -> Result<(Vec<OrderDto>, Vec<ParentOrderDto>), String> {
        let (orders, parents) = self.orders.pushed(orders, &parents).await.map_err(|e| e.to_string())?;
        Ok((orders.into_iter().map(OrderDto::from).collect(), parents.into_iter().map(ParentOrderDto::from).collect()))
    }
}

/// One user's changes not pushed yet: the latest row of each child order, in the order
/// they first changed, and the parents that changed.
#[derive(Default)]
struct Queue {
    orders: Vec<ChildOrder>,
    parents: BTreeSet<ParentOrderId>,
}

impl Queue {
    fn is_empty(&self) -> bool {
        self.orders.is_empty() && self.parents.is_empty()
    }

    /// Keeps the later of two rows of one order (two writers may publish out of order).
    fn order(&mut self, o: ChildOrder) {
        match self.orders.iter_mut().find(|q| q.order_id == o.order_id) {
            Some(q) if q.updated_at <= o.updated_at => *q = o,
            Some(_) => {}
            None => self.orders.push(o),
        }
    }
}

/// Users with a pusher task, each with the changes that came since its last read.
type Pending = Arc<Mutex<HashMap<UserId, Queue>>>;

/// Turns order and parent order changes into frames on each user's `/user/topic/orders`.
///
/// One task per user with changes in flight: it pushes at once when the user's orders
/// were quiet, then at most once per `window` while changes keep coming, and ends after a
/// quiet window.
pub struct OrderPusher<B> {
    source: Arc<B>,
    out: broadcast::Sender<Outgoing>,
    pending: Pending,
    seqs: Arc<Mutex<Sequences<UserId>>>,
    window: Duration,
}

impl<B> Clone for OrderPusher<B> {
    fn clone(&self) -> Self {
        Self {
            source: self.source.clone(),
            out: self.out.clone(),
            pending: self.pending.clone(),
            seqs: self.seqs.clone(),
            window: self.window,
        }
    }
}

impl<B: OrderSource> OrderPusher<B> {
    pub fn new(source: B, out: broadcast::Sender<Outgoing>, window: Duration) -> Self {
        Self { source: Arc::new(source), out, pending: Arc::default(), seqs: Arc::default(), window }
    }

    /// `user`'s child order changed to `order`: push it soon.
    pub fn order_changed(&self, user: UserId, order: ChildOrder) {
        self.queue(user, |q| q.order(order));
    }

    /// One of `user`'s parent orders changed: read and push it soon.
    pub fn parent_changed(&self, user: UserId, parent: ParentOrderId) {
        self.queue(user, |q| {
            q.parents.insert(parent);
        });
    }

    fn queue(&self, user: UserId, change: impl FnOnce(&mut Queue)) {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        match pending.get_mut(&user) {
            // Its task will see it before it ends.
            Some(queue) => change(queue),
            None => {
                let mut queue = Queue::default();
                change(&mut queue);
                pending.insert(user, queue);
                tokio::spawn(self.clone().run(user));
            }
        }
    }

    async fn run(self, user: UserId) {
        let mut next = Instant::now();
        loop {
            tokio::time::sleep_until(next).await;
            let queue = {
                let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
                let queue = pending.entry(user).or_default();
                if queue.is_empty() {
                    // A quiet window: end; the next change starts a new task (under this lock).
                    pending.remove(&user);
                    return;
                }
                // Taken before the read: a change from now on is pushed by a later round.
                std::mem::take(queue)
            };
            let read = self.source.read(queue.orders, queue.parents).await;
            let mut seqs = self.seqs.lock().unwrap_or_else(PoisonError::into_inner);
            match read {
                Ok((orders, parents)) => {
                    let orders =
                        orders.into_iter().map(|order| OrderMessage::OrderUpdated(OrderUpdated { seq: 0, order }));
                    let parents = parents
                        .into_iter()
                        .map(|parent| OrderMessage::ParentOrderUpdated(ParentOrderUpdated { seq: 0, parent }));
                    for mut message in orders.chain(parents) {
                        let seq = seqs.next(user, ORDERS);
                        match &mut message {
                            OrderMessage::OrderUpdated(m) => m.seq = seq,
                            OrderMessage::ParentOrderUpdated(m) => m.seq = seq,
                        }
                        // No receiver means no session is connected.
                        if let Some(m) = Outgoing::message(Audience::User(user), ORDERS, &message) {
                            let _ = self.out.send(m);
                        }
                    }
                }
                Err(e) => {
                    // A number skipped: the user's next frame tells the screen to read its lists.
                    seqs.next(user, ORDERS);
                    tracing::warn!(error = %e, %user, "could not read the orders to push");
                }
            }
            drop(seqs);
            next = Instant::now() + self.window;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use rust_decimal::Decimal;
    use upstairs_domain::order::{Direction, OrderState};
    use upstairs_domain::{CompanyId, InstrumentId, OrderId};

    /// Lists rows as the engine would, counting the reads of parents; fails when `fail`.
    #[derive(Clone, Default)]
    struct FakeSource {
        parent_reads: Arc<Mutex<Vec<BTreeSet<ParentOrderId>>>>,
        fail: Arc<std::sync::atomic::AtomicBool>,
    }

    impl OrderSource for FakeSource {
        async fn read(
            &self,
            orders: Vec<ChildOrder>,
            parents: BTreeSet<ParentOrderId>,
        ) -> Result<(Vec<OrderDto>, Vec<ParentOrderDto>), String> {
            if self.fail.load(std::sync::atomic::Ordering::SeqCst) {
                return Err("database gone".into());
            }
            if !parents.is_empty() {
                self.parent_reads.lock().unwrap().push(parents.clone());
            }
            let orders = orders
                .into_iter()
                .map(|order| {
                    OrderDto::from(upstairs_engine::orders::OrderDetail {
                        order,
                        matchable: true,
                        waiting_for_open: false,
                    })
                })
                .collect();
            let parents = parents
                .into_iter()
                .map(|id| ParentOrderDto {
                    parent_order_id: id.0,
                    instrument_id: uuid::Uuid::nil(),
                    direction: Direction::Buy,
                    quantity: 1000,
                    quantities: crate::routes::orders::QuantitiesDto { tradable: 500, working: 500, matched: 0 },
                    state: "ACTIVE".into(),
                    broker_instructions: None,
                    eligible_brokers: vec![],
                    created_by: uuid::Uuid::nil(),
                    created_at: Utc::now(),
                    updated_at: Utc::now(),
                })
                .collect();
            Ok((orders, parents))
        }
    }

    fn order(user: UserId, state: OrderState, at: chrono::DateTime<Utc>) -> ChildOrder {
        ChildOrder {
            order_id: OrderId::new(),
            parent_order_id: ParentOrderId::new(),
            company_id: CompanyId::new(),
            created_by: user,
            instrument_id: InstrumentId::new(),
            direction: Direction::Buy,
            state,
            price: Decimal::new(9470, 2),
            quantity: 1000,
            iceberg: false,
            residual: true,
            broker_id: CompanyId::new(),
            created_at: at,
            updated_at: at,
        }
    }

    fn frames(rx: &mut broadcast::Receiver<Outgoing>) -> Vec<(Audience, serde_json::Value)> {
        let mut out = Vec::new();
        while let Ok(m) = rx.try_recv() {
            let Outgoing::Message { audience, destination, body } = m else { panic!("not a message") };
            assert_eq!(&*destination, ORDERS);
            out.push((audience, serde_json::from_slice(&body).unwrap()));
        }
        out
    }

    /// Lets the spawned tasks run until they wait on the (paused) clock.
    async fn settle() {
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_is_read_once_and_pushed_as_the_rows_in_order() {
        let (tx, mut rx) = broadcast::channel(64);
        let source = FakeSource::default();
        let pusher = OrderPusher::new(source.clone(), tx, Duration::from_millis(50));
        let (user, other) = (UserId::new(), UserId::new());
        let now = Utc::now();
        let first = order(user, OrderState::Working, now);
        let parent = first.parent_order_id;

        // The first change of a quiet user goes out at once.
        pusher.order_changed(user, first.clone());
        pusher.parent_changed(user, parent);
        settle().await;
        let got = frames(&mut rx);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].0, Audience::User(user));
        assert_eq!(
            (&got[0].1["type"], &got[0].1["seq"], &got[0].1["state"], &got[0].1["matchable"]),
            (&"ORDER_UPDATED".into(), &1.into(), &"WORKING".into(), &true.into())
        );
        assert_eq!(got[0].1["order_id"], first.order_id.0.to_string());
        assert_eq!((&got[1].1["type"], &got[1].1["seq"]), (&"PARENT_ORDER_UPDATED".into(), &2.into()));
        assert_eq!(got[1].1["quantities"]["working"], 500);

        // A burst within the window: one read of both parents, the latest row of the order
        // (an older row published late is not pushed over it), numbered on.
        let later = ChildOrder {
            state: OrderState::Cancelled,
            updated_at: now + chrono::Duration::seconds(2),
            ..first.clone()
        };
        let stale =
            ChildOrder { state: OrderState::Matched, updated_at: now + chrono::Duration::seconds(1), ..first.clone() };
        let second = ParentOrderId::new();
        pusher.order_changed(user, later);
        pusher.order_changed(user, stale);
        pusher.parent_changed(user, parent);
        pusher.parent_changed(user, second);
        pusher.order_changed(other, order(other, OrderState::Working, now));
        settle().await;
        let got = frames(&mut rx);
        assert_eq!(got.len(), 1, "the other user's first frame at once, {got:?}");
        assert_eq!((got[0].0, &got[0].1["seq"]), (Audience::User(other), &1.into()));
        tokio::time::advance(Duration::from_millis(50)).await;
        settle().await;
        let got = frames(&mut rx);
        let seen: Vec<_> = got.iter().map(|(_, b)| (b["type"].clone(), b["seq"].clone())).collect();
        assert_eq!(
            seen,
            vec![
                ("ORDER_UPDATED".into(), 3.into()),
                ("PARENT_ORDER_UPDATED".into(), 4.into()),
                ("PARENT_ORDER_UPDATED".into(), 5.into())
            ]
        );
        assert_eq!(got[0].1["state"], "CANCELLED");
        let reads = source.parent_reads.lock().unwrap().clone();
        assert_eq!(reads, vec![BTreeSet::from([parent]), BTreeSet::from([parent, second])]);

        // A quiet window ends the user's task; the next change goes out at once again.
        tokio::time::advance(Duration::from_millis(50)).await;
        settle().await;
        assert!(!pusher.pending.lock().unwrap().contains_key(&user));
        pusher.parent_changed(user, parent);
        settle().await;
        assert_eq!(frames(&mut rx)[0].1["seq"], 6);
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_read_skips_a_number() {
        let (tx, mut rx) = broadcast::channel(64);
        let source = FakeSource::default();
        let pusher = OrderPusher::new(source.clone(), tx, Duration::from_millis(50));
        let user = UserId::new();
        source.fail.store(true, std::sync::atomic::Ordering::SeqCst);
        pusher.parent_changed(user, ParentOrderId::new());
        settle().await;
        assert!(frames(&mut rx).is_empty());
        source.fail.store(false, std::sync::atomic::Ordering::SeqCst);
        pusher.parent_changed(user, ParentOrderId::new());
        tokio::time::advance(Duration::from_millis(50)).await;
        settle().await;
        // Number 1 was never sent: the screen sees 2 and reads its lists again.
        let got = frames(&mut rx);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].1["seq"], 2);
    }
}
