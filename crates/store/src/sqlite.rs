//! SQLite backend: one file in WAL mode. Writes go through one writer connection and
//! queue in the process (the pool's fair wait), never in SQLite's busy handler (the order
//! writer writes on a connection of its own while it holds that one); reads use a pool
//! of read-only connections.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::pool::PoolConnection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::types::Json;
use sqlx::{Sqlite, SqlitePool};
use std::str::FromStr;
use std::sync::Arc;
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
const FOR_NO_KEY_UPDATE: &str = "";
/// The write transaction already holds the only write lock.
const HOLD_BLOCK: &str = "select min_quantity from instrument where instrument_id = $1";
/// Whether one statement may write several tables: not in SQLite, whose statements cost
/// no round trip anyway.
const WRITES_IN_ONE_STATEMENT: bool = false;
const SKIP_LOCKED: &str = "";
const STRPOS: &str = "instr";
/// A resting order's place on its side, best first, as `child_order_facing` holds it (its
/// stored price (text) as a number, negated for a buy), and the bound `$3` as a number:
/// binary floating point, whose rounding keeps the order of the exact values (p ≤ q gives
/// real(p) ≤ real(q)), so the comparison lets through every order within the bound; the
/// engine's exact one decides.
const FACING_KEY: &str = "case c.direction when 'BUY' then -cast(c.price as real) else cast(c.price as real) end";
const LIMIT_AS_NUMBER: &str = "cast($3 as real)";
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
    /// Rung after each commit that queued FIX messages.
    bell: Arc<upstairs_engine::ports::FixBell>,
    writer: SqlitePool,
    readers: SqlitePool,
    /// The order writer's queue (ADR 0019): orders arriving together commit together.
    orders: crate::group::Queues,
}

impl SqliteStore {
    /// The pool every write goes through (one connection).
    pub fn pool(&self) -> &SqlitePool {
        &self.writer
    }

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

    /// Opens (creating the file and its folder when missing) and migrates.
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
            .connect_with(opts.clone().read_only(true))
            .await
            .map_err(map_err)?;
        let db = OrderDb::open(opts.get_filename()).map_err(map_sqlite_err)?;
        let order_writer = OrderWriter { pool: writer.clone(), db: std::sync::Arc::new(db.into()) };
        let orders = crate::group::Queues::start(
            1,
            MAX_ORDER_BATCH,
            &order_writer,
            |w, h, b| Box::pin(write_orders(w, h, b)),
            crate::group::Run::OnOwnThread,
        );
        Ok(Self { writer, readers, orders, bell: Default::default() })
    }
}

/// The order writer (ADR 0019, 0054, 0055): a connection of its own to the file, driven
/// on the writer's own thread with no hop to another (sqlx runs each of its connections on
/// a thread of its own, reached over channels). While it writes it holds the pool's one
/// write connection, unused, so that no other write runs meanwhile: writes still queue in
/// the process, never in SQLite's busy handler.
#[derive(Clone)]
struct OrderWriter {
    pool: SqlitePool,
    db: std::sync::Arc<std::sync::Mutex<OrderDb>>,
}

struct OrderDb {
    conn: rusqlite::Connection,
    path: std::path::PathBuf,
    /// The two statements of a batch of `n` orders, at `n - 1`, made once.
    sql: Vec<Option<[String; 2]>>,
}

impl OrderDb {
    fn open(path: &std::path::Path) -> rusqlite::Result<Self> {
        use rusqlite::OpenFlags;
        let conn = rusqlite::Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        // As the pool's connections: WAL (the file's own setting), NORMAL, foreign keys,
        // and statement journals in memory (ADR 0054).
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        conn.set_prepared_statement_cache_capacity(2 * MAX_ORDER_BATCH + 2);
        Ok(Self { conn, path: path.to_owned(), sql: vec![None; MAX_ORDER_BATCH] })
    }

    /// Writes a batch as one transaction; when it fails, each order again alone, so that
    /// only the order at fault gets the error. Answers, in order, whether each was written.
    fn write(&mut self, batch: &[PendingOrder]) -> Vec<StoreResult<bool>> {
        let written = |ids: &[Uuid], p: &PendingOrder| ids.contains(&p.order.order_id.0);
        if batch.len() > 1 {
            match self.run(batch) {
                Ok(ids) => return batch.iter().map(|p| Ok(written(&ids, p))).collect(),
                Err(_) => self.recover(),
            }
        }
        let mut out = Vec::with_capacity(batch.len());
        for p in batch {
            out.push(match self.run(std::slice::from_ref(p)) {
                Ok(ids) => Ok(written(&ids, p)),
                Err(e) => {
                    self.recover();
                    Err(map_sqlite_err(e))
                }
            });
        }
        out
    }

    /// One transaction of orders and their audit rows; the ids of the orders written (an
    /// order into a parent no longer in the state asked for is not, nor its audit row).
    fn run(&mut self, batch: &[PendingOrder]) -> rusqlite::Result<Vec<Uuid>> {
        let [orders, logs] = self.sql[batch.len() - 1].get_or_insert_with(|| sql::insert_orders_if_parent(batch.len()));
        let tx = self.conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut args = Vec::with_capacity(batch.len() * 21);
        for p in batch {
            order_values(&p.order, p.block, p.parent_state, &mut args);
        }
        tx.prepare_cached(orders)?.execute(rusqlite::params_from_iter(&args))?;
        args.clear();
        for p in batch {
            log_values(&p.log, &mut args);
        }
        let ids = {
            let mut logs = tx.prepare_cached(logs)?;
            let ids = logs.query_map(rusqlite::params_from_iter(&args), |r| r.get::<_, Uuid>(0))?;
            ids.collect::<rusqlite::Result<Vec<_>>>()?
        };
        tx.commit()?;
        Ok(ids)
    }

