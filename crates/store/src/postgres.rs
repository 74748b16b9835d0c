//! PostgreSQL backend: several nodes may share one database; timers are claimed with
//! `FOR UPDATE SKIP LOCKED`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions, PgRow};
use sqlx::{PgPool, Postgres, Row, Transaction};
use std::str::FromStr;
use std::time::Duration;
use upstairs_domain::order::{Direction, OrderState};
use upstairs_domain::{CompanyId, InstrumentId, OrderId, ParentOrderId, SessionId, UserId};
use upstairs_engine::StoreError;
use upstairs_engine::model::*;
use upstairs_engine::ports::*;
use uuid::Uuid;

use crate::{from_json, json, map_err, parse_auto_accept, parse_roles, parse_ui_metadata};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

#[derive(Clone)]
pub struct PgStore {
    pool: PgPool,
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
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(15))
            .connect_with(opts)
            .await
            .map_err(map_err)?;
        MIGRATOR.run(&pool).await.map_err(|e| StoreError::Other(format!("migrate: {e}")))?;
        Ok(Self { pool })
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
}

pub struct PgTx {
    tx: Transaction<'static, Postgres>,
}

#[async_trait]
impl Store for PgStore {
    type Tx = PgTx;

    async fn write(&self) -> StoreResult<PgTx> {
        Ok(PgTx { tx: self.pool.begin().await.map_err(map_err)? })
    }

    async fn read(&self) -> StoreResult<PgTx> {
        Ok(PgTx { tx: self.pool.begin().await.map_err(map_err)? })
    }

    fn backend(&self) -> &'static str {
        "postgres"
    }
}

#[async_trait]
impl Tx for PgTx {
    async fn commit(self) -> StoreResult<()> {
        self.tx.commit().await.map_err(map_err)
    }
}

fn get<'r, T: sqlx::Decode<'r, Postgres> + sqlx::Type<Postgres>>(row: &'r PgRow, col: &str) -> StoreResult<T> {
    row.try_get(col).map_err(map_err)
}

const COMPANY_SELECT: &str = "select c.*, d.name as default_broker_name from company c \
     left join company d on d.company_id = c.default_broker_id";

fn company_from_row(row: &PgRow) -> StoreResult<Company> {
    let default_id: Option<uuid::Uuid> = get(row, "default_broker_id")?;
    let default_name: Option<String> = get(row, "default_broker_name")?;
    Ok(Company {
        company_id: CompanyId(get(row, "company_id")?),
        name: get(row, "name")?,
        full_name: get(row, "full_name")?,
        roles: from_json(get::<Value>(row, "roles")?)?,
        ems_identifier: get(row, "ems_identifier")?,
        account: get(row, "account")?,
        trade_confirmation_email: get(row, "trade_confirmation_email")?,
        trade_confirmation_via_email_enabled: get(row, "trade_confirmation_via_email_enabled")?,
        default_broker: default_id.zip(default_name).map(|(id, name)| CompanyRef { company_id: CompanyId(id), name }),
        brokers: vec![],
        created_at: get(row, "created_at")?,
        updated_at: get(row, "updated_at")?,
    })
}

fn instrument_from_row(row: &PgRow) -> StoreResult<Instrument> {
    Ok(Instrument {
        instrument_id: InstrumentId(get(row, "instrument_id")?),
        name: get(row, "name")?,
        term: get(row, "term")?,
        description: get(row, "description")?,
        min_quantity: get(row, "min_quantity")?,
        tick_size: get(row, "tick_size")?,
        exchange_tick_size: get(row, "exchange_tick_size")?,
        exchange_id: get(row, "exchange_id")?,
        exchange: get(row, "exchange")?,
        exchange_iso_code: get(row, "exchange_iso_code")?,
        exchange_instrument_id: get(row, "exchange_instrument_id")?,
        bbg_code: get(row, "bbg_code")?,
        country: get(row, "country")?,
        currency: get(row, "currency")?,
        min_tick_price: get(row, "min_tick_price")?,
        max_tick_price: get(row, "max_tick_price")?,
        active: get(row, "active")?,
        is_sandbox: get(row, "is_sandbox")?,
        reversed_spread: get(row, "reversed_spread")?,
        created_at: get(row, "created_at")?,
        updated_at: get(row, "updated_at")?,
    })
}

impl PgTx {
    async fn with_brokers(&mut self, mut c: Company) -> StoreResult<Company> {
        let rows = sqlx::query(
            "select b.company_id, b.name from company_broker cb join company b on b.company_id = cb.broker_id \
             where cb.company_id = $1 order by cb.position",
        )
        .bind(c.company_id.0)
        .fetch_all(&mut *self.tx)
        .await
        .map_err(map_err)?;
        c.brokers = rows
            .iter()
            .map(|r| Ok(CompanyRef { company_id: CompanyId(get(r, "company_id")?), name: get(r, "name")? }))
            .collect::<StoreResult<_>>()?;
        Ok(c)
    }

