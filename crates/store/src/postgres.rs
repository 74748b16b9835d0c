//! PostgreSQL backend: several nodes may share one database; parents are locked with
//! `FOR UPDATE`, timers claimed with `FOR UPDATE SKIP LOCKED`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::types::Json;
use sqlx::{PgPool, Postgres};
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
/// A user with its company's name, the text every user read starts with (tests probe its plan).
pub use crate::repos::USER_SELECT;
use crate::repos::{self as sql, shared_repos};
use crate::rows::*;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

const FOR_UPDATE: &str = " for update";
/// A lock that lets other transactions still insert rows referencing the locked one (a
/// foreign key's check takes KEY SHARE), for a row whose key does not change.
const FOR_NO_KEY_UPDATE: &str = " for no key update";
/// An instrument's block, held by an order write until it commits (ADR 0057): a row of its
/// own that only a change of block updates, so that band moves never wait for it (ADR 0060),
/// behind the block's lock in shared mode, so that a change waiting for the holds before it
/// is not held off by those after it (ADR 0064).
const HOLD_BLOCK: &str = "select min_quantity from instrument_block \
     where instrument_id = $1 and instrument_block_held($1) for share";
/// Whether one statement may write several tables (data-modifying CTEs).
const WRITES_IN_ONE_STATEMENT: bool = true;
const SKIP_LOCKED: &str = " for update skip locked";
const STRPOS: &str = "strpos";
/// A resting order's place on its side, best first, as `child_order_facing` holds it (its
/// price, negated for a buy), and the bound `$3`, a price to compare it with.
const FACING_KEY: &str = "case c.direction when 'BUY' then -c.price else c.price end";
const LIMIT_AS_NUMBER: &str = "$3::numeric";
const HAS_COMPANY_TYPE: &str = "c.roles @> jsonb_build_array($1::text)";
const HAS_USER_ROLE: &str = "u.roles @> jsonb_build_array($1::text)";
/// A company's brokers in order as one JSON array of `[id, name]` (read with the company).
macro_rules! company_brokers {
    () => {
        "(select coalesce(json_agg(json_build_array(cb.broker_id::text, \
     (select b.name from company b where b.company_id = cb.broker_id)) order by cb.position), '[]'::json) \
     from company_broker cb where cb.company_id = c.company_id)"
    };
}
/// A book's levels as one JSON array of `[side, price, company id, shown]`.
const BOOK_LEVELS: &str =
    "coalesce(json_agg(json_build_array(direction, price::text, company_id::text, shown)), '[]'::json)";

/// Session settings of every pooled connection.
pub const STATEMENT_TIMEOUT: &str = "30s";
pub const LOCK_TIMEOUT: &str = "10s";
pub const IDLE_IN_TRANSACTION_TIMEOUT: &str = "1min";

/// The most orders one group commit takes.
const MAX_ORDER_BATCH: usize = 16;
/// Writers of batches at once, each for its share of the instruments (ADR 0040).
const ORDER_WRITERS: usize = 4;

#[derive(Clone)]
pub struct PgStore {
    /// Rung after each commit that queued FIX messages.
    bell: Arc<upstairs_engine::ports::FixBell>,
    pool: PgPool,
    /// The order writers' own connections (ADR 0059).
    writers: PgPool,
    /// The order writers' queue (ADR 0040): orders arriving together commit together.
    orders: crate::group::Queues,
    /// The other nodes on this database and schema (ADR 0026).
    fanout: Arc<crate::fanout::PgFanout>,
}

