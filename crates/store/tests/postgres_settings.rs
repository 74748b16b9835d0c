#![allow(clippy::unwrap_used)]
//! Every pooled PostgreSQL connection bounds its statements, lock waits and idle
//! transactions (ADR 0024), and a statement over its time is a busy database (503), not
//! an internal error.

use upstairs_engine::StoreError;
use upstairs_engine::ports::{Store, Tx};
use upstairs_store::testing::fresh_postgres;

#[tokio::test]
async fn pooled_connections_carry_the_timeouts() {
    let store = fresh_postgres().await;
    for (setting, want) in [
        ("statement_timeout", upstairs_store::postgres::STATEMENT_TIMEOUT),
        ("lock_timeout", upstairs_store::postgres::LOCK_TIMEOUT),
        ("idle_in_transaction_session_timeout", upstairs_store::postgres::IDLE_IN_TRANSACTION_TIMEOUT),
    ] {
        let got: String =
            sqlx::query_scalar(sqlx::AssertSqlSafe(format!("show {setting}"))).fetch_one(store.pool()).await.unwrap();
        assert_eq!(got, want, "{setting}");
    }
    // A lock held past the lock timeout: the waiting write is refused as busy.
    let mut holder = store.pool().begin().await.unwrap();
    sqlx::query("lock table app_user in access exclusive mode").execute(&mut *holder).await.unwrap();
    let mut waiter = store.pool().acquire().await.unwrap();
    sqlx::query("set lock_timeout = '50ms'").execute(&mut *waiter).await.unwrap();
    let err = sqlx::query("select count(*) from app_user").execute(&mut *waiter).await.unwrap_err();
    drop(waiter);
    holder.rollback().await.unwrap();
    let mapped = upstairs_store::testing::map_error(err);
    assert!(matches!(mapped, StoreError::Busy(_)), "{mapped:?}");
    let _ = store.write().await.unwrap().commit().await;
}