    async fn write_brokers(&mut self, c: &Company) -> StoreResult<()> {
        sqlx::query("delete from company_broker where company_id = $1")
            .bind(c.company_id.0)
            .execute(&mut *self.tx)
            .await
            .map_err(map_err)?;
        for (i, b) in c.brokers.iter().enumerate() {
            sqlx::query("insert into company_broker (company_id, broker_id, position) values ($1, $2, $3)")
                .bind(c.company_id.0)
                .bind(b.company_id.0)
                .bind(i as i32)
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
        }
        Ok(())
    }

    async fn companies_where(
        &mut self,
        sql: String,
        arg: Option<String>,
        page: Option<(i64, i64)>,
    ) -> StoreResult<Vec<Company>> {
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
        if let Some(a) = arg {
            q = q.bind(a);
        }
        if let Some((size, offset)) = page {
            q = q.bind(size).bind(offset);
        }
        let rows = q.fetch_all(&mut *self.tx).await.map_err(map_err)?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let c = company_from_row(r)?;
            out.push(self.with_brokers(c).await?);
        }
        Ok(out)
    }
}

const USER_SELECT: &str =
    "select u.*, c.name as company_name from app_user u join company c on c.company_id = u.company_id";

fn user_from_row(row: &PgRow) -> StoreResult<UserView> {
    Ok(UserView {
        user: User {
            user_id: UserId(get(row, "user_id")?),
            company_id: CompanyId(get(row, "company_id")?),
            email: get(row, "email")?,
            first_name: get(row, "first_name")?,
            last_name: get(row, "last_name")?,
            roles: parse_roles(get::<Value>(row, "roles")?)?,
            password_hash: get(row, "password_hash")?,
            active: get(row, "active")?,
            verified: get(row, "verified")?,
            auto_accept: parse_auto_accept(get(row, "auto_accept")?)?,
            parent_order_limit_multiplier: get(row, "parent_order_limit_multiplier")?,
            ui_metadata: parse_ui_metadata(get::<Value>(row, "ui_metadata")?)?,
            fix_integration: get(row, "fix_integration")?,
            ems_trader_id: get(row, "ems_trader_id")?,
            created_at: get(row, "created_at")?,
            updated_at: get(row, "updated_at")?,
        },
        company_name: get(row, "company_name")?,
    })
}

fn session_from_row(row: &PgRow) -> StoreResult<Session> {
    Ok(Session {
        session_id: SessionId(get(row, "session_id")?),
        user_id: UserId(get(row, "user_id")?),
        token_hash: get(row, "token_hash")?,
        created_at: get(row, "created_at")?,
        expires_at: get(row, "expires_at")?,
    })
}

fn link_from_row(row: &PgRow) -> StoreResult<LinkToken> {
    let purpose: String = get(row, "purpose")?;
    Ok(LinkToken {
        token_hash: get(row, "token_hash")?,
        user_id: UserId(get(row, "user_id")?),
        purpose: LinkPurpose::parse(&purpose).ok_or_else(|| StoreError::Other(format!("stored purpose {purpose}")))?,
        created_at: get(row, "created_at")?,
        expires_at: get(row, "expires_at")?,
        used_at: get(row, "used_at")?,
    })
}

fn action_log_from_row(row: &PgRow) -> StoreResult<ActionLog> {
    Ok(ActionLog {
        action_log_id: get(row, "action_log_id")?,
        entity: get(row, "entity")?,
        entity_id: get(row, "entity_id")?,
        operation: get(row, "operation")?,
        user_id: get::<Option<Uuid>>(row, "user_id")?.map(UserId),
        created_at: get(row, "created_at")?,
        details: get::<Value>(row, "details")?,
    })
}

fn outbox_from_row(row: &PgRow) -> StoreResult<OutboxMessage> {
    Ok(OutboxMessage {
        outbox_id: get(row, "outbox_id")?,
        email: from_json(get::<Value>(row, "payload")?)?,
        created_at: get(row, "created_at")?,
        sent_at: get(row, "sent_at")?,
        attempts: get(row, "attempts")?,
        last_error: get(row, "last_error")?,
    })
}

fn timer_from_row(row: &PgRow) -> StoreResult<Timer> {
    Ok(Timer {
        timer_id: get(row, "timer_id")?,
        kind: get(row, "kind")?,
        payload: get::<Value>(row, "payload")?,
        due_at: get(row, "due_at")?,
        dedupe_key: get(row, "dedupe_key")?,
        attempts: get(row, "attempts")?,
    })
}

