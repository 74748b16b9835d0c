//! The store ports of the engine on SQLite (embedded default) and PostgreSQL. Each
//! backend owns its migrations and its SQL; the rest of the server is generic.

mod adapt;
mod conn;
mod fanout;
mod group;
pub mod postgres;
mod repos;
mod rows;
pub mod sqlite;

use upstairs_engine::StoreError;

pub use postgres::PgStore;
pub use sqlite::SqliteStore;

/// Which backend a database URL names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

pub fn backend_of(url: &str) -> Result<Backend, String> {
    if url.starts_with("sqlite:") {
        Ok(Backend::Sqlite)
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Backend::Postgres)
    } else {
        Err(format!("unsupported database URL {}: use sqlite://… or postgres://…", redact_url(url)))
    }
}

/// The URL with any password replaced, safe to log.
pub fn redact_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        Ok(u) => u.to_string(),
        Err(_) => "<unparseable database URL>".into(),
    }
}

/// A database error by its code (SQLite's extended result code, PostgreSQL's SQLSTATE),
/// past the unique and CHECK violations each driver names itself.
pub(crate) fn by_code(code: &str, message: &str) -> Option<StoreError> {
    // A bound a trigger keeps (SQLite's RAISE(ABORT): SQLITE_CONSTRAINT_TRIGGER) or a sum
    // that left 64 bits (PostgreSQL's numeric_value_out_of_range): refused as a CHECK is
    // (ADR 0027).
    if code == "1811" || code == "22003" {
        return Some(StoreError::Check(message.to_owned()));
    }
    // SQLite BUSY/LOCKED; PostgreSQL serialization failure, deadlock, lock timeout,
    // statement timeout, idle transaction ended, server shutting down or starting.
    if matches!(code, "5" | "6" | "517" | "40001" | "40P01" | "55P03" | "57014" | "25P03" | "57P01" | "57P02" | "57P03")
        || code.starts_with("08")
    {
        return Some(StoreError::Busy(message.to_owned()));
    }
    // SQLite cannot write: read-only file, disk full, I/O error (primary codes of the
    // extended ones).
    if let Ok(n) = code.parse::<u32>()
        && matches!(n & 0xff, 8 | 10 | 13)
    {
        return Some(StoreError::Unwritable(message.to_owned()));
    }
    None
}

pub(crate) fn map_err(e: sqlx::Error) -> StoreError {
    match &e {
        sqlx::Error::Database(db) => {
            let constraint = || db.constraint().unwrap_or(db.message()).to_owned();
            match db.kind() {
                sqlx::error::ErrorKind::UniqueViolation => return StoreError::Unique(constraint()),
                sqlx::error::ErrorKind::CheckViolation => return StoreError::Check(constraint()),
                _ => {}
            }
            let code = db.code().map(|c| c.into_owned()).unwrap_or_default();
            by_code(&code, db.message()).unwrap_or_else(|| StoreError::Other(e.to_string()))
        }
        sqlx::Error::PoolTimedOut => StoreError::Busy("connection pool timed out".into()),
        // A connection left inside a transaction whose rollback failed: it is replaced.
        sqlx::Error::InvalidSavePointStatement => StoreError::Busy(e.to_string()),
        // A connection the database dropped (restart, idle cut): the next try gets another.
        sqlx::Error::Io(_) | sqlx::Error::Protocol(_) => StoreError::Busy(e.to_string()),
        _ => StoreError::Other(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(backend_of("sqlite://data/upstairs.db"), Ok(Backend::Sqlite));
        assert_eq!(backend_of("postgres://u:p@h/db"), Ok(Backend::Postgres));
        assert!(backend_of("mysql://u:secret@h/db").unwrap_err().contains("***"));
        assert_eq!(redact_url("postgres://u:secret@h:5432/db"), "postgres://u:***@h:5432/db");
        assert!(!redact_url("postgres://u:secret@h/db").contains("secret"));
        assert_eq!(redact_url("postgres://h/db"), "postgres://h/db");
    }
}

/// Fresh, isolated databases for tests: a new SQLite file, or a new PostgreSQL schema
/// in the database named by `UPSTAIRS_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/test`).
#[cfg(feature = "testing")]
pub mod testing {
    use super::*;

    /// How the stores map a driver error (tests of what a failure answers).
    pub fn map_error(e: sqlx::Error) -> StoreError {
        super::map_err(e)
    }

    pub fn postgres_url() -> String {
        std::env::var("UPSTAIRS_TEST_POSTGRES_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
    }

    /// A new SQLite database file under the system temp folder; files of earlier runs
    /// older than an hour are removed on the way.
    pub async fn fresh_sqlite() -> SqliteStore {
        let dir = std::env::temp_dir().join("upstairs-store-tests");
        let _ = std::fs::create_dir_all(&dir);
        let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if entry.metadata().and_then(|m| m.modified()).is_ok_and(|t| t < hour_ago) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        let path = dir.join(format!("{}.db", uuid::Uuid::new_v4().simple()));
        SqliteStore::connect(&format!("sqlite://{}", path.display())).await.expect("open test sqlite")
    }

    /// A new schema in the test PostgreSQL database.
    pub async fn fresh_postgres() -> PgStore {
        let schema = fresh_schema_name().await;
        PgStore::connect_in_schema(&postgres_url(), &schema).await.unwrap_or_else(|e| {
            panic!("PostgreSQL test database at {} is not reachable: {e}", redact_url(&postgres_url()))
        })
    }

    /// `t_<unix seconds>_<random>`; schemas of earlier runs older than an hour are
    /// dropped on the way, so the shared test database does not grow without end.
    pub async fn fresh_schema_name() -> String {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        if let Ok(pool) = sqlx::PgPool::connect(&postgres_url()).await {
            let old: Vec<String> = sqlx::query_scalar("select nspname from pg_namespace where nspname ~ '^t_[0-9]+_'")
                .fetch_all(&pool)
                .await
                .unwrap_or_default();
            for name in old {
                let created = name.split('_').nth(1).and_then(|t| t.parse::<u64>().ok()).unwrap_or(u64::MAX);
                if created.saturating_add(3600) < now {
                    let _ = sqlx::query(sqlx::AssertSqlSafe(format!("drop schema if exists {name} cascade")))
                        .execute(&pool)
                        .await;
                }
            }
            pool.close().await;
        }
        format!("t_{now}_{}", uuid::Uuid::new_v4().simple())
    }
}