impl PgStore {
    /// Connects and migrates.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let opts = PgConnectOptions::from_str(url).map_err(map_err)?;
        Self::connect_with(opts).await
    }

    /// Connects with every table in `schema` (created when missing): each test gets
    /// its own schema in the shared test database.
    pub async fn connect_in_schema(url: &str, schema: &str) -> Result<Self, StoreError> {
        if !schema.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(StoreError::Other(format!("bad schema name {schema}")));
        }
        let opts = PgConnectOptions::from_str(url).map_err(map_err)?;
        let admin = PgPoolOptions::new().max_connections(1).connect_with(opts.clone()).await.map_err(map_err)?;
        sqlx::query(sqlx::AssertSqlSafe(format!("create schema if not exists {schema}")))
            .execute(&admin)
            .await
            .map_err(map_err)?;
        admin.close().await;
        Self::connect_with(opts.options([("search_path", schema)])).await
    }

    async fn connect_with(opts: PgConnectOptions) -> Result<Self, StoreError> {
        // Migrations run without the timeouts below: a large table's may take longer.
        let migrating = PgPoolOptions::new().max_connections(1).connect_with(opts.clone()).await.map_err(map_err)?;
        MIGRATOR.run(&migrating).await.map_err(|e| StoreError::Other(format!("migrate: {e}")))?;
        migrating.close().await;
        // No statement runs for ever, nor waits long on a lock, nor holds a transaction open
        // while idle (ADR 0024): each fails, its transaction rolls back, the request gets 503.
        let opts = opts.options([
            ("statement_timeout", STATEMENT_TIMEOUT),
            ("lock_timeout", LOCK_TIMEOUT),
            ("idle_in_transaction_session_timeout", IDLE_IN_TRANSACTION_TIMEOUT),
        ]);
        let pool = PgPoolOptions::new()
            .max_connections(16)
            // No ping round trip before each transaction: a connection the server has
            // dropped fails its first statement, which answers 503 (`map_err`).
            .test_before_acquire(false)
            .acquire_timeout(Duration::from_secs(5))
            .connect_with(opts.clone())
            .await
            .map_err(map_err)?;
        // NOTIFY channels are database-wide: one per schema keeps the venues of one
        // database (the tests' schemas) apart.
        let schema: String = sqlx::query_scalar("select current_schema()").fetch_one(&pool).await.map_err(map_err)?;
        let fanout = Arc::new(crate::fanout::PgFanout::start(pool.clone(), format!("upstairs_{schema}")));
        // The order writers' own connections, one each, which plan the batch once (ADR 0059):
        // PostgreSQL would plan it again for every batch, its array sizes making a custom
        // plan look cheaper than the one it keeps, at about a third of a lone order's cost.
        let writers = PgPoolOptions::new()
            .max_connections(ORDER_WRITERS as u32)
            .test_before_acquire(false)
            .acquire_timeout(Duration::from_secs(5))
            .connect_lazy_with(opts.options([("plan_cache_mode", "force_generic_plan")]));
        let orders = crate::group::Queues::start(
            ORDER_WRITERS,
            MAX_ORDER_BATCH,
            &writers,
            |p, _: &mut Option<()>, b| Box::pin(write_orders(p, b)),
            crate::group::Run::OnRuntime,
        );
        Ok(Self { pool, writers, orders, fanout, bell: Default::default() })
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// The order writers' connections (what their prepared batch cost to plan, for tests).
    pub fn order_writers(&self) -> &PgPool {
        &self.writers
    }
}

/// Writes one batch of orders with their audit rows (group commit, [`crate::group`]): in
/// one statement, its own transaction.
async fn write_orders(pool: &PgPool, batch: &[PendingOrder]) -> Vec<StoreResult<bool>> {
    if batch.len() > 1
        && let Ok(written) = insert_orders(pool, batch).await
    {
        return batch.iter().map(|p| Ok(written.contains(&p.order.order_id.0))).collect();
    }
    // One order alone, or a batch that failed (a parent's counters refused one, a company
    // was stopped meanwhile, a deadlock with a take): each on its own, so that only the
    // order at fault gets the error.
    let mut out = Vec::with_capacity(batch.len());
    for p in batch {
        out.push(insert_orders(pool, std::slice::from_ref(p)).await.map(|w| !w.is_empty()).map_err(map_err));
    }
    out
}

/// Orders with their audit rows in one statement (one transaction): an order is written
/// only into a parent in the state it names and a company whose trading runs, its audit
/// row only from its written row; the counters' trigger failing undoes all. Returns the
/// ids of the orders written. Each column comes as one array (`unnest`), so that every
/// batch is the same statement, prepared once per connection and planned once (ADR 0053).
async fn insert_orders(pool: &PgPool, batch: &[PendingOrder]) -> Result<Vec<Uuid>, sqlx::Error> {
    fn col<'a, T>(batch: &'a [PendingOrder], f: impl Fn(&'a PendingOrder) -> T) -> Vec<T> {
        batch.iter().map(f).collect()
    }
    fn logs(p: &PendingOrder) -> Option<&KeyedRow> {
        p.log.keyed.as_ref()
    }
    let counts: Vec<(i64, i64)> = col(batch, |p| p.order.parent_counts());
    let written = sqlx::query_scalar::<_, Uuid>(sqlx::AssertSqlSafe(INSERT_ORDERS.as_str()))
        .bind(col(batch, |p| p.order.order_id.0))
        .bind(col(batch, |p| p.order.parent_order_id.0))
        .bind(col(batch, |p| p.order.company_id.0))
        .bind(col(batch, |p| p.order.created_by.0))
        .bind(col(batch, |p| p.order.instrument_id.0))
        .bind(col(batch, |p| p.order.direction.as_str()))
        .bind(col(batch, |p| p.order.state.as_str()))
        .bind(col(batch, |p| p.order.price))
        .bind(col(batch, |p| p.order.quantity))
        .bind(col(batch, |p| p.order.iceberg))
        .bind(col(batch, |p| p.order.residual))
        .bind(col(batch, |p| p.order.broker_id.0))
        .bind(col(batch, |p| p.order.created_at))
        .bind(col(batch, |p| p.order.updated_at))
        .bind(counts.iter().map(|c| c.0).collect::<Vec<_>>())
        .bind(counts.iter().map(|c| c.1).collect::<Vec<_>>())
        .bind(col(batch, |p| p.order.rests()))
        .bind(col(batch, |p| p.order.min_execution))
        .bind(col(batch, |p| p.order.shown(p.block)))
        .bind(col(batch, |p| p.parent_state.as_str()))
        .bind(col(batch, |p| p.log.action_log_id))
        .bind(col(batch, |p| p.log.entity.as_str()))
        .bind(col(batch, |p| p.log.entity_id))
        .bind(col(batch, |p| p.log.operation.as_str()))
        .bind(col(batch, |p| p.log.user_id.map(|u| u.0)))
        .bind(col(batch, |p| p.log.created_at))
        .bind(col(batch, |p| Json(&p.log.details)))
        .bind(col(batch, |p| logs(p).map(|k| k.key.key.as_str())))
        .bind(col(batch, |p| logs(p).map(|k| k.part)))
        .bind(col(batch, |p| logs(p).map(|k| k.key.request_hash.as_str())))
        .bind(col(batch, |p| p.block))
        .fetch_all(pool)
        .await?;
    Ok(written)
}

