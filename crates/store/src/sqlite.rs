//! SQLite backend: one file in WAL mode. Writes go through one writer connection and
//! queue in the process (the pool's fair wait), never in SQLite's busy handler; reads
//! use a pool of read-only connections.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::pool::PoolConnection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::types::Json;
use sqlx::{Sqlite, SqlitePool};
use std::str::FromStr;
use std::time::Duration;
use upstairs_domain::match_request::MatchRequestState;
use upstairs_domain::order::{Direction, OrderState};
use upstairs_domain::rfq::{ResponseState, RfqState};
use upstairs_domain::{
    CompanyId, InstrumentId, MatchRequestId, NotificationId, OrderId, ParentOrderId, RfqId, SessionId, UserId,
};
use upstairs_engine::StoreError;
use upstairs_engine::model::*;
use upstairs_engine::ports::*;
use uuid::Uuid;

use crate::adapt::{Dec, Ts};
use crate::conn::Conn;
use crate::group::PendingOrder;
use crate::map_err;
use crate::repos::{self as sql, shared_repos};
use crate::rows::*;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

const FOR_UPDATE: &str = "";
/// Whether one statement may write several tables: not in SQLite, whose statements cost
/// no round trip anyway.
const WRITES_IN_ONE_STATEMENT: bool = false;
const SKIP_LOCKED: &str = "";
const STRPOS: &str = "instr";
/// A stored price (text), and the bound `$5`, as numbers to compare: binary floating point,
/// whose rounding keeps the order of the exact values (p ≤ q gives real(p) ≤ real(q)), so
/// the comparison lets through every order within the bound; the engine's exact one decides.
const PRICE_AS_NUMBER: &str = "cast(price as real)";
const LIMIT_AS_NUMBER: &str = "cast($5 as real)";
const HAS_COMPANY_TYPE: &str = "exists (select 1 from json_each(c.roles) where value = $1)";
const HAS_USER_ROLE: &str = "exists (select 1 from json_each(u.roles) where value = $1)";
/// A company's brokers in order as one JSON array of `[id, name]` (read with the company).
macro_rules! company_brokers {
    () => {
        "(select json_group_array(json_array(lower(hex(b.company_id)), b.name) order by cb.position) \
     from company_broker cb join company b on b.company_id = cb.broker_id where cb.company_id = c.company_id)"
    };
}
/// A book's levels as one JSON array of `[side, price, company id, shown]`.
const BOOK_LEVELS: &str = "json_group_array(json_array(direction, price, lower(hex(company_id)), shown))";

/// Read connections: enough for the two cores' worth of request handlers, plus slack.
const READERS: u32 = 8;

/// The most orders one group commit of the order writer takes.
const MAX_ORDER_BATCH: usize = 32;

#[derive(Clone)]
pub struct SqliteStore {
    writer: SqlitePool,
    readers: SqlitePool,
    /// The order writer's queue (ADR 0019): orders arriving together commit together.
    orders: crate::group::Queues,
}

impl SqliteStore {
    /// Opens (creating the file and its folder when missing) and migrates.
    /// Writes a consistent copy of the database at `url` to the new file `to`, while the
    /// venue may keep running (`VACUUM INTO`: one read transaction, writers go on).
    pub async fn backup(url: &str, to: &std::path::Path) -> Result<(), StoreError> {
        use sqlx::ConnectOptions;
        if to.exists() {
            return Err(StoreError::Other(format!("{} exists already: choose a new file", to.display())));
        }
        let target = to.to_str().ok_or_else(|| StoreError::Other(format!("{} is not UTF-8", to.display())))?;
        let mut conn = SqliteConnectOptions::from_str(url)
            .map_err(map_err)?
            .read_only(true)
            .busy_timeout(Duration::from_secs(10))
            .connect()
            .await
            .map_err(map_err)?;
        sqlx::query("vacuum into ?").bind(target).execute(&mut conn).await.map_err(map_err)?;
        Ok(())
    }

    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let opts = SqliteConnectOptions::from_str(url)
            .map_err(map_err)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            // Only another process (e.g. `upstairs user create`) can hold the lock.
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true);
        if let Some(dir) = opts.get_filename().parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Other(format!("create {}: {e}", dir.display())))?;
        }
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .test_before_acquire(false)
            .acquire_timeout(Duration::from_secs(15))
            // A statement inside a transaction keeps the pages it changes in a statement
            // journal, to undo itself alone: in memory, not in a temporary file whose
            // writes were most of the writer's I/O under a batch of orders.
            .connect_with(opts.clone().pragma("temp_store", "memory"))
            .await
            .map_err(map_err)?;
        MIGRATOR.run(&writer).await.map_err(|e| StoreError::Other(format!("migrate: {e}")))?;
        let readers = SqlitePoolOptions::new()
            .max_connections(READERS)
            .test_before_acquire(false)
            .acquire_timeout(Duration::from_secs(15))
            .connect_with(opts.read_only(true))
            .await
            .map_err(map_err)?;
        let orders = crate::group::Queues::start(
            1,
            MAX_ORDER_BATCH,
            &writer,
            |w, h, b| Box::pin(write_orders(w, h, b)),
            crate::group::Run::OnOwnThread,
        );
        Ok(Self { writer, readers, orders })
    }
}

