//! Book pushes conflated per instrument (ADR 0011): a write only says "the book of this
//! instrument changed"; here the book is read back and pushed at most once per window
//! per instrument, and the last push always shows the state after the last change.
//! Each push is numbered per instrument, and each company whose own share changed is told
//! its new share on its users' own destination (ADR 0029). A change that leaves the
//! anonymous book as it was (a take into an iceberg's hidden part, a firm's own shares
//! moving) pushes no book frame: a frame nobody can explain by the book would tell
//! every watcher that something unseen happened at that instrument.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::broadcast;
use tokio::time::Instant;
use upstairs_domain::{CompanyId, InstrumentId};
use upstairs_engine::{Engine, Store};

use super::messages::{
    Audience, BOOK_SHARES, BookMessage, BookShareLevel, BookShareMessage, Outgoing, Sequences, book_destination,
};

/// Shortest time between two pushes of one instrument's book.
pub const WINDOW: Duration = Duration::from_millis(50);

/// Each company's share of one book, per price, best first.
pub type Shares = HashMap<CompanyId, Vec<BookShareLevel>>;

/// Reads the shared (anonymous) book of an instrument, and each company's share of it.
pub trait BookSource: Send + Sync + 'static {
    fn read(&self, instrument_id: InstrumentId) -> impl Future<Output = Result<(BookMessage, Shares), String>> + Send;
}

impl<S: Store> BookSource for Engine<S> {
    async fn read(&self, instrument_id: InstrumentId) -> Result<(BookMessage, Shares), String> {
        let b = self.orders.anonymous_book(instrument_id).await.map_err(|e| e.to_string())?;
        let shares = b
            .snapshot
            .shares()
            .into_iter()
            .map(|(company, levels)| {
                let levels = levels
                    .into_iter()
                    .map(|(price, buy, sell)| BookShareLevel {
                        price: price.normalize(),
                        own_buy_quantity: buy,
                        own_sell_quantity: sell,
                    })
                    .collect();
                (company, levels)
            })
            .collect();
        Ok((BookMessage::from(&b), shares))
    }
}

/// Instruments with a pusher task, each with whether a change came since its last read.
type Pending = Arc<Mutex<HashMap<InstrumentId, bool>>>;

/// What was pushed of each instrument: its last frame (numbered) and the shares it showed.
#[derive(Default)]
struct Pushed {
    books: HashMap<InstrumentId, (Option<BookMessage>, Shares)>,
    /// Numbers of each company's share frames (one sequence across instruments).
    shares: Sequences<CompanyId>,
}

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
    pushed: Arc<Mutex<Pushed>>,
    window: Duration,
    /// Books read back to push them: one per window per instrument with changes, however
    /// many sessions watch it.
    reads: Arc<AtomicU64>,
}

impl<B> Clone for BookPusher<B> {
    fn clone(&self) -> Self {
        Self {
            source: self.source.clone(),
            out: self.out.clone(),
            pending: self.pending.clone(),
            pushed: self.pushed.clone(),
            window: self.window,
            reads: self.reads.clone(),
        }
    }
}

impl<B: BookSource> BookPusher<B> {
    pub fn new(source: B, out: broadcast::Sender<Outgoing>, window: Duration) -> Self {
        Self {
            source: Arc::new(source),
            out,
            pending: Arc::default(),
            pushed: Arc::default(),
            window,
            reads: Arc::default(),
        }
    }

