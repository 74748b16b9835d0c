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

/// What one transaction read of the venue's reference data (companies with their brokers,
/// users with their company's name), so a use case that needs a row several times reads it
/// once, and the timers it made sure of. Kept only inside a real transaction (one snapshot); any write of a company or a
/// user through the transaction forgets it all.
#[derive(Default)]
pub struct Memo {
    pub companies: std::collections::HashMap<upstairs_domain::CompanyId, Option<upstairs_engine::model::Company>>,
    pub users: std::collections::HashMap<upstairs_domain::UserId, Option<upstairs_engine::model::UserView>>,
    /// Dedupe keys of timers this transaction already inserted or found pending: another
    /// insert under one of them would do nothing (`on conflict do nothing`).
    pub timers: std::collections::HashSet<String>,
    /// The companies whose FIX outbox this transaction wrote to: their sessions are rung
    /// once it commits.
    pub fix_queued: Vec<upstairs_domain::CompanyId>,
    /// The minimum blocks this transaction holds (`hold_block`), by instrument.
    pub blocks: std::collections::HashMap<upstairs_domain::InstrumentId, i64>,
}

impl Memo {
    /// A company or a user was written: what was read of either may be stale.
    pub fn forget(&mut self) {
        self.companies.clear();
        self.users.clear();
    }
}
