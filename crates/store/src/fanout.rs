//! Announcements between nodes on one PostgreSQL database: `NOTIFY` on one channel per
//! schema, `LISTEN` on a connection of the pool's (ADR 0026).

use async_trait::async_trait;
use sqlx::PgPool;
use sqlx::postgres::PgListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::mpsc;
use upstairs_engine::ports::{Fanout, FanoutListener, StoreResult};

use crate::map_err;

/// Announcements waiting to be sent, at most; past it they are dropped and counted.
const QUEUE: usize = 65_536;
/// Announcements sent in one statement, at most.
const BATCH: usize = 256;

pub struct PgFanout {
    pool: PgPool,
    channel: String,
    queue: mpsc::Sender<String>,
    dropped: Arc<AtomicU64>,
}

impl PgFanout {
    /// Starts the task that sends what is announced, in order, batched; it ends when the
    /// last handle is dropped.
    pub fn start(pool: PgPool, channel: String) -> Self {
        let (queue, rx) = mpsc::channel(QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        tokio::spawn(send(pool.clone(), channel.clone(), rx, dropped.clone()));
        Self { pool, channel, queue, dropped }
    }
}

async fn send(pool: PgPool, channel: String, mut rx: mpsc::Receiver<String>, dropped: Arc<AtomicU64>) {
    let mut batch = Vec::with_capacity(BATCH);
    while rx.recv_many(&mut batch, BATCH).await > 0 {
        // One statement, one transaction: the batch reaches the listeners in this order.
        let sent = sqlx::query("select pg_notify($1, p) from unnest($2::text[]) with ordinality as t(p, n) order by n")
            .bind(&channel)
            .bind(&batch)
            .execute(&pool)
            .await;
        if let Err(e) = sent {
            // The other nodes' screens miss these changes until they read again.
            tracing::warn!(error = %e, lost = batch.len(), "could not announce changes to the other nodes");
            dropped.fetch_add(batch.len() as u64, Ordering::Relaxed);
        }
        batch.clear();
    }
}

#[async_trait]
impl Fanout for PgFanout {
    fn announce(&self, payload: String) {
        if self.queue.try_send(payload).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    async fn listen(&self) -> StoreResult<Box<dyn FanoutListener>> {
        let mut l = PgListener::connect_with(&self.pool).await.map_err(map_err)?;
        // A lost connection is told to the engine, which listens again itself.
        l.eager_reconnect(false);
        l.listen(&self.channel).await.map_err(map_err)?;
        Ok(Box::new(Listening(l)))
    }

    fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

struct Listening(PgListener);

#[async_trait]
impl FanoutListener for Listening {
    async fn recv(&mut self) -> StoreResult<Option<String>> {
        Ok(self.0.try_recv().await.map_err(map_err)?.map(|n| n.payload().to_owned()))
    }
}
