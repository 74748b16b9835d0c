//! Announcements between nodes on one PostgreSQL database: `NOTIFY` on one channel per
//! schema, `LISTEN` on a connection of the pool's (ADR 0026).

use async_trait::async_trait;
use sqlx::PgPool;
use sqlx::postgres::PgListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;
use upstairs_engine::ports::{Fanout, FanoutListener, StoreResult};

use crate::map_err;

/// Announcements waiting to be sent, at most; past it they are dropped and counted.
const QUEUE: usize = 65_536;
/// Announcements sent in one statement, at most.
const BATCH: usize = 1024;
/// The least time between two statements of announcements (ADR 0053).
const GAP: Duration = Duration::from_millis(2);
/// A packet's length at most: PostgreSQL refuses a NOTIFY payload of 8000 bytes or more.
const PACKET: usize = 7900;

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
    let mut last = Instant::now() - GAP;
    while rx.recv_many(&mut batch, BATCH).await > 0 {
        // At most one statement per GAP: under load each carries many announcements
        // (each is a transaction of its own, with an id, for every node to wake up to);
        // after a quiet GAP the first goes at once.
        let wait = (last + GAP).saturating_duration_since(Instant::now());
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
            while batch.len() < BATCH
                && let Ok(more) = rx.try_recv()
            {
                batch.push(more);
            }
        }
        last = Instant::now();
        // One statement, one transaction: the batch reaches the listeners in this order,
        // packed one announcement per line (each notification costs every listener a
        // wake-up, and a node hears its own too). NOTIFY gives its transaction an id, so
        // its commit would wait for a WAL flush like a write's: it need not (a crash ends
        // every listening connection anyway, and the listeners then drop their caches).
        let sent = sqlx::query(
            "select pg_notify($1, p) from (select set_config('synchronous_commit', 'off', true)) s, \
             unnest($2::text[]) with ordinality as t(p, n) order by n",
        )
        .bind(&channel)
        .bind(pack(&batch))
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

/// The announcements in order, one per line, in packets under [`PACKET`] bytes (one
/// longer than that alone in its packet, which PostgreSQL refuses: it is lost, and logged).
fn pack(batch: &[String]) -> Vec<String> {
    let mut packets: Vec<String> = Vec::new();
    for a in batch {
        match packets.last_mut() {
            Some(p) if p.len() + 1 + a.len() <= PACKET => {
                p.push('\n');
                p.push_str(a);
            }
            _ => packets.push(a.clone()),
        }
    }
    packets
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announcements_are_packed_in_order_under_the_limit() {
        let small: Vec<String> = (0..3).map(|n| format!("a{n}")).collect();
        assert_eq!(pack(&small), vec!["a0\na1\na2".to_owned()]);
        let big = "x".repeat(3000);
        let batch = vec![big.clone(), big.clone(), big.clone(), "y".into()];
        let packets = pack(&batch);
        assert_eq!(packets, vec![format!("{big}\n{big}"), format!("{big}\ny")]);
        assert!(packets.iter().all(|p| p.len() <= PACKET));
        let huge = "z".repeat(PACKET + 1);
        assert_eq!(pack(&["a".into(), huge.clone(), "b".into()]), vec!["a".to_owned(), huge, "b".to_owned()]);
        assert!(pack(&[]).is_empty());
    }
}