    /// After a failure: a transaction its rollback could not end is ended, or the
    /// connection replaced.
    fn recover(&mut self) {
        if self.conn.is_autocommit() || self.conn.execute_batch("rollback").is_ok() {
            return;
        }
        match Self::open(&self.path) {
            Ok(fresh) => *self = fresh,
            Err(e) => tracing::error!(error = %e, "the order writer cannot open the database again"),
        }
    }
}

/// A child order's columns as [`sql::ORDER_COLUMNS`] lists them (as `bind_order` binds
/// them for sqlx), then its parent's state.
fn order_values(o: &ChildOrder, block: i64, parent_state: ParentState, out: &mut Vec<rusqlite::types::Value>) {
    use rusqlite::types::Value::{Integer, Null, Text};
    let (working, matched) = o.parent_counts();
    out.extend([
        id(o.order_id.0),
        id(o.parent_order_id.0),
        id(o.company_id.0),
        id(o.created_by.0),
        id(o.instrument_id.0),
        Text(o.direction.as_str().into()),
        Text(o.state.as_str().into()),
        Text(Dec(o.price).sqlite()),
        Integer(o.quantity),
        Integer(o.iceberg.into()),
        Integer(o.residual.into()),
        id(o.broker_id.0),
        Integer(Ts(o.created_at).sqlite()),
        Integer(Ts(o.updated_at).sqlite()),
        Integer(working),
        Integer(matched),
        Integer(o.rests().into()),
        o.min_execution.map_or(Null, Integer),
        Integer(o.shown(block)),
        Text(parent_state.as_str().into()),
        Integer(block),
    ]);
}

/// An audit row's columns as `bind_action_log` binds them for sqlx.
fn log_values(a: &ActionLog, out: &mut Vec<rusqlite::types::Value>) {
    use rusqlite::types::Value::{Integer, Null, Text};
    let keyed = a.keyed.as_ref();
    out.extend([
        id(a.action_log_id),
        Text(a.entity.clone()),
        a.entity_id.map_or(Null, id),
        Text(a.operation.clone()),
        a.user_id.map_or(Null, |u| id(u.0)),
        Integer(Ts(a.created_at).sqlite()),
        Text(a.details.to_string()),
        keyed.map_or(Null, |k| Text(k.key.key.clone())),
        keyed.map_or(Null, |k| Integer(k.part.into())),
        keyed.map_or(Null, |k| Text(k.key.request_hash.clone())),
    ]);
}

/// An id as sqlx stores it in SQLite: its 16 bytes.
fn id(u: Uuid) -> rusqlite::types::Value {
    rusqlite::types::Value::Blob(u.as_bytes().to_vec())
}

/// The order writer's errors as [`map_err`] reads sqlx's: unique and CHECK violations by
/// their extended codes (as sqlx names them), the rest by [`crate::by_code`].
fn map_sqlite_err(e: rusqlite::Error) -> StoreError {
    use rusqlite::ffi;
    let rusqlite::Error::SqliteFailure(f, message) = &e else { return StoreError::Other(e.to_string()) };
    let text = message.clone().unwrap_or_else(|| e.to_string());
    match f.extended_code {
        ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => StoreError::Unique(text),
        ffi::SQLITE_CONSTRAINT_CHECK => StoreError::Check(text),
        code => crate::by_code(&code.to_string(), &text).unwrap_or_else(|| StoreError::Other(e.to_string())),
    }
}

/// Writes one batch of orders with their audit rows (group commit, [`crate::group`]) on
/// the order writer's connection, holding the pool's write connection meanwhile; that
/// stays in `held` for the next batch while orders wait.
async fn write_orders(
    w: &OrderWriter,
    held: &mut Option<PoolConnection<Sqlite>>,
    batch: &[PendingOrder],
) -> Vec<StoreResult<bool>> {
    let turn = match held.take() {
        Some(c) => c,
        None => match w.pool.acquire().await {
            Ok(c) => c,
            Err(e) => {
                return batch.iter().map(|_| Err(StoreError::Busy(format!("order writer: {e}")))).collect();
            }
        },
    };
    let out = w.db.lock().unwrap_or_else(std::sync::PoisonError::into_inner).write(batch);
    *held = Some(turn);
    out
}

pub struct SqliteTx {
    tx: Conn<Sqlite>,
    memo: crate::conn::Memo,
    bell: Arc<upstairs_engine::ports::FixBell>,
}

impl SqliteStore {
    /// A transaction or connection of this store, with nothing read or queued yet.
    fn tx(&self, tx: Conn<Sqlite>) -> SqliteTx {
        SqliteTx { tx, memo: Default::default(), bell: self.bell.clone() }
    }
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
        Ok(self.tx(Conn::Tx(tx.map_err(map_err)?)))
    }

    async fn read(&self) -> StoreResult<SqliteTx> {
        Ok(self.tx(Conn::Tx(self.readers.begin().await.map_err(map_err)?)))
    }

    async fn single(&self) -> StoreResult<SqliteTx> {
        Ok(self.tx(Conn::Single(self.readers.acquire().await.map_err(map_err)?)))
    }

    fn fix_bell(&self) -> &Arc<upstairs_engine::ports::FixBell> {
        &self.bell
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
        block: i64,
        parent_state: ParentState,
        log: &ActionLog,
    ) -> StoreResult<bool> {
        self.orders.submit(o, block, parent_state, log).await
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
        self.tx.commit().await?;
        self.bell.ring(&self.memo.fix_queued);
        Ok(())
    }
}

shared_repos!(SqliteTx, Sqlite);
