//! A company's FIX session kept in the venue's database: ironfix's [`MessageStore`] on
//! the engine's `fix_*` use cases. The counters are cached for the engine's synchronous
//! reads and written through on every change.

use async_trait::async_trait;
use bytes::Bytes;
use ironfix_core::error::StoreError;
use ironfix_core::message::MsgType;
use ironfix_store::{MessageStore, StoredMessage};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::SystemTime;
use upstairs_domain::CompanyId;
use upstairs_engine::model::FixSession;
use upstairs_engine::{Engine, EngineError, Store};

use crate::app::Carried;

pub struct DbStore<S: Store> {
    engine: Engine<S>,
    company: CompanyId,
    carried: Arc<Carried>,
    next_sender: AtomicU64,
    next_target: AtomicU64,
    watermark: AtomicU64,
    reset_owed: AtomicBool,
    created: SystemTime,
}

fn seq(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(1).max(1)
}

fn db(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn failed(seq_num: u64, e: &EngineError) -> StoreError {
    StoreError::StoreFailed { seq_num, reason: e.to_string() }
}

impl<S: Store> DbStore<S> {
    /// The company's session as stored (nothing is written: the peer is not
    /// authenticated yet), or a new one at 1 and 1.
    pub async fn open(engine: Engine<S>, company: CompanyId, carried: Arc<Carried>) -> Result<Self, EngineError> {
        let store = Self {
            engine,
            company,
            carried,
            next_sender: AtomicU64::new(1),
            next_target: AtomicU64::new(1),
            watermark: AtomicU64::new(0),
            reset_owed: AtomicBool::new(false),
            created: SystemTime::now(),
        };
        store.load().await?;
        Ok(store)
    }

    /// Reads the stored counters. Inbound messages past the application watermark were
    /// accepted but maybe not acted on (a crash, or a session closed before its queue
    /// drained): the next expected number is put back to just after the watermark, so the
    /// peer is asked for them again (ResendRequest; it resends with PossDup) and the
    /// gateway, which acts on each idempotently, acts on them now (ADR 0025). The stored
    /// number follows at the next inbound message.
    async fn load(&self) -> Result<(), EngineError> {
        let Some(s) = self.engine.fix.fix_session_stored(self.company).await? else { return Ok(()) };
        let mut target = s.next_target_seq;
        if s.app_watermark > 0 && s.app_watermark + 1 < target {
            tracing::warn!(company = %self.company, watermark = s.app_watermark, target, "inbound FIX messages will be asked again");
            target = s.app_watermark + 1;
        }
        self.next_sender.store(seq(s.next_sender_seq), Ordering::Release);
        self.next_target.store(seq(target), Ordering::Release);
        self.watermark.store(u64::try_from(s.app_watermark).unwrap_or(0), Ordering::Release);
        self.reset_owed.store(s.reset_owed, Ordering::Release);
        Ok(())
    }

    /// The frames filed in `begin..=end`, at most `limit`.
    async fn read(&self, begin: u64, end: u64, limit: i64) -> Result<Vec<StoredMessage>, StoreError> {
        let frames = self
            .engine
            .fix
            .fix_sent(self.company, db(begin), db(end), limit)
            .await
            .map_err(|e| StoreError::RetrieveFailed { seq_num: begin, reason: e.to_string() })?;
        frames
            .into_iter()
            .map(|m| {
                let t = MsgType::new(&m.msg_type).map_err(|e| StoreError::Corrupted { reason: e.to_string() })?;
                Ok(StoredMessage::new(seq(m.seq), t, Bytes::from(m.frame)))
            })
            .collect()
    }

    /// Writes one change to the stored session (the row is locked while it is read and
    /// written back, so concurrent changes never undo each other).
    async fn change(&self, at: u64, f: impl FnOnce(&mut FixSession) + Send) -> Result<(), StoreError> {
        self.engine.fix.fix_update_session(self.company, f).await.map(drop).map_err(|e| failed(at, &e))
    }
}

#[async_trait]
impl<S: Store> MessageStore for DbStore<S> {
    /// Files a frame (ironfix files through `file_outbound`; this is the trait's
    /// single-purpose form). The stored next number never goes back.
    async fn store(&self, seq_num: u64, msg_type: &MsgType, message: &[u8]) -> Result<(), StoreError> {
        let next = self.next_sender.load(Ordering::Acquire).max(seq_num + 1);
        self.file_outbound(seq_num, msg_type, message, next).await
    }

    async fn get_range(&self, begin: u64, end: u64) -> Result<Vec<StoredMessage>, StoreError> {
        let last = if end == 0 { u64::MAX } else { end };
        if begin == 0 || begin > last {
            return Err(StoreError::InvalidRange { begin, end });
        }
        let found = self.read(begin, last, i64::MAX).await?;
        if found.is_empty() {
            return Err(StoreError::RangeNotAvailable { begin, end });
        }
        Ok(found)
    }

    async fn get_page(&self, begin: u64, end: u64, limit: usize) -> Result<Vec<StoredMessage>, StoreError> {
        if begin == 0 || begin > end {
            return Err(StoreError::InvalidRange { begin, end });
        }
        self.read(begin, end, i64::try_from(limit).unwrap_or(i64::MAX)).await
    }

    async fn file_outbound(
        &self,
        seq_num: u64,
        msg_type: &MsgType,
        message: &[u8],
        next_sender: u64,
    ) -> Result<(), StoreError> {
        // One statement files the frame, moves the stored next number to `seq_num + 1`
        // (ironfix always asks for that) and marks the outbox message carried sent.
        let carried = self.carried.take(msg_type.as_str());
        self.engine
            .fix
            .fix_file_outbound(self.company, db(seq_num), msg_type.as_str(), message, carried.as_deref())
            .await
            .map_err(|e| failed(seq_num, &e))?;
        if next_sender != seq_num + 1 {
            self.change(next_sender, move |s| s.next_sender_seq = db(next_sender)).await?;
        }
        self.next_sender.store(next_sender, Ordering::Release);
        Ok(())
    }

    fn next_sender_seq(&self) -> u64 {
        self.next_sender.load(Ordering::Acquire)
    }

    fn next_target_seq(&self) -> u64 {
        self.next_target.load(Ordering::Acquire)
    }

    async fn set_next_sender_seq(&self, n: u64) -> Result<(), StoreError> {
        self.change(n, move |s| s.next_sender_seq = db(n)).await?;
        self.next_sender.store(n, Ordering::Release);
        Ok(())
    }

    async fn set_next_target_seq(&self, n: u64) -> Result<(), StoreError> {
        let now = self.engine.clock().now();
        self.change(n, move |s| {
            s.next_target_seq = db(n);
            s.last_message_at = Some(now);
        })
        .await?;
        self.next_target.store(n, Ordering::Release);
        Ok(())
    }

    async fn reset(&self) -> Result<(), StoreError> {
        self.reset_to(1, 1).await
    }

    async fn reset_to(&self, next_sender: u64, next_target: u64) -> Result<(), StoreError> {
        self.engine
            .fix
            .fix_reset(self.company, db(next_sender), db(next_target))
            .await
            .map_err(|e| failed(next_sender, &e))?;
        self.next_sender.store(next_sender, Ordering::Release);
        self.next_target.store(next_target, Ordering::Release);
        self.watermark.store(0, Ordering::Release);
        Ok(())
    }

    fn reset_owed(&self) -> bool {
        self.reset_owed.load(Ordering::Acquire)
    }

    async fn set_reset_owed(&self, owed: bool) -> Result<(), StoreError> {
        self.change(0, move |s| s.reset_owed = owed).await?;
        self.reset_owed.store(owed, Ordering::Release);
        Ok(())
    }

    fn app_watermark(&self) -> u64 {
        self.watermark.load(Ordering::Acquire)
    }

    async fn set_app_watermark(&self, watermark: u64) -> Result<(), StoreError> {
        self.change(watermark, move |s| s.app_watermark = db(watermark)).await?;
        self.watermark.store(watermark, Ordering::Release);
        Ok(())
    }

    fn creation_time(&self) -> SystemTime {
        self.created
    }

    async fn refresh(&self) -> Result<(), StoreError> {
        self.load().await.map_err(|e| failed(0, &e))
    }
}
