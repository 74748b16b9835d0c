//! Per-node limits on the injected clock (ADR 0024):
//! - sign-in: the client address first (a fixed window), then progressive delays after
//!   failures, per account and address and per account, never a lock-out;
//! - link requests: the address first, then the account (fixed windows);
//! - authenticated writes: a token bucket per user and kind of write.
//!
//! Every map is bounded: when full it forgets what has aged out, then the least recent half.

use chrono::{DateTime, Duration, Utc};
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

use upstairs_domain::UserId;

#[derive(Clone, Debug)]
pub struct Limits {
    /// Sign-in attempts per client address per window.
    pub login_per_address: u32,
    /// Failed sign-ins of one account from one address before each further try waits.
    pub free_failures_per_pair: u32,
    /// Failed sign-ins of one account from any address before each further try waits.
    pub free_failures_per_account: u32,
    /// The longest wait between tries of one account from one address.
    pub max_pair_delay: Duration,
    /// The longest wait between tries of one account from anywhere: the most an attacker
    /// naming a trader can slow the trader down.
    pub max_account_delay: Duration,
    /// Reset or activation link requests per account per window.
    pub reset_per_account: u32,
    pub reset_per_address: u32,
    pub window: Duration,
    /// Authenticated writes per user and kind: sustained per second, and burst.
    pub writes_per_second: u32,
    pub write_burst: u32,
    /// Keys kept per map at most.
    pub max_keys: usize,
}

/// Each user's writes per second per kind, and the burst before the rate applies.
pub const DEFAULT_WRITES_PER_SECOND: u32 = 20;
pub const DEFAULT_WRITE_BURST: u32 = 100;

impl Default for Limits {
    fn default() -> Self {
        Self {
            login_per_address: 100,
            free_failures_per_pair: 5,
            free_failures_per_account: 20,
            max_pair_delay: Duration::minutes(5),
            max_account_delay: Duration::seconds(30),
            reset_per_account: 5,
            reset_per_address: 30,
            window: Duration::minutes(15),
            writes_per_second: DEFAULT_WRITES_PER_SECOND,
            write_burst: DEFAULT_WRITE_BURST,
            max_keys: 100_000,
        }
    }
}

/// Kinds of authenticated write with a throttle each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Write {
    Orders,
    MatchRequests,
    Rfqs,
    Quotes,
    /// Take previews (dry runs): they write nothing, but each reads the book (ADR 0027).
    Previews,
}

/// A refusal: try again after this long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryAfter(pub Duration);

impl RetryAfter {
    /// Whole seconds, at least one (what `Retry-After` carries).
    pub fn seconds(self) -> u64 {
        u64::try_from((self.0.num_milliseconds() + 999) / 1000).unwrap_or(1).max(1)
    }
}

/// A fixed window: when it started and how many it saw.
#[derive(Clone, Copy)]
struct Window {
    start: DateTime<Utc>,
    count: u32,
}

/// Failures in a row and when the last one was.
#[derive(Clone, Copy)]
struct Failures {
    count: u32,
    last: DateTime<Utc>,
}

/// A token bucket: tokens left (in thousandths) at `at`.
#[derive(Clone, Copy)]
struct Bucket {
    milli: i64,
    at: DateTime<Utc>,
}

/// A map that forgets: at `max` keys it drops what is older than `keep`, then the
/// least recently touched half.
struct Bounded<K, V> {
    map: HashMap<K, V>,
}

impl<K: Eq + Hash + Clone, V: Copy> Bounded<K, V> {
    fn new() -> Self {
        Self { map: HashMap::new() }
    }

    fn make_room(&mut self, max: usize, now: DateTime<Utc>, keep: Duration, touched: impl Fn(&V) -> DateTime<Utc>) {
        if self.map.len() < max {
            return;
        }
        self.map.retain(|_, v| now - touched(v) < keep);
        if self.map.len() >= max {
            let mut times: Vec<DateTime<Utc>> = self.map.values().map(&touched).collect();
            times.sort_unstable();
            let median = times[times.len() / 2];
            self.map.retain(|_, v| touched(v) > median);
        }
    }
}

struct State {
    windows: Bounded<(Kind, String), Window>,
    pairs: Bounded<(String, String), Failures>,
    accounts: Bounded<String, Failures>,
    buckets: Bounded<(UserId, Write), Bucket>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    LoginAddress,
    ResetAddress,
    ResetAccount,
}

pub struct RateLimiter {
    limits: Limits,
    state: Mutex<State>,
}

impl Default for RateLimiter {
    fn default() -> Self {
        Self::new(Limits::default())
    }
}

/// The wait after `failures` failures of which `free` cost nothing: 1 s, 2 s, 4 s … up to `max`.
fn delay(failures: u32, free: u32, max: Duration) -> Duration {
    if failures < free {
        return Duration::zero();
    }
    let doublings = (failures - free).min(20);
    Duration::seconds(1i64 << doublings).min(max)
}