#[async_trait]
impl CompanyRepo for PgTx {
    async fn insert_company(&mut self, c: &Company) -> StoreResult<()> {
        sqlx::query(
            "insert into company (company_id, name, full_name, roles, ems_identifier, account, trade_confirmation_email, \
             trade_confirmation_via_email_enabled, default_broker_id, created_at, updated_at) \
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(c.company_id.0)
        .bind(&c.name)
        .bind(&c.full_name)
        .bind(json(&c.roles)?)
        .bind(&c.ems_identifier)
        .bind(&c.account)
        .bind(&c.trade_confirmation_email)
        .bind(c.trade_confirmation_via_email_enabled)
        .bind(c.default_broker.as_ref().map(|b| b.company_id.0))
        .bind(c.created_at)
        .bind(c.updated_at)
        .execute(&mut *self.tx)
        .await
        .map_err(map_err)?;
        self.write_brokers(c).await
    }

    async fn update_company(&mut self, c: &Company) -> StoreResult<()> {
        sqlx::query(
            "update company set name = $1, full_name = $2, roles = $3, ems_identifier = $4, account = $5, \
             trade_confirmation_email = $6, trade_confirmation_via_email_enabled = $7, default_broker_id = $8, \
             updated_at = $9 where company_id = $10",
        )
        .bind(&c.name)
        .bind(&c.full_name)
        .bind(json(&c.roles)?)
        .bind(&c.ems_identifier)
        .bind(&c.account)
        .bind(&c.trade_confirmation_email)
        .bind(c.trade_confirmation_via_email_enabled)
        .bind(c.default_broker.as_ref().map(|b| b.company_id.0))
        .bind(c.updated_at)
        .bind(c.company_id.0)
        .execute(&mut *self.tx)
        .await
        .map_err(map_err)?;
        self.write_brokers(c).await
    }

    async fn company(&mut self, id: CompanyId) -> StoreResult<Option<Company>> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("{COMPANY_SELECT} where c.company_id = $1")))
            .bind(id.0)
            .fetch_optional(&mut *self.tx)
            .await
            .map_err(map_err)?;
        match row {
            Some(r) => Ok(Some(self.with_brokers(company_from_row(&r)?).await?)),
            None => Ok(None),
        }
    }

    async fn company_by_name(&mut self, name: &str) -> StoreResult<Option<Company>> {
        let mut found =
            self.companies_where(format!("{COMPANY_SELECT} where c.name = $1"), Some(name.to_owned()), None).await?;
        Ok(found.pop())
    }

    async fn count_companies(&mut self) -> StoreResult<i64> {
        sqlx::query_scalar("select count(*) from company").fetch_one(&mut *self.tx).await.map_err(map_err)
    }

    async fn companies(&mut self, page: i64, size: i64) -> StoreResult<Page<Company>> {
        let total = self.count_companies().await?;
        let items = self
            .companies_where(
                format!("{COMPANY_SELECT} order by c.name limit $1 offset $2"),
                None,
                Some((size, page * size)),
            )
            .await?;
        Ok(Page { items, total_items: total })
    }

    async fn companies_of_type(&mut self, company_type: &str) -> StoreResult<Vec<Company>> {
        self.companies_where(
            format!("{COMPANY_SELECT} where c.roles @> jsonb_build_array($1::text) order by c.name"),
            Some(company_type.to_owned()),
            None,
        )
        .await
    }
}

#[async_trait]
impl InstrumentRepo for PgTx {
    async fn insert_instrument(&mut self, i: &Instrument) -> StoreResult<()> {
        sqlx::query(
            "insert into instrument (instrument_id, name, term, description, min_quantity, tick_size, exchange_tick_size, \
             exchange_id, exchange, exchange_iso_code, exchange_instrument_id, bbg_code, country, currency, \
             min_tick_price, max_tick_price, active, is_sandbox, reversed_spread, created_at, updated_at) \
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)",
        )
        .bind(i.instrument_id.0)
        .bind(&i.name)
        .bind(&i.term)
        .bind(&i.description)
        .bind(i.min_quantity)
        .bind(i.tick_size)
        .bind(i.exchange_tick_size)
        .bind(&i.exchange_id)
        .bind(&i.exchange)
        .bind(&i.exchange_iso_code)
        .bind(&i.exchange_instrument_id)
        .bind(&i.bbg_code)
        .bind(&i.country)
        .bind(&i.currency)
        .bind(i.min_tick_price)
        .bind(i.max_tick_price)
        .bind(i.active)
        .bind(i.is_sandbox)
        .bind(i.reversed_spread)
        .bind(i.created_at)
        .bind(i.updated_at)
        .execute(&mut *self.tx)
        .await
        .map_err(map_err)?;
        Ok(())
    }

    async fn update_instrument(&mut self, i: &Instrument) -> StoreResult<()> {
        sqlx::query(
            "update instrument set name = $1, term = $2, description = $3, min_quantity = $4, tick_size = $5, \
             exchange_tick_size = $6, exchange_id = $7, exchange = $8, exchange_iso_code = $9, exchange_instrument_id = $10, \
             bbg_code = $11, country = $12, currency = $13, min_tick_price = $14, max_tick_price = $15, active = $16, \
             is_sandbox = $17, reversed_spread = $18, updated_at = $19 where instrument_id = $20",
        )
        .bind(&i.name)
        .bind(&i.term)
        .bind(&i.description)
        .bind(i.min_quantity)
        .bind(i.tick_size)
        .bind(i.exchange_tick_size)
        .bind(&i.exchange_id)
        .bind(&i.exchange)
        .bind(&i.exchange_iso_code)
        .bind(&i.exchange_instrument_id)
        .bind(&i.bbg_code)
        .bind(&i.country)
        .bind(&i.currency)
        .bind(i.min_tick_price)
        .bind(i.max_tick_price)
        .bind(i.active)
        .bind(i.is_sandbox)
        .bind(i.reversed_spread)
        .bind(i.updated_at)
        .bind(i.instrument_id.0)
        .execute(&mut *self.tx)
        .await
        .map_err(map_err)?;
        Ok(())
    }