/// The batch of [`insert_orders`]: `$1`–`$19` the columns of [`sql::ORDER_COLUMNS`],
/// `$20` the parent's state each needs, `$21`–`$30` the audit rows', `$31` the block each
/// was shown with, one array each. A resting iceberg goes in only while its block is the
/// instrument's, which it holds (`for share`, behind the block's lock, ADR 0064) until the
/// batch commits (ADR 0057).
static INSERT_ORDERS: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "with v as (select * from unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], \
         $6::text[], $7::text[], $8::numeric[], $9::int8[], $10::bool[], $11::bool[], $12::uuid[], \
         $13::timestamptz[], $14::timestamptz[], $15::int8[], $16::int8[], $17::bool[], $18::int8[], $19::int8[], \
         $20::text[], $21::uuid[], $22::text[], $23::uuid[], $24::text[], $25::uuid[], $26::timestamptz[], \
         $27::jsonb[], $28::text[], $29::int4[], $30::text[], $31::int8[]) \
         as v ({cols}, parent_state, log_id, log_entity, log_entity_id, log_operation, log_user_id, \
         log_created_at, log_details, log_key, log_part, log_hash, block)), \
         o as (insert into child_order ({cols}) select {cols} from v where exists \
         (select 1 from parent_order p where p.parent_order_id = v.parent_order_id and p.state = v.parent_state) \
         and (select c.trading_stopped_at from company c where c.company_id = v.company_id) is null \
         and case when v.iceberg and v.rests then exists (select 1 from instrument_block i \
         where i.instrument_id = v.instrument_id and i.min_quantity = v.block \
         and instrument_block_held(v.instrument_id) for share) else true end \
         returning order_id) \
         insert into action_log (action_log_id, entity, entity_id, operation, user_id, created_at, details, \
         idempotency_key, idempotency_part, request_hash) \
         select log_id, log_entity, log_entity_id, log_operation, log_user_id, log_created_at, log_details, log_key, \
         log_part, log_hash from v join o using (order_id) returning entity_id",
        cols = sql::ORDER_COLUMNS,
    )
});

pub struct PgTx {
    tx: Conn<Postgres>,
    memo: crate::conn::Memo,
    bell: Arc<upstairs_engine::ports::FixBell>,
}

impl PgStore {
    /// A transaction or connection of this store, with nothing read or queued yet.
    fn tx(&self, tx: Conn<Postgres>) -> PgTx {
        PgTx { tx, memo: Default::default(), bell: self.bell.clone() }
    }
}

#[async_trait]
impl Store for PgStore {
    type Tx = PgTx;

    async fn write(&self) -> StoreResult<PgTx> {
        Ok(self.tx(Conn::Tx(self.pool.begin().await.map_err(map_err)?)))
    }

    async fn read(&self) -> StoreResult<PgTx> {
        Ok(self.tx(Conn::Tx(self.pool.begin().await.map_err(map_err)?)))
    }

    async fn single(&self) -> StoreResult<PgTx> {
        Ok(self.tx(Conn::Single(self.pool.acquire().await.map_err(map_err)?)))
    }

    fn fix_bell(&self) -> &Arc<upstairs_engine::ports::FixBell> {
        &self.bell
    }

    async fn file_fix_message(&self, m: &FiledFixMessage) -> StoreResult<()> {
        file_fix_message_on(&self.pool, m).await
    }

    async fn touch_band(
        &self,
        id: InstrumentId,
        min: rust_decimal::Decimal,
        max: rust_decimal::Decimal,
        at: DateTime<Utc>,
    ) -> StoreResult<bool> {
        touch_band_on(&self.pool, id, min, max, at).await
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
        "postgres"
    }

    fn fanout(&self) -> Option<Arc<dyn Fanout>> {
        Some(self.fanout.clone())
    }

    fn pool_use(&self) -> (u32, u32) {
        let open = self.pool.size();
        (open.saturating_sub(u32::try_from(self.pool.num_idle()).unwrap_or(u32::MAX)), open)
    }
}

#[async_trait]
impl Tx for PgTx {
    async fn commit(self) -> StoreResult<()> {
        self.tx.commit().await?;
        self.bell.ring(&self.memo.fix_queued);
        Ok(())
    }
}

shared_repos!(PgTx, Postgres);
