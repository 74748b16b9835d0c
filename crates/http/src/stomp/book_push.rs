//! Book pushes conflated per instrument (ADR 0011): a write only says "the book of this
//! instrument changed"; here the book is read back and pushed at most once per window
//! per instrument, and the last push always shows the state after the last change.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::broadcast;
use tokio::time::Instant;
use upstairs_domain::InstrumentId;
use upstairs_engine::{Engine, Store};

use super::messages::{Audience, BookMessage, Outgoing, book_destination};

/// Shortest time between two pushes of one instrument's book.
pub const WINDOW: Duration = Duration::from_millis(50);

/// Reads the shared (anonymous) book of an instrument.
pub trait BookSource: Send + Sync + 'static {
    fn read(&self, instrument_id: InstrumentId) -> impl Future<Output = Result<BookMessage, String>> + Send;
}

impl<S: Store> BookSource for Engine<S> {
    async fn read(&self, instrument_id: InstrumentId) -> Result<BookMessage, String> {
        self.anonymous_book(instrument_id).await.map(|b| BookMessage::from(&b)).map_err(|e| e.to_string())
    }
}

/// Instruments with a pusher task, each with whether a change came since its last read.
type Pending = Arc<Mutex<HashMap<InstrumentId, bool>>>;

/// Turns `changed(instrument)` calls into book pushes on `/topic/instruments/{id}/book`.
///
/// One task per instrument with changes in flight: it pushes at once when the instrument
/// was quiet, then at most once per `window` while changes keep coming, and ends after a
/// quiet window. A change during a read marks the instrument again, so one more push
/// follows: the last push never shows a state older than the last change.
pub struct BookPusher<B> {
    source: Arc<B>,
    out: broadcast::Sender<Outgoing>,
    pending: Pending,
    window: Duration,
}

impl<B> Clone for BookPusher<B> {
    fn clone(&self) -> Self {
        Self { source: self.source.clone(), out: self.out.clone(), pending: self.pending.clone(), window: self.window }
    }
}

impl<B: BookSource> BookPusher<B> {
    pub fn new(source: B, out: broadcast::Sender<Outgoing>, window: Duration) -> Self {
        Self { source: Arc::new(source), out, pending: Arc::default(), window }
    }

    /// The book of `instrument_id` changed: push it soon.
    pub fn changed(&self, instrument_id: InstrumentId) {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        match pending.get_mut(&instrument_id) {
            // Its task will see the mark before it ends.
            Some(dirty) => *dirty = true,
            None => {
                pending.insert(instrument_id, true);
                tokio::spawn(self.clone().run(instrument_id));
            }
        }
    }