    async fn instrument(&mut self, id: InstrumentId) -> StoreResult<Option<Instrument>> {
        sqlx::query("select * from instrument where instrument_id = $1")
            .bind(id.0)
            .fetch_optional(&mut *self.tx)
            .await
            .map_err(map_err)?
            .as_ref()
            .map(instrument_from_row)
            .transpose()
    }

    async fn instruments(&mut self, f: &InstrumentFilter) -> StoreResult<Page<Instrument>> {
        let filter = "where ($1::text is null or strpos(lower(name), lower($1)) > 0) \
                      and ($2::text is null or exchange_id = $2) \
                      and ($3::boolean is null or active = $3) and ($4::boolean is null or is_sandbox = $4)";
        let total: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("select count(*) from instrument {filter}")))
            .bind(&f.name)
            .bind(&f.exchange_id)
            .bind(f.active)
            .bind(f.is_sandbox)
            .fetch_one(&mut *self.tx)
            .await
            .map_err(map_err)?;
        let dir = if f.descending { "desc" } else { "asc" };
        let sql = format!(
            "select * from instrument {filter} order by {} {dir}, instrument_id limit $5 offset $6",
            f.sort.column()
        );
        let items = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(&f.name)
            .bind(&f.exchange_id)
            .bind(f.active)
            .bind(f.is_sandbox)
            .bind(f.size)
            .bind(f.page * f.size)
            .fetch_all(&mut *self.tx)
            .await
            .map_err(map_err)?
            .iter()
            .map(instrument_from_row)
            .collect::<StoreResult<_>>()?;
        Ok(Page { items, total_items: total })
    }
}

#[async_trait]
impl UserRepo for PgTx {
    async fn insert_user(&mut self, u: &User) -> StoreResult<()> {
        sqlx::query(
            "insert into app_user (user_id, company_id, email, first_name, last_name, roles, password_hash, active, \
             verified, auto_accept, parent_order_limit_multiplier, ui_metadata, fix_integration, ems_trader_id, \
             created_at, updated_at) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
        )
        .bind(u.user_id.0)
        .bind(u.company_id.0)
        .bind(&u.email)
        .bind(&u.first_name)
        .bind(&u.last_name)
        .bind(json(&u.roles)?)
        .bind(&u.password_hash)
        .bind(u.active)
        .bind(u.verified)
        .bind(u.auto_accept.map(|a| a.as_str()))
        .bind(u.parent_order_limit_multiplier)
        .bind(json(&u.ui_metadata)?)
        .bind(u.fix_integration)
        .bind(&u.ems_trader_id)
        .bind(u.created_at)
        .bind(u.updated_at)
        .execute(&mut *self.tx)
        .await
        .map_err(map_err)?;
        Ok(())
    }

    async fn update_user(&mut self, u: &User) -> StoreResult<()> {
        sqlx::query(
            "update app_user set email = $1, first_name = $2, last_name = $3, roles = $4, password_hash = $5, active = $6, \
             verified = $7, auto_accept = $8, parent_order_limit_multiplier = $9, ui_metadata = $10, fix_integration = $11, \
             ems_trader_id = $12, updated_at = $13 where user_id = $14",
        )
        .bind(&u.email)
        .bind(&u.first_name)
        .bind(&u.last_name)
        .bind(json(&u.roles)?)
        .bind(&u.password_hash)
        .bind(u.active)
        .bind(u.verified)
        .bind(u.auto_accept.map(|a| a.as_str()))
        .bind(u.parent_order_limit_multiplier)
        .bind(json(&u.ui_metadata)?)
        .bind(u.fix_integration)
        .bind(&u.ems_trader_id)
        .bind(u.updated_at)
        .bind(u.user_id.0)
        .execute(&mut *self.tx)
        .await
        .map_err(map_err)?;
        Ok(())
    }

    async fn user(&mut self, id: UserId) -> StoreResult<Option<UserView>> {
        sqlx::query(sqlx::AssertSqlSafe(format!("{USER_SELECT} where u.user_id = $1")))
            .bind(id.0)
            .fetch_optional(&mut *self.tx)
            .await
            .map_err(map_err)?
            .as_ref()
            .map(user_from_row)
            .transpose()
    }