/// Writes one batch of orders with their audit rows on the writer connection (group
/// commit, [`crate::group`]): one transaction, one batch of statements, one commit, so
/// that the hand-overs between threads are paid once per batch too. The connection stays
/// in `held` for the next batch while orders wait.
async fn write_orders(
    writer: &SqlitePool,
    held: &mut Option<PoolConnection<Sqlite>>,
    batch: &[PendingOrder],
) -> Vec<StoreResult<bool>> {
    let mut conn = match held.take() {
        Some(c) => c,
        None => match writer.acquire().await {
            Ok(c) => c,
            Err(e) => return writer_failed(batch, &e),
        },
    };
    if batch.len() > 1 {
        match run_order_batch(&mut conn, batch).await {
            Ok(written) => {
                *held = Some(conn);
                return batch.iter().map(|p| Ok(written.contains(&p.order.order_id.0))).collect();
            }
            Err(_) => {
                if !end_transaction(&mut conn).await {
                    drop(conn);
                    conn = match writer.acquire().await {
                        Ok(c) => c,
                        Err(e) => return writer_failed(batch, &e),
                    };
                }
            }
        }
    }
    let mut out = Vec::with_capacity(batch.len());
    for (n, p) in batch.iter().enumerate() {
        let r = run_order_batch(&mut conn, std::slice::from_ref(p)).await;
        out.push(match r {
            Ok(written) => Ok(written.contains(&p.order.order_id.0)),
            Err(e) => {
                if !end_transaction(&mut conn).await {
                    drop(conn);
                    conn = match writer.acquire().await {
                        Ok(c) => c,
                        Err(e2) => {
                            out.push(Err(map_err(e)));
                            out.extend(writer_failed(&batch[n + 1..], &e2));
                            return out;
                        }
                    };
                }
                Err(map_err(e))
            }
        });
    }
    *held = Some(conn);
    out
}

fn writer_failed(batch: &[PendingOrder], e: &sqlx::Error) -> Vec<StoreResult<bool>> {
    batch.iter().map(|_| Err(StoreError::Other(format!("order writer: {e}")))).collect()
}

/// One transaction of orders and their audit rows in one call to the writer's thread, two
/// statements for the batch (sqlx binds `$N` by number in every statement); returns the
/// ids of the orders written (an order into a parent no longer in the state asked for is
/// not, nor its audit row).
async fn run_order_batch(conn: &mut PoolConnection<Sqlite>, batch: &[PendingOrder]) -> Result<Vec<Uuid>, sqlx::Error> {
    let query = format!("begin immediate; {}; commit", sql::insert_orders_if_parent(batch.len()));
    let mut q = sqlx::query(sqlx::AssertSqlSafe(query));
    for p in batch {
        q = bind_action_log(bind_order(q, &p.order).bind(p.parent_state.as_str()), &p.log);
    }
    let rows = q.fetch_all(&mut **conn).await?;
    rows.iter().map(|r| sqlx::Row::try_get::<Uuid, _>(r, 0)).collect()
}

/// Ends a transaction a failed batch may have left open; false when the connection
/// cannot be trusted any more (it is then closed instead of going back to the pool).
async fn end_transaction(conn: &mut PoolConnection<Sqlite>) -> bool {
    match sqlx::query("rollback").execute(&mut **conn).await {
        Ok(_) => true,
        // No transaction was open: the failure came before `begin` or after `commit`.
        Err(e) if e.to_string().contains("no transaction is active") => true,
        Err(_) => {
            conn.close_on_drop();
            false
        }
    }
}

pub struct SqliteTx {
    tx: Conn<Sqlite>,
    memo: crate::conn::Memo,
}

#[async_trait]
impl Store for SqliteStore {
    type Tx = SqliteTx;

    async fn write(&self) -> StoreResult<SqliteTx> {
        let tx = match self.writer.begin_with("BEGIN IMMEDIATE").await {
            // The writer's rollback of an earlier transaction failed (a read-only file, a full
            // disk), so the connection still counts itself inside it: close it, open another.
            Err(sqlx::Error::InvalidSavePointStatement) => {
                let mut stuck = self.writer.acquire().await.map_err(map_err)?;
                stuck.close_on_drop();
                drop(stuck);
                self.writer.begin_with("BEGIN IMMEDIATE").await
            }
            other => other,
        };
        Ok(SqliteTx { tx: Conn::Tx(tx.map_err(map_err)?), memo: Default::default() })
    }

    async fn read(&self) -> StoreResult<SqliteTx> {
        Ok(SqliteTx { tx: Conn::Tx(self.readers.begin().await.map_err(map_err)?), memo: Default::default() })
    }

    async fn single(&self) -> StoreResult<SqliteTx> {
        Ok(SqliteTx { tx: Conn::Single(self.readers.acquire().await.map_err(map_err)?), memo: Default::default() })
    }

    async fn file_fix_message(&self, m: &FiledFixMessage) -> StoreResult<()> {
        file_fix_message_on(&self.writer, m).await
    }

    async fn touch_band(
        &self,
        id: InstrumentId,
        min: rust_decimal::Decimal,
        max: rust_decimal::Decimal,
        at: DateTime<Utc>,
    ) -> StoreResult<bool> {
        touch_band_on(&self.writer, id, min, max, at).await
    }

    async fn insert_order_audited(
        &self,
        o: &ChildOrder,
        parent_state: ParentState,
        log: &ActionLog,
    ) -> StoreResult<bool> {
        self.orders.submit(o, parent_state, log).await
    }

    fn backend(&self) -> &'static str {
        "sqlite"
    }

    fn one_writer(&self) -> bool {
        true
    }

    fn pool_use(&self) -> (u32, u32) {
        let open = self.writer.size() + self.readers.size();
        let idle = u32::try_from(self.writer.num_idle() + self.readers.num_idle()).unwrap_or(u32::MAX);
        (open.saturating_sub(idle), open)
    }
}

#[async_trait]
impl Tx for SqliteTx {
    async fn commit(self) -> StoreResult<()> {
        self.tx.commit().await
    }
}

shared_repos!(SqliteTx, Sqlite);