impl RateLimiter {
    pub fn new(limits: Limits) -> Self {
        let state =
            State { windows: Bounded::new(), pairs: Bounded::new(), accounts: Bounded::new(), buckets: Bounded::new() };
        Self { limits, state: Mutex::new(state) }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts one attempt in a fixed window; refused once over `limit`.
    fn window(&self, s: &mut State, kind: Kind, key: &str, limit: u32, now: DateTime<Utc>) -> Result<(), RetryAfter> {
        let window = self.limits.window;
        s.windows.make_room(self.limits.max_keys, now, window, |w| w.start);
        let w = s.windows.map.entry((kind, key.to_owned())).or_insert(Window { start: now, count: 0 });
        if now - w.start >= window {
            *w = Window { start: now, count: 0 };
        }
        if w.count >= limit {
            return Err(RetryAfter(w.start + window - now));
        }
        w.count += 1;
        Ok(())
    }

    /// May this address try to sign in to this account now? The address is counted first;
    /// a refused address never touches the account's counters.
    pub fn login_attempt(&self, account: &str, address: &str, now: DateTime<Utc>) -> Result<(), RetryAfter> {
        let mut s = self.state();
        self.window(&mut s, Kind::LoginAddress, address, self.limits.login_per_address, now)?;
        let l = &self.limits;
        let wait = |f: Option<&Failures>, free: u32, max: Duration| {
            f.map(|f| f.last + delay(f.count, free, max) - now).filter(|w| *w > Duration::zero())
        };
        let pair = wait(
            s.pairs.map.get(&(account.to_owned(), address.to_owned())),
            l.free_failures_per_pair,
            l.max_pair_delay,
        );
        let acct = wait(s.accounts.map.get(account), l.free_failures_per_account, l.max_account_delay);
        match pair.into_iter().chain(acct).max() {
            Some(w) => Err(RetryAfter(w)),
            None => Ok(()),
        }
    }

    /// A failed sign-in: the next tries of the account wait longer.
    pub fn login_failed(&self, account: &str, address: &str, now: DateTime<Utc>) {
        let mut s = self.state();
        let (max, keep) = (self.limits.max_keys, self.limits.window);
        s.pairs.make_room(max, now, keep, |f| f.last);
        s.accounts.make_room(max, now, keep, |f| f.last);
        let bump = |f: &mut Failures| {
            // Failures a window apart start over.
            f.count = if now - f.last >= keep { 1 } else { f.count.saturating_add(1) };
            f.last = now;
        };
        bump(s.pairs.map.entry((account.to_owned(), address.to_owned())).or_insert(Failures { count: 0, last: now }));
        bump(s.accounts.map.entry(account.to_owned()).or_insert(Failures { count: 0, last: now }));
    }

    /// A successful sign-in clears the account's failures.
    pub fn login_succeeded(&self, account: &str, address: &str) {
        let mut s = self.state();
        s.pairs.map.remove(&(account.to_owned(), address.to_owned()));
        s.accounts.map.remove(account);
    }

    /// May this address ask a link for this account now? Address first, then account.
    pub fn link_request(&self, account: &str, address: &str, now: DateTime<Utc>) -> Result<(), RetryAfter> {
        let mut s = self.state();
        self.window(&mut s, Kind::ResetAddress, address, self.limits.reset_per_address, now)?;
        self.window(&mut s, Kind::ResetAccount, account, self.limits.reset_per_account, now)
    }

    /// Takes one token of the user's bucket for this kind of write.
    pub fn write(&self, user: UserId, kind: Write, now: DateTime<Utc>) -> Result<(), RetryAfter> {
        let rate = i64::from(self.limits.writes_per_second);
        let cap = i64::from(self.limits.write_burst) * 1000;
        if rate == 0 {
            return Ok(());
        }
        let mut s = self.state();
        s.buckets.make_room(self.limits.max_keys, now, Duration::seconds(cap / 1000 / rate + 1), |b| b.at);
        let b = s.buckets.map.entry((user, kind)).or_insert(Bucket { milli: cap, at: now });
        let elapsed = (now - b.at).num_milliseconds().max(0);
        b.milli = (b.milli + elapsed.saturating_mul(rate)).min(cap);
        b.at = now;
        if b.milli < 1000 {
            return Err(RetryAfter(Duration::milliseconds((1000 - b.milli + rate - 1) / rate)));
        }
        b.milli -= 1000;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t0() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-03-02T10:00:00Z").unwrap().with_timezone(&Utc)
    }

    #[test]
    fn failures_slow_the_pair_progressively_and_never_lock_out() {
        let l = RateLimiter::new(Limits { free_failures_per_pair: 2, ..Limits::default() });
        let t = t0();
        for _ in 0..2 {
            assert!(l.login_attempt("a@x.io", "1.1.1.1", t).is_ok());
            l.login_failed("a@x.io", "1.1.1.1", t);
        }
        // The third try waits 1 s, then 2 s, 4 s …
        assert_eq!(l.login_attempt("a@x.io", "1.1.1.1", t), Err(RetryAfter(Duration::seconds(1))));
        assert!(l.login_attempt("a@x.io", "1.1.1.1", t + Duration::seconds(1)).is_ok());
        l.login_failed("a@x.io", "1.1.1.1", t + Duration::seconds(1));
        assert_eq!(l.login_attempt("a@x.io", "1.1.1.1", t + Duration::seconds(1)).map_err(RetryAfter::seconds), Err(2));
        // The same account from elsewhere is not slowed by this address's failures.
        assert!(l.login_attempt("a@x.io", "2.2.2.2", t + Duration::seconds(1)).is_ok());
        // A success clears it.
        l.login_succeeded("a@x.io", "1.1.1.1");
        assert!(l.login_attempt("a@x.io", "1.1.1.1", t + Duration::seconds(1)).is_ok());
    }

    #[test]
    fn failures_from_everywhere_slow_the_account_at_most_by_the_cap() {
        let l = RateLimiter::new(Limits { free_failures_per_account: 3, ..Limits::default() });
        let t = t0();
        for i in 0..40 {
            l.login_failed("victim@x.io", &format!("10.0.0.{i}"), t);
        }
        let wait = l.login_attempt("victim@x.io", "192.168.1.1", t).unwrap_err();
        assert_eq!(wait, RetryAfter(Duration::seconds(30)), "capped: slowed, never locked out");
        assert!(l.login_attempt("victim@x.io", "192.168.1.1", t + Duration::seconds(30)).is_ok());
        assert!(l.login_attempt("other@x.io", "192.168.1.1", t).is_ok(), "other accounts unaffected");
    }

    #[test]
    fn the_address_is_counted_before_the_account() {
        let l = RateLimiter::new(Limits { login_per_address: 3, reset_per_address: 2, ..Limits::default() });
        let t = t0();
        for i in 0..3 {
            assert!(l.login_attempt(&format!("u{i}@x.io"), "9.9.9.9", t).is_ok());
        }
        let refused = l.login_attempt("fresh@x.io", "9.9.9.9", t).unwrap_err();
        assert_eq!(refused.0, Duration::minutes(15));
        assert!(l.login_attempt("fresh@x.io", "8.8.8.8", t).is_ok());
        assert!(l.login_attempt("fresh@x.io", "9.9.9.9", t + Duration::minutes(15)).is_ok(), "a new window");

        // Links: what an address is refused does not use up the account's five requests.
        let oks = (0..5).filter(|_| l.link_request("target@x.io", "6.6.6.6", t).is_ok()).count();
        assert_eq!(oks, 2, "two per address");
        for addr in ["5.5.5.5", "5.5.5.5", "4.4.4.4"] {
            assert!(l.link_request("target@x.io", addr, t).is_ok());
        }
        assert!(l.link_request("target@x.io", "3.3.3.3", t).is_err(), "five per account per window");
    }

    #[test]
    fn writes_have_a_bucket_per_user_and_kind() {
        let l = RateLimiter::new(Limits { writes_per_second: 2, write_burst: 3, ..Limits::default() });
        let (t, u, v) = (t0(), UserId::new(), UserId::new());
        for _ in 0..3 {
            assert!(l.write(u, Write::Orders, t).is_ok());
        }
        let wait = l.write(u, Write::Orders, t).unwrap_err();
        assert_eq!(wait, RetryAfter(Duration::milliseconds(500)));
        assert_eq!(wait.seconds(), 1);
        assert!(l.write(u, Write::Quotes, t).is_ok(), "another kind");
        assert!(l.write(v, Write::Orders, t).is_ok(), "another user");
        assert!(l.write(u, Write::Orders, t + Duration::milliseconds(500)).is_ok(), "refilled");
        assert!(l.write(u, Write::Orders, t + Duration::milliseconds(500)).is_err());
    }

    #[test]
    fn maps_stay_bounded() {
        let l = RateLimiter::new(Limits { max_keys: 100, ..Limits::default() });
        let t = t0();
        for i in 0..1000 {
            let _ = l.login_attempt("a@x.io", &format!("addr-{i}"), t + Duration::milliseconds(i));
            l.login_failed(&format!("u{i}@x.io"), "1.1.1.1", t + Duration::milliseconds(i));
            let _ = l.write(UserId::new(), Write::Orders, t + Duration::milliseconds(i));
        }
        let s = l.state();
        assert!(s.windows.map.len() <= 100, "{}", s.windows.map.len());
        assert!(s.pairs.map.len() <= 100 && s.accounts.map.len() <= 100);
        assert!(s.buckets.map.len() <= 100);
    }
}