    async fn user_by_email(&mut self, email: &str) -> StoreResult<Option<UserView>> {
        sqlx::query(sqlx::AssertSqlSafe(format!("{USER_SELECT} where u.email = $1")))
            .bind(email)
            .fetch_optional(&mut *self.tx)
            .await
            .map_err(map_err)?
            .as_ref()
            .map(user_from_row)
            .transpose()
    }

    async fn users(&mut self, f: &UserFilter) -> StoreResult<Page<UserView>> {
        let filter = "where ($1::text is null or strpos(u.email, lower($1)) > 0) \
                      and ($2::uuid is null or u.company_id = $2) and ($3::boolean is null or u.active = $3)";
        let total: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("select count(*) from app_user u {filter}")))
            .bind(&f.email)
            .bind(f.company_id.map(|c| c.0))
            .bind(f.active)
            .fetch_one(&mut *self.tx)
            .await
            .map_err(map_err)?;
        let items =
            sqlx::query(sqlx::AssertSqlSafe(format!("{USER_SELECT} {filter} order by u.email limit $4 offset $5")))
                .bind(&f.email)
                .bind(f.company_id.map(|c| c.0))
                .bind(f.active)
                .bind(f.size)
                .bind(f.page * f.size)
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?
                .iter()
                .map(user_from_row)
                .collect::<StoreResult<_>>()?;
        Ok(Page { items, total_items: total })
    }
}

#[async_trait]
impl SessionRepo for PgTx {
    async fn insert_session(&mut self, s: &Session) -> StoreResult<()> {
        sqlx::query(
            "insert into session (session_id, user_id, token_hash, created_at, expires_at) values ($1, $2, $3, $4, $5)",
        )
        .bind(s.session_id.0)
        .bind(s.user_id.0)
        .bind(&s.token_hash)
        .bind(s.created_at)
        .bind(s.expires_at)
        .execute(&mut *self.tx)
        .await
        .map_err(map_err)?;
        Ok(())
    }

    async fn session_by_token_hash(&mut self, token_hash: &str) -> StoreResult<Option<Session>> {
        sqlx::query("select * from session where token_hash = $1")
            .bind(token_hash)
            .fetch_optional(&mut *self.tx)
            .await
            .map_err(map_err)?
            .as_ref()
            .map(session_from_row)
            .transpose()
    }

