//! Group commit of order writes (ADR 0019, ADR 0040): `insert_order_audited` queues its
//! order, and a writer takes every order waiting when it is free into one transaction,
//! so that the round trips, the statement's overheads and the commit are paid once per
//! batch instead of once per order. Each order is still conditioned on its own parent;
//! a batch that fails is written again one order at a time, so that only the order at
//! fault gets the error.

use std::future::Future;
use std::pin::Pin;
use tokio::sync::{mpsc, oneshot};
use upstairs_engine::StoreError;
use upstairs_engine::model::{ActionLog, ChildOrder, ParentState};
use upstairs_engine::ports::StoreResult;

/// One `insert_order_audited` waiting for a writer.
pub(crate) struct PendingOrder {
    pub order: ChildOrder,
    /// The instrument's minimum block ([`ChildOrder::shown`]).
    pub block: i64,
    pub parent_state: ParentState,
    pub log: ActionLog,
    pub reply: oneshot::Sender<StoreResult<bool>>,
}

/// The writers' queues: an instrument's orders always go to the same writer, so that two
/// batches written at once touch no common parent or book level (every parent and level
/// belongs to one instrument) and cannot deadlock on each other's row locks (ADR 0040).
#[derive(Clone)]
pub(crate) struct Queues(Vec<mpsc::UnboundedSender<PendingOrder>>);

/// Writes one batch on `P` (a pool) and answers, in order, whether each order was written.
/// `H` is what the writer may keep between batches while more orders wait (SQLite's one
/// write connection, whose every hand-back to the pool costs a round trip to its thread);
/// the writer lets it go when its queue is empty, or after [`MAX_TURNS`] batches in a row
/// so that the other writes waiting for it get their turn.
pub(crate) type WriteBatch<P, H> = for<'a> fn(
    &'a P,
    &'a mut Option<H>,
    &'a [PendingOrder],
) -> Pin<Box<dyn Future<Output = Vec<StoreResult<bool>>> + Send + 'a>>;

/// The most batches a writer writes in a row on what it keeps.
const MAX_TURNS: usize = 8;

/// Where a writer runs.
pub(crate) enum Run {
    /// A task on the caller's runtime (PostgreSQL: its connections belong to that
    /// runtime's I/O driver).
    OnRuntime,
    /// Its own thread with a runtime of its own (SQLite, whose connections are threads
    /// reached over channels), so that its wake-ups do not wait behind HTTP requests.
    OnOwnThread,
}

impl Queues {
    /// Starts `writers` writers on `pool`, each with its queue, where `run` says: every
    /// order waiting when a writer is free is one batch (at most `max_batch`) for `write`.
    /// They end when the store is dropped.
    pub fn start<P: Send + Sync + Clone + 'static, H: Send + 'static>(
        writers: usize,
        max_batch: usize,
        pool: &P,
        write: WriteBatch<P, H>,
        run: Run,
    ) -> Self {
        let senders = (0..writers.max(1))
            .map(|_| {
                let (sender, mut queue) = mpsc::unbounded_channel();
                let pool = pool.clone();
                let work = async move {
                    let mut batch = Vec::with_capacity(max_batch);
                    let (mut held, mut turns) = (None, 0);
                    while queue.recv_many(&mut batch, max_batch).await > 0 {
                        let results = write(&pool, &mut held, &batch).await;
                        answer(&mut batch, results);
                        turns += 1;
                        if queue.is_empty() || turns == MAX_TURNS {
                            (held, turns) = (None, 0);
                        }
                    }
                };
                match run {
                    Run::OnRuntime => drop(tokio::spawn(work)),
                    Run::OnOwnThread => {
                        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
                        let runtime = runtime.expect("a current-thread runtime");
                        std::thread::Builder::new()
                            .name("order-writer".into())
                            .spawn(move || runtime.block_on(work))
                            .expect("the order writer's thread");
                    }
                }
                sender
            })
            .collect();
        Self(senders)
    }

    /// Queues the order and waits for its writer's answer: whether it was written (false
    /// when its parent is no longer in `parent_state`, or its company's trading is stopped).
    pub async fn submit(
        &self,
        order: &ChildOrder,
        block: i64,
        parent_state: ParentState,
        log: &ActionLog,
    ) -> StoreResult<bool> {
        let (reply, answer) = oneshot::channel();
        let pending = PendingOrder { order: order.clone(), block, parent_state, log: log.clone(), reply };
        let writer = (order.instrument_id.0.as_u128() % self.0.len() as u128) as usize;
        self.0[writer].send(pending).map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

fn stopped() -> StoreError {
    StoreError::Other("the order writer has stopped".into())
}

/// Answers each order of a written batch, in order.
fn answer(batch: &mut Vec<PendingOrder>, results: Vec<StoreResult<bool>>) {
    for (pending, result) in batch.drain(..).zip(results) {
        // The caller may have gone (a dropped request): its order is written all the same.
        let _ = pending.reply.send(result);
    }
}
