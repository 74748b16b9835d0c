//! Per-user pushes of rows read back (ADR 0029): a change of one of a user's orders or
//! RFQs reaches their own destination as the row their screen lists, so the screen writes
//! it in instead of reading its list again. What the row needs that the event does not
//! carry is read back after the commit: changes are gathered per user and read at most
//! once per window, and the last frame always shows the state after the last change.
//! Frames are numbered per user and destination; a read that fails skips a number, so the
//! screen reads its lists again. `order_push` and `rfq_push` are the feeds.

use serde::Serialize;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::broadcast;
use tokio::time::Instant;
use upstairs_domain::UserId;

use super::messages::{Audience, Outgoing, Sequences};

/// One per-user destination whose frames carry rows read back.
pub trait UserFeed: Send + Sync + 'static {
    /// What one event says changed.
    type Change: Send + 'static;
    /// A user's changes gathered until the next read.
    type Queue: Default + Send + 'static;
    /// One frame's payload, numbered by the pusher.
    type Message: Serialize + Send;
    const DESTINATION: &'static str;

    fn add(queue: &mut Self::Queue, change: Self::Change);
    fn is_empty(queue: &Self::Queue) -> bool;
    /// The frames of `user`'s gathered changes, each row as it is now.
    fn read(&self, user: UserId, queue: Self::Queue)
    -> impl Future<Output = Result<Vec<Self::Message>, String>> + Send;
    fn number(message: &mut Self::Message, seq: u64);
}

/// Turns changes into frames on each user's `F::DESTINATION`.
///
/// One task per user with changes in flight: it pushes at once when the user was quiet,
/// then at most once per `window` while changes keep coming, and ends after a quiet window.
pub struct UserPusher<F: UserFeed> {
    feed: Arc<F>,
    out: broadcast::Sender<Outgoing>,
    pending: Arc<Mutex<HashMap<UserId, F::Queue>>>,
    seqs: Arc<Mutex<Sequences<UserId>>>,
    window: Duration,
}

impl<F: UserFeed> Clone for UserPusher<F> {
    fn clone(&self) -> Self {
        Self {
            feed: self.feed.clone(),
            out: self.out.clone(),
            pending: self.pending.clone(),
            seqs: self.seqs.clone(),
            window: self.window,
        }
    }
}

impl<F: UserFeed> UserPusher<F> {
    pub fn new(feed: F, out: broadcast::Sender<Outgoing>, window: Duration) -> Self {
        Self { feed: Arc::new(feed), out, pending: Arc::default(), seqs: Arc::default(), window }
    }

    /// Something of `user`'s changed: push it soon.
    pub fn changed(&self, user: UserId, change: F::Change) {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        match pending.get_mut(&user) {
            // Its task will see it before it ends.
            Some(queue) => F::add(queue, change),
            None => {
                let mut queue = F::Queue::default();
                F::add(&mut queue, change);
                pending.insert(user, queue);
                tokio::spawn(self.clone().run(user));
            }
        }
    }