    async fn run(self, instrument_id: InstrumentId) {
        let destination = book_destination(instrument_id);
        let mut next = Instant::now();
        loop {
            tokio::time::sleep_until(next).await;
            {
                let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
                let dirty = pending.entry(instrument_id).or_insert(false);
                if !*dirty {
                    // A quiet window: end; the next change starts a new task (under this lock).
                    pending.remove(&instrument_id);
                    return;
                }
                // Cleared before the read: a change from now on is pushed by a later round.
                *dirty = false;
            }
            match self.source.read(instrument_id).await {
                Ok(book) => {
                    if let Some(m) = Outgoing::message(Audience::Subscribers, &destination, &book) {
                        // No receiver means no session is connected.
                        let _ = self.out.send(m);
                    }
                }
                Err(e) => tracing::warn!(error = %e, %instrument_id, "could not read the book to push"),
            }
            next = Instant::now() + self.window;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal::Decimal;
    use std::sync::atomic::{AtomicI64, Ordering};

    /// A book whose one level holds `quantity`; a read sees the quantity when it starts
    /// and takes `read_takes`, like a database read.
    #[derive(Clone, Default)]
    struct FakeBook {
        quantity: Arc<AtomicI64>,
        reads: Arc<Mutex<Vec<Instant>>>,
        read_takes: Duration,
    }

    impl BookSource for FakeBook {
        async fn read(&self, instrument_id: InstrumentId) -> Result<BookMessage, String> {
            self.reads.lock().unwrap().push(Instant::now());
            let quantity = self.quantity.load(Ordering::SeqCst);
            tokio::time::sleep(self.read_takes).await;
            Ok(BookMessage {
                instrument_id: instrument_id.0,
                min_tick_price: Decimal::ONE,
                max_tick_price: Decimal::TEN,
                levels: vec![super::super::messages::BookMessageLevel {
                    price: Decimal::TWO,
                    buy_quantity: quantity,
                    sell_quantity: 0,
                }],
            })
        }
    }

    /// The buy quantities of the pushes received so far, per destination.
    fn pushes(rx: &mut broadcast::Receiver<Outgoing>) -> Vec<(String, i64)> {
        std::iter::from_fn(|| rx.try_recv().ok())
            .map(|o| match o {
                Outgoing::Message { destination, body, audience: Audience::Subscribers } => {
                    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
                    (destination.to_string(), v["levels"][0]["buy_quantity"].as_i64().unwrap())
                }
                other => panic!("unexpected {other:?}"),
            })
            .collect()
    }

    fn pusher(book: &FakeBook) -> (BookPusher<FakeBook>, broadcast::Receiver<Outgoing>) {
        let (tx, rx) = broadcast::channel(1024);
        (BookPusher::new(book.clone(), tx, WINDOW), rx)
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_of_changes_gives_a_few_pushes_ending_on_the_final_state() {
        let book = FakeBook { read_takes: Duration::from_millis(3), ..Default::default() };
        let (pusher, mut rx) = pusher(&book);
        let id = InstrumentId::new();
        // 100 writes, one every millisecond: 100 ms of changes.
        for n in 1..=100 {
            book.quantity.store(n, Ordering::SeqCst);
            pusher.changed(id);
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;

        let got = pushes(&mut rx);
        assert!((2..=4).contains(&got.len()), "100 changes over 100 ms gave {} pushes: {got:?}", got.len());
        assert_eq!(got.last(), Some(&(book_destination(id), 100)), "the last push shows the final state");
        let reads = book.reads.lock().unwrap().clone();
        assert_eq!(reads.len(), got.len(), "one read per push");
        assert!(reads.windows(2).all(|w| w[1] - w[0] >= WINDOW), "pushes a window apart: {reads:?}");
        assert!(pusher.pending.lock().unwrap().is_empty(), "the task ends once quiet");
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_at_one_instant_gives_at_most_two_pushes() {
        let book = FakeBook::default();
        let (pusher, mut rx) = pusher(&book);
        let id = InstrumentId::new();
        for n in 1..=100 {
            book.quantity.store(n, Ordering::SeqCst);
            pusher.changed(id);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        let got = pushes(&mut rx);
        assert!(!got.is_empty() && got.len() <= 2, "{got:?}");
        assert_eq!(got.last().map(|p| p.1), Some(100));
    }

    #[tokio::test(start_paused = true)]
    async fn a_change_during_a_read_is_pushed_after_it() {
        let book = FakeBook { read_takes: Duration::from_millis(20), ..Default::default() };
        let (pusher, mut rx) = pusher(&book);
        let id = InstrumentId::new();
        book.quantity.store(1, Ordering::SeqCst);
        pusher.changed(id);
        // The first read started at once and saw 1; this change lands while it runs.
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(book.reads.lock().unwrap().len(), 1);
        book.quantity.store(2, Ordering::SeqCst);
        pusher.changed(id);
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(pushes(&mut rx).into_iter().map(|p| p.1).collect::<Vec<_>>(), vec![1, 2]);
    }

    #[tokio::test(start_paused = true)]
    async fn instruments_are_pushed_independently_and_a_quiet_one_at_once() {
        let book = FakeBook::default();
        let (pusher, mut rx) = pusher(&book);
        let (a, b) = (InstrumentId::new(), InstrumentId::new());
        book.quantity.store(7, Ordering::SeqCst);
        pusher.changed(a);
        pusher.changed(b);
        // Both pushed without waiting for a window.
        tokio::time::sleep(Duration::from_millis(1)).await;
        let mut got = pushes(&mut rx);
        got.sort();
        let mut want = vec![(book_destination(a), 7), (book_destination(b), 7)];
        want.sort();
        assert_eq!(got, want);
        // After a quiet spell, a new change is pushed at once again.
        tokio::time::sleep(Duration::from_secs(1)).await;
        book.quantity.store(8, Ordering::SeqCst);
        pusher.changed(a);
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(pushes(&mut rx), vec![(book_destination(a), 8)]);
    }
}