    /// The count of books read back to push them since the node started.
    pub fn reads(&self) -> Arc<AtomicU64> {
        self.reads.clone()
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
            self.reads.fetch_add(1, Ordering::Relaxed);
            match self.source.read(instrument_id).await {
                Ok((book, shares)) => self.push(instrument_id, &destination, book, shares),
                Err(e) => tracing::warn!(error = %e, %instrument_id, "could not read the book to push"),
            }
            next = Instant::now() + self.window;
        }
    }

    /// Sends the book numbered when it differs from the last one sent, then the share of
    /// each company whose share changed since the last push: under one lock, so the
    /// numbers reach the channel in their order.
    fn push(&self, instrument_id: InstrumentId, destination: &str, mut book: BookMessage, shares: Shares) {
        let mut pushed = self.pushed.lock().unwrap_or_else(PoisonError::into_inner);
        let Pushed { books, shares: share_seqs } = &mut *pushed;
        let (last, before) = books.entry(instrument_id).or_default();
        let seq = last.as_ref().map_or(0, |l| l.seq);
        book.seq = seq;
        if last.as_ref() != Some(&book) {
            book.seq = seq + 1;
            // No receiver means no session is connected.
            if let Some(m) = Outgoing::message(Audience::Subscribers, destination, &book) {
                let _ = self.out.send(m);
            }
            *last = Some(book);
        }
        let gone = before.keys().filter(|c| !shares.contains_key(c)).copied().collect::<Vec<_>>();
        let changed = shares.iter().filter(|(c, levels)| before.get(c) != Some(levels)).map(|(c, l)| (*c, l.clone()));
        for (company, levels) in changed.chain(gone.into_iter().map(|c| (c, Vec::new()))).collect::<Vec<_>>() {
            let message =
                BookShareMessage { seq: share_seqs.next(company, BOOK_SHARES), instrument_id: instrument_id.0, levels };
            if let Some(m) = Outgoing::message(Audience::Company(company), BOOK_SHARES, &message) {
                let _ = self.out.send(m);
            }
        }
        *before = shares;
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
        /// The company whose order the level is, if any.
        owner: Arc<Mutex<Option<CompanyId>>>,
        /// Added to the band's top (a band move).
        band: Arc<AtomicI64>,
    }

    impl BookSource for FakeBook {
        async fn read(&self, instrument_id: InstrumentId) -> Result<(BookMessage, Shares), String> {
            self.reads.lock().unwrap().push(Instant::now());
            let quantity = self.quantity.load(Ordering::SeqCst);
            let owner = *self.owner.lock().unwrap();
            tokio::time::sleep(self.read_takes).await;
            let book = BookMessage {
                seq: 0,
                instrument_id: instrument_id.0,
                tick_size: Decimal::ONE,
                min_tick_price: Decimal::ONE,
                max_tick_price: Decimal::TEN + Decimal::from(self.band.load(Ordering::SeqCst)),
                best_buy_price: Some(Decimal::TWO),
                best_sell_price: None,
                prices_stale: false,
                levels: vec![super::super::messages::BookMessageLevel {
                    price: Decimal::TWO,
                    buy_quantity: quantity,
                    sell_quantity: 0,
                }],
            };
            let share =
                |c| (c, vec![BookShareLevel { price: Decimal::TWO, own_buy_quantity: quantity, own_sell_quantity: 0 }]);
            Ok((book, owner.into_iter().map(share).collect()))
        }
    }

    /// Everything sent so far: (audience, destination, body).
    fn sent(rx: &mut broadcast::Receiver<Outgoing>) -> Vec<(Audience, String, serde_json::Value)> {
        std::iter::from_fn(|| rx.try_recv().ok())
            .map(|o| match o {
                Outgoing::Message { destination, body, audience } => {
                    (audience, destination.to_string(), serde_json::from_slice(&body).unwrap())
                }
                other => panic!("unexpected {other:?}"),
            })
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn pushes_are_numbered_per_instrument_and_shares_go_to_their_company_when_they_change() {
        let book = FakeBook::default();
        let (pusher, mut rx) = pusher(&book);
        let (a, b) = (InstrumentId::new(), InstrumentId::new());
        let (mine, theirs) = (CompanyId::new(), CompanyId::new());
        let step = |q: i64, owner: Option<CompanyId>, id: InstrumentId| {
            book.quantity.store(q, Ordering::SeqCst);
            *book.owner.lock().unwrap() = owner;
            pusher.changed(id);
        };
        step(5, Some(mine), a);
        tokio::time::sleep(Duration::from_secs(1)).await;
        let share = |seq: u64, id: InstrumentId, q: Option<i64>| {
            let levels = q.map_or(
                serde_json::json!([]),
                |q| serde_json::json!([{"price": 2, "own_buy_quantity": q, "own_sell_quantity": 0}]),
            );
            serde_json::json!({"seq": seq, "instrument_id": id, "levels": levels})
        };
        let got = sent(&mut rx);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!((got[0].0, got[0].2["seq"].clone()), (Audience::Subscribers, serde_json::json!(1)));
        assert!(
            got[0].2.get("own_buy_quantity").is_none() && !got[0].2.to_string().contains("own"),
            "anonymous: {got:?}"
        );
        assert_eq!(
            (got[1].0, got[1].1.as_str(), got[1].2.clone()),
            (Audience::Company(mine), BOOK_SHARES, share(1, a, Some(5)))
        );

        // The same share again (a band move): a book frame only.
        book.band.store(1, Ordering::SeqCst);
        step(5, Some(mine), a);
        tokio::time::sleep(Duration::from_secs(1)).await;
        let got = sent(&mut rx);
        assert_eq!(
            got.iter().map(|g| (g.0, g.2["seq"].as_u64().unwrap())).collect::<Vec<_>>(),
            vec![(Audience::Subscribers, 2)]
        );
        book.band.store(0, Ordering::SeqCst);

        // Another instrument counts from 1; the company's shares count on across instruments.
        step(7, Some(mine), b);
        tokio::time::sleep(Duration::from_secs(1)).await;
        let got = sent(&mut rx);
        assert_eq!(got[0].2["seq"], 1);
        assert_eq!(got[1].2, share(2, b, Some(7)));

        // The level passes to another company at the same size: the first hears its share
        // is gone, the second of its own; the anonymous book did not change, so no book frame.
        step(7, Some(theirs), b);
        tokio::time::sleep(Duration::from_secs(1)).await;
        let got = sent(&mut rx);
        assert_eq!(got.len(), 2, "{got:?}");
        let mut shares: Vec<_> = got.iter().map(|g| (g.0, g.2.clone())).collect();
        shares.sort_by_key(|s| s.0 != Audience::Company(theirs));
        assert_eq!(
            shares,
            vec![(Audience::Company(theirs), share(1, b, Some(7))), (Audience::Company(mine), share(3, b, None))]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_change_the_anonymous_book_does_not_show_pushes_no_book_frame() {
        let book = FakeBook::default();
        let (pusher, mut rx) = pusher(&book);
        let id = InstrumentId::new();
        let (mine, theirs) = (CompanyId::new(), CompanyId::new());
        book.quantity.store(5, Ordering::SeqCst);
        *book.owner.lock().unwrap() = Some(mine);
        pusher.changed(id);
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(sent(&mut rx).len(), 2, "the first book and its owner's share");

        // Something changed that leaves the anonymous book as it was (an iceberg's hidden
        // part traded): nothing goes out, to anyone.
        pusher.changed(id);
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(sent(&mut rx), vec![]);

        // The level passes to another firm at the same size: the firms hear of their
        // shares, every watcher sees no book frame, and the next real change follows on.
        *book.owner.lock().unwrap() = Some(theirs);
        pusher.changed(id);
        tokio::time::sleep(Duration::from_secs(1)).await;
        let got = sent(&mut rx);
        assert!(got.iter().all(|g| g.0 != Audience::Subscribers), "{got:?}");
        assert_eq!(got.len(), 2, "{got:?}");
        book.quantity.store(6, Ordering::SeqCst);
        pusher.changed(id);
        tokio::time::sleep(Duration::from_secs(1)).await;
        let got = sent(&mut rx);
        assert_eq!((got[0].0, got[0].2["seq"].clone()), (Audience::Subscribers, serde_json::json!(2)));
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
        assert_eq!(pusher.reads().load(Ordering::Relaxed), reads.len() as u64, "the count the metrics show");
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