    async fn delete_session(&mut self, id: SessionId) -> StoreResult<()> {
        sqlx::query("delete from session where session_id = $1")
            .bind(id.0)
            .execute(&mut *self.tx)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn delete_sessions_of_user(&mut self, user: UserId) -> StoreResult<u64> {
        let r = sqlx::query("delete from session where user_id = $1")
            .bind(user.0)
            .execute(&mut *self.tx)
            .await
            .map_err(map_err)?;
        Ok(r.rows_affected())
    }

    async fn delete_expired_sessions(&mut self, now: DateTime<Utc>) -> StoreResult<u64> {
        let r = sqlx::query("delete from session where expires_at <= $1")
            .bind(now)
            .execute(&mut *self.tx)
            .await
            .map_err(map_err)?;
        Ok(r.rows_affected())
    }
}

#[async_trait]
impl LinkTokenRepo for PgTx {
    async fn insert_link_token(&mut self, t: &LinkToken) -> StoreResult<()> {
        sqlx::query(
            "insert into link_token (token_hash, user_id, purpose, created_at, expires_at, used_at) values ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&t.token_hash)
        .bind(t.user_id.0)
        .bind(t.purpose.as_str())
        .bind(t.created_at)
        .bind(t.expires_at)
        .bind(t.used_at)
        .execute(&mut *self.tx)
        .await
        .map_err(map_err)?;
        Ok(())
    }

    async fn link_token(&mut self, token_hash: &str) -> StoreResult<Option<LinkToken>> {
        sqlx::query("select * from link_token where token_hash = $1")
            .bind(token_hash)
            .fetch_optional(&mut *self.tx)
            .await
            .map_err(map_err)?
            .as_ref()
            .map(link_from_row)
            .transpose()
    }

    async fn use_link_tokens_of_user(&mut self, user: UserId, now: DateTime<Utc>) -> StoreResult<u64> {
        let r = sqlx::query("update link_token set used_at = $1 where user_id = $2 and used_at is null")
            .bind(now)
            .bind(user.0)
            .execute(&mut *self.tx)
            .await
            .map_err(map_err)?;
        Ok(r.rows_affected())
    }

    async fn delete_stale_link_tokens(&mut self, before: DateTime<Utc>) -> StoreResult<u64> {
        let r = sqlx::query("delete from link_token where expires_at <= $1 or used_at <= $2")
            .bind(before)
            .bind(before)
            .execute(&mut *self.tx)
            .await
            .map_err(map_err)?;
        Ok(r.rows_affected())
    }
}

#[async_trait]
impl AuditRepo for PgTx {
    async fn insert_action_log(&mut self, a: &ActionLog) -> StoreResult<()> {
        sqlx::query(
            "insert into action_log (action_log_id, entity, entity_id, operation, user_id, created_at, details) \
             values ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(a.action_log_id)
        .bind(&a.entity)
        .bind(a.entity_id)
        .bind(&a.operation)
        .bind(a.user_id.map(|u| u.0))
        .bind(a.created_at)
        .bind(a.details.clone())
        .execute(&mut *self.tx)
        .await
        .map_err(map_err)?;
        Ok(())
    }

    async fn action_logs(&mut self, limit: i64) -> StoreResult<Vec<ActionLog>> {
        sqlx::query("select * from action_log order by created_at desc, action_log_id desc limit $1")
            .bind(limit)
            .fetch_all(&mut *self.tx)
            .await
            .map_err(map_err)?
            .iter()
            .map(action_log_from_row)
            .collect()
    }
}

#[async_trait]
impl OutboxRepo for PgTx {
    async fn insert_outbox(&mut self, m: &OutboxMessage) -> StoreResult<()> {
        sqlx::query(
            "insert into outbox (outbox_id, message_id, payload, created_at, sent_at, attempts, last_error) \
             values ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(m.outbox_id)
        .bind(&m.email.message_id)
        .bind(json(&m.email)?)
        .bind(m.created_at)
        .bind(m.sent_at)
        .bind(m.attempts)
        .bind(&m.last_error)
        .execute(&mut *self.tx)
        .await
        .map_err(map_err)?;
        Ok(())
    }

    async fn outbox(&mut self, id: Uuid) -> StoreResult<Option<OutboxMessage>> {
        sqlx::query("select * from outbox where outbox_id = $1")
            .bind(id)
            .fetch_optional(&mut *self.tx)
            .await
            .map_err(map_err)?
            .as_ref()
            .map(outbox_from_row)
            .transpose()
    }

    async fn mark_outbox_sent(&mut self, id: Uuid, at: DateTime<Utc>, redacted: &OutgoingEmail) -> StoreResult<()> {
        sqlx::query("update outbox set sent_at = $1, payload = $2, attempts = attempts + 1, last_error = null where outbox_id = $3")
            .bind(at)
            .bind(json(redacted)?)
            .bind(id)
            .execute(&mut *self.tx)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn record_outbox_failure(&mut self, id: Uuid, error: &str) -> StoreResult<()> {
        sqlx::query("update outbox set attempts = attempts + 1, last_error = $1 where outbox_id = $2")
            .bind(error)
            .bind(id)
            .execute(&mut *self.tx)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn outbox_messages(&mut self, limit: i64) -> StoreResult<Vec<OutboxMessage>> {
        sqlx::query("select * from outbox order by created_at desc, outbox_id desc limit $1")
            .bind(limit)
            .fetch_all(&mut *self.tx)
            .await
            .map_err(map_err)?
            .iter()
            .map(outbox_from_row)
            .collect()
    }
}

#[async_trait]
impl TimerRepo for PgTx {
    async fn insert_timer(&mut self, t: &Timer) -> StoreResult<bool> {
        let r = sqlx::query(
            "insert into timer (timer_id, kind, payload, due_at, dedupe_key, attempts) values ($1, $2, $3, $4, $5, $6) \
             on conflict do nothing",
        )
        .bind(t.timer_id)
        .bind(&t.kind)
        .bind(t.payload.clone())
        .bind(t.due_at)
        .bind(&t.dedupe_key)
        .bind(t.attempts)
        .execute(&mut *self.tx)
        .await
        .map_err(map_err)?;
        Ok(r.rows_affected() == 1)
    }

    async fn claim_due_timers(
        &mut self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        limit: i64,
    ) -> StoreResult<Vec<Timer>> {
        // The write transaction holds SQLite's single write lock, so no other node
        // can claim the same rows between the select and the update.
        sqlx::query(
            "update timer set locked_until = $1, attempts = attempts + 1 where timer_id in \
             (select timer_id from timer where due_at <= $2 and (locked_until is null or locked_until <= $3) \
              order by due_at limit $4 for update skip locked) returning *",
        )
        .bind(lease_until)
        .bind(now)
        .bind(now)
        .bind(limit)
        .fetch_all(&mut *self.tx)
        .await
        .map_err(map_err)?
        .iter()
        .map(timer_from_row)
        .collect()
    }

    async fn delete_timer(&mut self, id: Uuid) -> StoreResult<()> {
        sqlx::query("delete from timer where timer_id = $1").bind(id).execute(&mut *self.tx).await.map_err(map_err)?;
        Ok(())
    }

    async fn reschedule_timer(&mut self, id: Uuid, due_at: DateTime<Utc>) -> StoreResult<()> {
        sqlx::query("update timer set due_at = $1, locked_until = null where timer_id = $2")
            .bind(due_at)
            .bind(id)
            .execute(&mut *self.tx)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn pending_timers(&mut self) -> StoreResult<Vec<Timer>> {
        sqlx::query("select * from timer order by due_at")
            .fetch_all(&mut *self.tx)
            .await
            .map_err(map_err)?
            .iter()
            .map(timer_from_row)
            .collect()
    }

    async fn bring_forward(&mut self, kind: &str, now: DateTime<Utc>) -> StoreResult<u64> {
        let r = sqlx::query("update timer set due_at = $1 where kind = $2 and due_at > $1 and (locked_until is null or locked_until <= $1)")
            .bind(now)
            .bind(kind)
            .execute(&mut *self.tx)
            .await
            .map_err(map_err)?;
        Ok(r.rows_affected())
    }
}

const PARENT_SELECT: &str = "select p.*, \
    coalesce((select sum(c.quantity) from child_order c where c.parent_order_id = p.parent_order_id \
              and c.state in ('WORKING', 'AWAITING_MATCH', 'AWAITING_RFQ_ACCEPTANCE'))::bigint, 0) as working, \
    coalesce((select sum(c.quantity) from child_order c where c.parent_order_id = p.parent_order_id \
              and c.state in ('MATCHED', 'BROKER_ACCEPTED', 'BROKER_FILLED', 'PARTIAL_BROKER_ACCEPTED', 'PARTIAL_BROKER_FILLED'))::bigint, 0) as matched \
    from parent_order p";

fn parent_from_row(row: &PgRow) -> StoreResult<ParentOrderView> {
    let direction: String = get(row, "direction")?;
    let state: String = get(row, "state")?;
    Ok(ParentOrderView {
        parent: ParentOrder {
            parent_order_id: ParentOrderId(get(row, "parent_order_id")?),
            company_id: CompanyId(get(row, "company_id")?),
            created_by: UserId(get(row, "created_by")?),
            instrument_id: InstrumentId(get(row, "instrument_id")?),
            direction: Direction::parse(&direction)
                .ok_or_else(|| StoreError::Other(format!("stored direction {direction}")))?,
            quantity: get(row, "quantity")?,
            broker_instructions: get(row, "broker_instructions")?,
            state: ParentState::parse(&state)
                .ok_or_else(|| StoreError::Other(format!("stored parent state {state}")))?,
            created_at: get(row, "created_at")?,
            updated_at: get(row, "updated_at")?,
        },
        working: get(row, "working")?,
        matched: get(row, "matched")?,
    })
}

fn order_from_row(row: &PgRow) -> StoreResult<ChildOrder> {
    let direction: String = get(row, "direction")?;
    let state: String = get(row, "state")?;
    Ok(ChildOrder {
        order_id: OrderId(get(row, "order_id")?),
        parent_order_id: ParentOrderId(get(row, "parent_order_id")?),
        company_id: CompanyId(get(row, "company_id")?),
        created_by: UserId(get(row, "created_by")?),
        instrument_id: InstrumentId(get(row, "instrument_id")?),
        direction: Direction::parse(&direction)
            .ok_or_else(|| StoreError::Other(format!("stored direction {direction}")))?,
        state: OrderState::parse(&state).ok_or_else(|| StoreError::Other(format!("stored order state {state}")))?,
        price: get(row, "price")?,
        quantity: get(row, "quantity")?,
        iceberg: get(row, "iceberg")?,
        residual: get(row, "residual")?,
        broker_id: CompanyId(get(row, "broker_id")?),
        created_at: get(row, "created_at")?,
        updated_at: get(row, "updated_at")?,
    })
}

/// An SQL list of states; the values come from the closed enum, never from input.
fn state_list(states: &[OrderState]) -> String {
    states.iter().map(|s| format!("'{}'", s.as_str())).collect::<Vec<_>>().join(", ")
}

#[async_trait]
impl OrderRepo for PgTx {
    async fn lock_parent_order(&mut self, id: ParentOrderId) -> StoreResult<()> {
        sqlx::query("select 1 from parent_order where parent_order_id = $1 for update")
            .bind(id.0)
            .execute(&mut *self.tx)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn insert_parent_order(&mut self, p: &ParentOrder) -> StoreResult<()> {
        sqlx::query(
            "insert into parent_order (parent_order_id, company_id, created_by, instrument_id, direction, quantity, \
             broker_instructions, state, created_at, updated_at) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind(p.parent_order_id.0)
        .bind(p.company_id.0)
        .bind(p.created_by.0)
        .bind(p.instrument_id.0)
        .bind(p.direction.as_str())
        .bind(p.quantity)
        .bind(&p.broker_instructions)
        .bind(p.state.as_str())
        .bind(p.created_at)
        .bind(p.updated_at)
        .execute(&mut *self.tx)
        .await
        .map_err(map_err)?;
        Ok(())
    }

    async fn update_parent_order_state(
        &mut self,
        id: ParentOrderId,
        state: ParentState,
        at: DateTime<Utc>,
    ) -> StoreResult<()> {
        sqlx::query("update parent_order set state = $1, updated_at = $2 where parent_order_id = $3")
            .bind(state.as_str())
            .bind(at)
            .bind(id.0)
            .execute(&mut *self.tx)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn parent_order(&mut self, id: ParentOrderId) -> StoreResult<Option<ParentOrderView>> {
        sqlx::query(sqlx::AssertSqlSafe(format!("{PARENT_SELECT} where p.parent_order_id = $1")))
            .bind(id.0)
            .fetch_optional(&mut *self.tx)
            .await
            .map_err(map_err)?
            .as_ref()
            .map(parent_from_row)
            .transpose()
    }

    async fn parent_orders(&mut self, company: CompanyId, states: &[ParentState]) -> StoreResult<Vec<ParentOrderView>> {
        if states.is_empty() {
            return Ok(vec![]);
        }
        let list = states.iter().map(|s| format!("'{}'", s.as_str())).collect::<Vec<_>>().join(", ");
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "{PARENT_SELECT} where p.company_id = $1 and p.state in ({list}) \
             order by p.created_at desc, p.parent_order_id desc"
        )))
        .bind(company.0)
        .fetch_all(&mut *self.tx)
        .await
        .map_err(map_err)?
        .iter()
        .map(parent_from_row)
        .collect()
    }

    async fn insert_order(&mut self, o: &ChildOrder) -> StoreResult<()> {
        sqlx::query(
            "insert into child_order (order_id, parent_order_id, company_id, created_by, instrument_id, direction, state, \
             price, quantity, iceberg, residual, broker_id, created_at, updated_at) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        )
        .bind(o.order_id.0)
        .bind(o.parent_order_id.0)
        .bind(o.company_id.0)
        .bind(o.created_by.0)
        .bind(o.instrument_id.0)
        .bind(o.direction.as_str())
        .bind(o.state.as_str())
        .bind(o.price)
        .bind(o.quantity)
        .bind(o.iceberg)
        .bind(o.residual)
        .bind(o.broker_id.0)
        .bind(o.created_at)
        .bind(o.updated_at)
        .execute(&mut *self.tx)
        .await
        .map_err(map_err)?;
        Ok(())
    }

    async fn update_order(&mut self, o: &ChildOrder) -> StoreResult<()> {
        sqlx::query(
            "update child_order set state = $1, price = $2, quantity = $3, iceberg = $4, residual = $5, \
             updated_at = $6 where order_id = $7",
        )
        .bind(o.state.as_str())
        .bind(o.price)
        .bind(o.quantity)
        .bind(o.iceberg)
        .bind(o.residual)
        .bind(o.updated_at)
        .bind(o.order_id.0)
        .execute(&mut *self.tx)
        .await
        .map_err(map_err)?;
        Ok(())
    }

    async fn order(&mut self, id: OrderId) -> StoreResult<Option<ChildOrder>> {
        sqlx::query("select * from child_order where order_id = $1")
            .bind(id.0)
            .fetch_optional(&mut *self.tx)
            .await
            .map_err(map_err)?
            .as_ref()
            .map(order_from_row)
            .transpose()
    }

    async fn orders(&mut self, f: &OrderFilter) -> StoreResult<Vec<ChildOrder>> {
        let states =
            if f.states.is_empty() { String::new() } else { format!(" and state in ({})", state_list(&f.states)) };
        let sql = format!(
            "select * from child_order where ($1::uuid is null or company_id = $1) \
             and ($2::uuid is null or instrument_id = $2) and ($3::uuid is null or created_by = $3) \
             and ($4::uuid is null or parent_order_id = $4){states} order by created_at desc, order_id desc"
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(f.company_id.map(|c| c.0))
            .bind(f.instrument_id.map(|c| c.0))
            .bind(f.created_by.map(|c| c.0))
            .bind(f.parent_order_id.map(|c| c.0))
            .fetch_all(&mut *self.tx)
            .await
            .map_err(map_err)?
            .iter()
            .map(order_from_row)
            .collect()
    }

    async fn book_rows(&mut self, instrument: InstrumentId, min_block: i64) -> StoreResult<Vec<BookRow>> {
        let rows = sqlx::query(
            "select price, direction, company_id, \
             sum(case when iceberg and quantity > $2 then $2 else quantity end)::bigint as shown \
             from child_order where instrument_id = $1 and state = 'WORKING' group by price, direction, company_id",
        )
        .bind(instrument.0)
        .bind(min_block)
        .fetch_all(&mut *self.tx)
        .await
        .map_err(map_err)?;
        rows.iter()
            .map(|row| {
                let direction: String = get(row, "direction")?;
                Ok(BookRow {
                    price: get(row, "price")?,
                    direction: Direction::parse(&direction)
                        .ok_or_else(|| StoreError::Other(format!("stored direction {direction}")))?,
                    company_id: CompanyId(get(row, "company_id")?),
                    shown: get(row, "shown")?,
                })
            })
            .collect()
    }

    async fn orders_in_states(&mut self, states: &[OrderState]) -> StoreResult<Vec<ChildOrder>> {
        if states.is_empty() {
            return Ok(vec![]);
        }
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "select * from child_order where state in ({}) order by created_at, order_id",
            state_list(states)
        )))
        .fetch_all(&mut *self.tx)
        .await
        .map_err(map_err)?
        .iter()
        .map(order_from_row)
        .collect()
    }
}
