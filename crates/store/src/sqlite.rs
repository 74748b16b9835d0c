//! SQLite backend: one file in WAL mode. Writes go through one writer connection and
//! queue in the process (the pool's fair wait), never in SQLite's busy handler; reads
//! use a pool of read-only connections.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
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
use crate::map_err;
use crate::repos::{self as sql, shared_repos};
use crate::rows::*;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

const FOR_UPDATE: &str = "";
const SKIP_LOCKED: &str = "";
const STRPOS: &str = "instr";
const HAS_COMPANY_TYPE: &str = "exists (select 1 from json_each(c.roles) where value = $1)";
/// A book's levels as one JSON array of `[side, price, company id, shown]`.
const BOOK_LEVELS: &str = "json_group_array(json_array(direction, price, lower(hex(company_id)), shown))";

/// Read connections: enough for the two cores' worth of request handlers, plus slack.
const READERS: u32 = 8;

#[derive(Clone)]
pub struct SqliteStore {
    writer: SqlitePool,
    readers: SqlitePool,
}

impl SqliteStore {
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
            .connect_with(opts.clone())
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
        Ok(Self { writer, readers })
    }
}

pub struct SqliteTx {
    tx: Conn<Sqlite>,
}

#[async_trait]
impl Store for SqliteStore {
    type Tx = SqliteTx;

    async fn write(&self) -> StoreResult<SqliteTx> {
        Ok(SqliteTx { tx: Conn::Tx(self.writer.begin_with("BEGIN IMMEDIATE").await.map_err(map_err)?) })
    }

    async fn read(&self) -> StoreResult<SqliteTx> {
        Ok(SqliteTx { tx: Conn::Tx(self.readers.begin().await.map_err(map_err)?) })
    }

    async fn single(&self) -> StoreResult<SqliteTx> {
        Ok(SqliteTx { tx: Conn::Single(self.readers.acquire().await.map_err(map_err)?) })
    }

    async fn insert_order_audited(
        &self,
        o: &ChildOrder,
        parent_state: ParentState,
        log: &ActionLog,
    ) -> StoreResult<bool> {
        // The whole transaction in one call to the writer's thread (sqlx binds `$N` by
        // number in every statement). The audit row is written only after the order's
        // row; its `returning` says whether it was. Spawned, so that a request dropped
        // half-way never hands the writer back inside its transaction.
        let query = format!(
            "begin immediate; {}; {} where changes() = 1 returning 1; commit",
            sql::insert_order_if_parent(),
            sql::INSERT_ACTION_LOG_SELECT
        );
        let (writer, o, log) = (self.writer.clone(), o.clone(), log.clone());
        tokio::spawn(async move {
            let mut conn = writer.acquire().await.map_err(map_err)?;
            let q = bind_order(sqlx::query(sqlx::AssertSqlSafe(query)), &o).bind(parent_state.as_str());
            match bind_action_log(q, &log).fetch_all(&mut *conn).await {
                Ok(rows) => Ok(rows.len() == 1),
                Err(e) => {
                    // Failed after the `begin` (a refused counter): end the transaction.
                    // When even that fails (no transaction began, or the connection
                    // broke), the pool opens a fresh writer rather than risk one left open.
                    if sqlx::query("rollback").execute(&mut *conn).await.is_err() {
                        conn.close_on_drop();
                    }
                    Err(map_err(e))
                }
            }
        })
        .await
        .map_err(|e| StoreError::Other(format!("order insert task: {e}")))?
    }

    fn backend(&self) -> &'static str {
        "sqlite"
    }
}

#[async_trait]
impl Tx for SqliteTx {
    async fn commit(self) -> StoreResult<()> {
        self.tx.commit().await
    }
}

shared_repos!(SqliteTx, Sqlite);