    async fn run(self, user: UserId) {
        let mut next = Instant::now();
        loop {
            tokio::time::sleep_until(next).await;
            let queue = {
                let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
                let queue = pending.entry(user).or_default();
                if F::is_empty(queue) {
                    // A quiet window: end; the next change starts a new task (under this lock).
                    pending.remove(&user);
                    return;
                }
                // Taken before the read: a change from now on is pushed by a later round.
                std::mem::take(queue)
            };
            let read = self.feed.read(user, queue).await;
            let mut seqs = self.seqs.lock().unwrap_or_else(PoisonError::into_inner);
            match read {
                Ok(messages) => {
                    for mut message in messages {
                        F::number(&mut message, seqs.next(user, F::DESTINATION));
                        // No receiver means no session is connected.
                        if let Some(m) = Outgoing::message(Audience::User(user), F::DESTINATION, &message) {
                            let _ = self.out.send(m);
                        }
                    }
                }
                Err(e) => {
                    // A number skipped: the user's next frame tells the screen to read again.
                    seqs.next(user, F::DESTINATION);
                    tracing::warn!(error = %e, %user, destination = F::DESTINATION, "could not read the rows to push");
                }
            }
            drop(seqs);
            next = Instant::now() + self.window;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Changes are numbers; a read gives one frame per number gathered, recording each read.
    #[derive(Default)]
    struct FakeFeed {
        reads: Mutex<Vec<BTreeSet<u32>>>,
        fail: AtomicBool,
    }

    #[derive(Serialize)]
    struct Frame {
        seq: u64,
        n: u32,
    }

    impl UserFeed for Arc<FakeFeed> {
        type Change = u32;
        type Queue = BTreeSet<u32>;
        type Message = Frame;
        const DESTINATION: &'static str = "/user/topic/test";

        fn add(queue: &mut BTreeSet<u32>, change: u32) {
            queue.insert(change);
        }
        fn is_empty(queue: &BTreeSet<u32>) -> bool {
            queue.is_empty()
        }
        async fn read(&self, _: UserId, queue: BTreeSet<u32>) -> Result<Vec<Frame>, String> {
            if self.fail.load(Ordering::SeqCst) {
                return Err("database gone".into());
            }
            self.reads.lock().unwrap().push(queue.clone());
            Ok(queue.into_iter().map(|n| Frame { seq: 0, n }).collect())
        }
        fn number(message: &mut Frame, seq: u64) {
            message.seq = seq;
        }
    }

    fn frames(rx: &mut broadcast::Receiver<Outgoing>) -> Vec<(Audience, u64, u64)> {
        let mut out = Vec::new();
        while let Ok(m) = rx.try_recv() {
            let Outgoing::Message { audience, destination, body } = m else { panic!("not a message") };
            assert_eq!(&*destination, "/user/topic/test");
            let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
            out.push((audience, v["seq"].as_u64().unwrap(), v["n"].as_u64().unwrap()));
        }
        out
    }

    /// Lets the spawned tasks run until they wait on the (paused) clock.
    async fn settle() {
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_is_read_once_per_window_and_numbered_per_user() {
        let (tx, mut rx) = broadcast::channel(64);
        let feed = Arc::new(FakeFeed::default());
        let pusher = UserPusher::new(feed.clone(), tx, Duration::from_millis(50));
        let (user, other) = (UserId::new(), UserId::new());

        // The first change of a quiet user goes out at once.
        pusher.changed(user, 1);
        settle().await;
        assert_eq!(frames(&mut rx), vec![(Audience::User(user), 1, 1)]);

        // A burst within the window: read once, after it; another user's first at once.
        for n in [2, 3, 2] {
            pusher.changed(user, n);
        }
        pusher.changed(other, 7);
        settle().await;
        assert_eq!(frames(&mut rx), vec![(Audience::User(other), 1, 7)]);
        tokio::time::advance(Duration::from_millis(50)).await;
        settle().await;
        assert_eq!(frames(&mut rx), vec![(Audience::User(user), 2, 2), (Audience::User(user), 3, 3)]);
        let reads = feed.reads.lock().unwrap().clone();
        assert_eq!(reads, vec![BTreeSet::from([1]), BTreeSet::from([7]), BTreeSet::from([2, 3])]);

        // A quiet window ends the user's task; the next change goes out at once again.
        tokio::time::advance(Duration::from_millis(50)).await;
        settle().await;
        assert!(!pusher.pending.lock().unwrap().contains_key(&user));
        pusher.changed(user, 4);
        settle().await;
        assert_eq!(frames(&mut rx), vec![(Audience::User(user), 4, 4)]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_read_skips_a_number() {
        let (tx, mut rx) = broadcast::channel(64);
        let feed = Arc::new(FakeFeed::default());
        let pusher = UserPusher::new(feed.clone(), tx, Duration::from_millis(50));
        let user = UserId::new();
        feed.fail.store(true, Ordering::SeqCst);
        pusher.changed(user, 1);
        settle().await;
        assert!(frames(&mut rx).is_empty());
        feed.fail.store(false, Ordering::SeqCst);
        pusher.changed(user, 2);
        tokio::time::advance(Duration::from_millis(50)).await;
        settle().await;
        // Number 1 was never sent: the screen sees 2 and reads its lists again.
        assert_eq!(frames(&mut rx), vec![(Audience::User(user), 2, 2)]);
    }
}
