//! PostgreSQL backend: several nodes may share one database; timers are claimed with
//! `FOR UPDATE SKIP LOCKED`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions, PgRow};
use sqlx::{PgPool, Postgres, Row, Transaction};
use std::str::FromStr;
use std::time::Duration;
use upstairs_domain::{CompanyId, SessionId, UserId};
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
        if !schema
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(StoreError::Other(format!("bad schema name {schema}")));
        }
        let opts = PgConnectOptions::from_str(url).map_err(map_err)?;
        let admin = PgPoolOptions::new()
            .max_connections(1)
            .connect_with(opts.clone())
            .await
            .map_err(map_err)?;
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "create schema if not exists {schema}"
        )))
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
        MIGRATOR
            .run(&pool)
            .await
            .map_err(|e| StoreError::Other(format!("migrate: {e}")))?;
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
        Ok(PgTx {
            tx: self.pool.begin().await.map_err(map_err)?,
        })
    }

    async fn read(&self) -> StoreResult<PgTx> {
        Ok(PgTx {
            tx: self.pool.begin().await.map_err(map_err)?,
        })
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

fn get<'r, T: sqlx::Decode<'r, Postgres> + sqlx::Type<Postgres>>(
    row: &'r PgRow,
    col: &str,
) -> StoreResult<T> {
    row.try_get(col).map_err(map_err)
}

fn company_from_row(row: &PgRow) -> StoreResult<Company> {
    Ok(Company {
        company_id: CompanyId(get(row, "company_id")?),
        name: get(row, "name")?,
        full_name: get(row, "full_name")?,
        roles: from_json(get::<Value>(row, "roles")?)?,
        created_at: get(row, "created_at")?,
        updated_at: get(row, "updated_at")?,
    })
}

const USER_SELECT: &str = "select u.*, c.name as company_name from app_user u join company c on c.company_id = u.company_id";

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
        purpose: LinkPurpose::parse(&purpose)
            .ok_or_else(|| StoreError::Other(format!("stored purpose {purpose}")))?,
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
            "insert into company (company_id, name, full_name, roles, created_at, updated_at) values ($1, $2, $3, $4, $5, $6)",
        )
        .bind(c.company_id.0)
        .bind(&c.name)
        .bind(&c.full_name)
        .bind(json(&c.roles)?)
        .bind(c.created_at)
        .bind(c.updated_at)
        .execute(&mut *self.tx)
        .await
        .map_err(map_err)?;
        Ok(())
    }

    async fn company(&mut self, id: CompanyId) -> StoreResult<Option<Company>> {
        sqlx::query("select * from company where company_id = $1")
            .bind(id.0)
            .fetch_optional(&mut *self.tx)
            .await
            .map_err(map_err)?
            .as_ref()
            .map(company_from_row)
            .transpose()
    }

    async fn company_by_name(&mut self, name: &str) -> StoreResult<Option<Company>> {
        sqlx::query("select * from company where name = $1")
            .bind(name)
            .fetch_optional(&mut *self.tx)
            .await
            .map_err(map_err)?
            .as_ref()
            .map(company_from_row)
            .transpose()
    }

    async fn count_companies(&mut self) -> StoreResult<i64> {
        sqlx::query_scalar("select count(*) from company")
            .fetch_one(&mut *self.tx)
            .await
            .map_err(map_err)
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
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "{USER_SELECT} where u.user_id = $1"
        )))
        .bind(id.0)
        .fetch_optional(&mut *self.tx)
        .await
        .map_err(map_err)?
        .as_ref()
        .map(user_from_row)
        .transpose()
    }

    async fn user_by_email(&mut self, email: &str) -> StoreResult<Option<UserView>> {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "{USER_SELECT} where u.email = $1"
        )))
        .bind(email)
        .fetch_optional(&mut *self.tx)
        .await
        .map_err(map_err)?
        .as_ref()
        .map(user_from_row)
        .transpose()
    }
}

#[async_trait]
impl SessionRepo for PgTx {
    async fn insert_session(&mut self, s: &Session) -> StoreResult<()> {
        sqlx::query("insert into session (session_id, user_id, token_hash, created_at, expires_at) values ($1, $2, $3, $4, $5)")
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

    async fn use_link_tokens_of_user(
        &mut self,
        user: UserId,
        now: DateTime<Utc>,
    ) -> StoreResult<u64> {
        let r = sqlx::query(
            "update link_token set used_at = $1 where user_id = $2 and used_at is null",
        )
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
        sqlx::query(
            "select * from action_log order by created_at desc, action_log_id desc limit $1",
        )
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

    async fn mark_outbox_sent(
        &mut self,
        id: Uuid,
        at: DateTime<Utc>,
        redacted: &OutgoingEmail,
    ) -> StoreResult<()> {
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
        sqlx::query(
            "update outbox set attempts = attempts + 1, last_error = $1 where outbox_id = $2",
        )
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
        sqlx::query("delete from timer where timer_id = $1")
            .bind(id)
            .execute(&mut *self.tx)
            .await
            .map_err(map_err)?;
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
