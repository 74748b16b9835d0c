//! Read-through caches of what the hot paths read on every call: instruments, the
//! brokers of a company and the levels of a book (ADR 0014). The store stays the
//! truth. Every event the engine publishes after a commit drops the entries it makes
//! stale, before the call that committed answers; a load that raced a drop is not
//! kept (each key has a generation, moved by every drop).

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use upstairs_domain::{CompanyId, InstrumentId, ParentOrderId};

use crate::book::BookLevels;
use crate::events::Event;
use crate::model::{CompanyRef, CounterpartyFilter, Exchange, Instrument, ParentOrder, Session, UserView};

pub(crate) struct Cache<K, V> {
    slots: Mutex<HashMap<K, Slot<V>>>,
    /// Every slot gets a generation never used before, so a slot dropped and made again
    /// is told apart from the one a slow load started on.
    next: AtomicU64,
}

struct Slot<V> {
    generation: u64,
    value: Option<Arc<V>>,
}

impl<K: Hash + Eq + Clone, V> Default for Cache<K, V> {
    fn default() -> Self {
        Self { slots: Mutex::new(HashMap::new()), next: AtomicU64::new(0) }
    }
}

impl<K: Hash + Eq + Clone, V> Cache<K, V> {
    /// The cached value, or what `load` reads (kept unless a drop came in between).
    /// `None` from `load` (no such row) is answered, never kept: unknown keys take no room.
    pub async fn get<E, F, Fut>(&self, key: K, load: F) -> Result<Option<Arc<V>>, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Option<V>, E>>,
    {
        let generation = {
            let mut slots = self.slots.lock().expect("cache lock");
            let slot = slots
                .entry(key.clone())
                .or_insert_with(|| Slot { generation: self.next.fetch_add(1, Ordering::Relaxed), value: None });
            if let Some(v) = &slot.value {
                return Ok(Some(v.clone()));
            }
            slot.generation
        };
        let loaded = load().await;
        let mut slots = self.slots.lock().expect("cache lock");
        let ours = slots.get(&key).is_some_and(|s| s.generation == generation);
        match loaded {
            Ok(Some(value)) => {
                let value = Arc::new(value);
                if let Some(slot) = slots.get_mut(&key).filter(|_| ours) {
                    slot.value = Some(value.clone());
                }
                Ok(Some(value))
            }
            other => {
                if ours && slots.get(&key).is_some_and(|s| s.value.is_none()) {
                    slots.remove(&key);
                }
                other.map(|_| None)
            }
        }
    }

    /// Changes the value kept for `key`, if one is kept (a load in flight is left alone:
    /// what it reads is at least as new).
    pub fn update(&self, key: &K, change: impl FnOnce(&mut V))
    where
        V: Clone,
    {
        let mut slots = self.slots.lock().expect("cache lock");
        if let Some(slot) = slots.get_mut(key)
            && let Some(v) = &slot.value
        {
            let mut changed = (**v).clone();
            change(&mut changed);
            slot.value = Some(Arc::new(changed));
        }
    }

    pub fn drop_all(&self) {
        self.slots.lock().expect("cache lock").clear();
    }

    pub fn drop_key(&self, key: &K) {
        self.slots.lock().expect("cache lock").remove(key);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.slots.lock().expect("cache lock").len()
    }
}

#[derive(Default)]
pub(crate) struct Caches {
    pub instruments: Cache<InstrumentId, Instrument>,
    pub brokers: Cache<CompanyId, Vec<CompanyRef>>,
    pub books: Cache<InstrumentId, BookLevels>,
    /// Parent orders as created: only what never changes (owner, instrument, side,
    /// quantity) is read from here; dropped when the parent stops being active.
    pub parents: Cache<ParentOrderId, ParentOrder>,
    /// A session and its user, by token hash: every authenticated call reads one.
    pub sessions: Cache<String, (Session, UserView)>,
    /// Every counterparty filter of the venue (one row per firm or trader that set one,
    /// ADR 0042): every take and preview screens with them.
    pub counterparty_filters: Cache<(), Vec<CounterpartyFilter>>,
    /// Every exchange's calendar (ADR 0052): every trading check reads its instrument's.
    pub exchanges: Cache<(), Vec<Exchange>>,
}

