//! What a store transaction holds: a real transaction, or, for a read of one statement
//! (atomic by itself), a plain pooled connection that skips `BEGIN` and `ROLLBACK`.

use sqlx::pool::PoolConnection;
use sqlx::{Database, Transaction};
use std::ops::{Deref, DerefMut};

use crate::map_err;
use upstairs_engine::StoreError;

pub enum Conn<DB: Database> {
    Tx(Transaction<'static, DB>),
    Single(PoolConnection<DB>),
}

impl<DB: Database> Conn<DB> {
    pub async fn commit(self) -> Result<(), StoreError> {
        match self {
            Conn::Tx(tx) => tx.commit().await.map_err(map_err),
            Conn::Single(_) => Ok(()),
        }
    }
}

impl<DB: Database> Deref for Conn<DB> {
    type Target = DB::Connection;

    fn deref(&self) -> &DB::Connection {
        match self {
            Conn::Tx(tx) => tx,
            Conn::Single(c) => c,
        }
    }
}

impl<DB: Database> DerefMut for Conn<DB> {
    fn deref_mut(&mut self) -> &mut DB::Connection {
        match self {
            Conn::Tx(tx) => &mut *tx,
            Conn::Single(c) => &mut *c,
        }
    }
}