impl Caches {
    /// Drops every entry: after a time in which drops may have been missed.
    pub fn drop_everything(&self) {
        self.instruments.drop_all();
        self.brokers.drop_all();
        self.books.drop_all();
        self.parents.drop_all();
        self.sessions.drop_all();
        self.counterparty_filters.drop_all();
        self.exchanges.drop_all();
    }

    /// Drops what `event` makes stale.
    pub fn apply(&self, event: &Event) {
        match event {
            Event::BookChanged { instrument_id } => self.books.drop_key(instrument_id),
            Event::InstrumentChanged { instrument } => {
                // A new minimum block changes what icebergs show.
                self.instruments.drop_key(&instrument.instrument_id);
                self.books.drop_key(&instrument.instrument_id);
            }
            // A broker's new name is in every list that names it, a company's in its users'
            // sessions; a company gone or renamed is in the filters that name it.
            Event::CompanyChanged { .. } => {
                self.brokers.drop_all();
                self.sessions.drop_all();
                self.counterparty_filters.drop_all();
            }
            Event::CounterpartyFiltersChanged => self.counterparty_filters.drop_all(),
            Event::ExchangesChanged => self.exchanges.drop_all(),
            // Rare beside the calls that read them: all sessions are read again.
            Event::SessionsEnded { .. } | Event::UserChanged { .. } => self.sessions.drop_all(),
            Event::ParentOrderChanged { parent_order_id, active: false, .. } => self.parents.drop_key(parent_order_id),
            Event::OrderChanged { .. }
            | Event::ParentOrderChanged { .. }
            | Event::NotificationChanged { .. }
            | Event::AllocationChanged { .. }
            | Event::RfqChanged { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    #[tokio::test]
    async fn changes_only_a_value_it_keeps() {
        let cache: Cache<u8, u32> = Cache::default();
        cache.update(&1, |v| *v += 1);
        assert_eq!(cache.len(), 0, "nothing kept, nothing made");
        cache.get(1, || async { Ok::<_, Infallible>(Some(10)) }).await.unwrap();
        cache.update(&1, |v| *v += 1);
        let got = cache.get(1, || async { Err("loaded again") }).await.unwrap();
        assert_eq!(got.as_deref(), Some(&11));
    }

    #[tokio::test]
    async fn keeps_a_load_until_dropped_and_never_keeps_one_that_raced_a_drop() {
        let cache: Cache<u8, &str> = Cache::default();
        let got = cache.get(1, || async { Ok::<_, Infallible>(Some("v1")) }).await.unwrap();
        assert_eq!(got.as_deref(), Some(&"v1"));
        // Kept: the loader is not called again.
        let got = cache.get(1, || async { Err("loaded again") }).await;
        assert_eq!(got.unwrap().as_deref(), Some(&"v1"));

        cache.drop_key(&1);
        // A load that started before a drop answers what it read but is not kept.
        let got = cache
            .get(1, || async {
                cache.drop_key(&1);
                Ok::<_, Infallible>(Some("read before the drop"))
            })
            .await
            .unwrap();
        assert_eq!(got.as_deref(), Some(&"read before the drop"));
        let got = cache.get(1, || async { Ok::<_, Infallible>(Some("v2")) }).await.unwrap();
        assert_eq!(got.as_deref(), Some(&"v2"));

        // Absent rows are answered, not kept, and take no room.
        assert_eq!(cache.get(2, || async { Ok::<_, Infallible>(None) }).await.unwrap(), None);
        assert_eq!(cache.len(), 1);
        let got = cache.get(2, || async { Ok::<_, Infallible>(Some("made")) }).await.unwrap();
        assert_eq!(got.as_deref(), Some(&"made"));

        // Dropping all: nothing kept, and a load racing it is not kept either.
        cache.drop_all();
        let got = cache
            .get(2, || async {
                cache.drop_all();
                Ok::<_, Infallible>(Some("raced"))
            })
            .await
            .unwrap();
        assert_eq!(got.as_deref(), Some(&"raced"));
        let got = cache.get(2, || async { Ok::<_, Infallible>(Some("fresh")) }).await.unwrap();
        assert_eq!(got.as_deref(), Some(&"fresh"));
        assert_eq!(cache.get(1, || async { Ok::<_, Infallible>(Some("v3")) }).await.unwrap().as_deref(), Some(&"v3"));
    }
}
