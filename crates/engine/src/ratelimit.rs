//! Per-node fixed-window rate limits for login and link requests, keyed by account
//! and by client address, on the injected clock.

use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Clone, Debug)]
pub struct Limits {
    /// Login attempts per account per window.
    pub login_per_account: u32,
    /// Login attempts per client address per window.
    pub login_per_address: u32,
    /// Reset or activation link requests per account per window.
    pub reset_per_account: u32,
    pub reset_per_address: u32,
    pub window: chrono::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            login_per_account: 10,
            login_per_address: 100,
            reset_per_account: 5,
            reset_per_address: 30,
            window: chrono::Duration::minutes(15),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    Login,
    Reset,
}

/// Per (action, key): when the current window started and how many attempts it saw.
type Windows = HashMap<(Action, String), (DateTime<Utc>, u32)>;

#[derive(Default)]
pub struct RateLimiter {
    limits: Limits,
    windows: Mutex<Windows>,
}

impl RateLimiter {
    pub fn new(limits: Limits) -> Self {
        Self { limits, windows: Mutex::new(HashMap::new()) }
    }

    /// Counts one attempt for both keys; false when either is over its limit.
    pub fn allow(&self, action: Action, account: &str, address: &str, now: DateTime<Utc>) -> bool {
        let (per_account, per_address) = match action {
            Action::Login => (self.limits.login_per_account, self.limits.login_per_address),
            Action::Reset => (self.limits.reset_per_account, self.limits.reset_per_address),
        };
        let mut w = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        if w.len() > 100_000 {
            let window = self.limits.window;
            w.retain(|_, (start, _)| now - *start < window);
        }
        let mut bump = |key: String, limit: u32| {
            let entry = w.entry((action, key)).or_insert((now, 0));
            if now - entry.0 >= self.limits.window {
                *entry = (now, 0);
            }
            entry.1 += 1;
            entry.1 <= limit
        };
        let a = bump(format!("acct:{account}"), per_account);
        let b = bump(format!("addr:{address}"), per_address);
        a && b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_limit_then_window_resets() {
        let l = RateLimiter::new(Limits { login_per_account: 2, ..Limits::default() });
        let t0 = DateTime::parse_from_rfc3339("2026-03-02T10:00:00Z").unwrap().with_timezone(&Utc);
        assert!(l.allow(Action::Login, "a@x.io", "1.1.1.1", t0));
        assert!(l.allow(Action::Login, "a@x.io", "2.2.2.2", t0));
        assert!(!l.allow(Action::Login, "a@x.io", "3.3.3.3", t0));
        assert!(l.allow(Action::Login, "b@x.io", "1.1.1.1", t0), "other accounts unaffected");
        assert!(l.allow(Action::Reset, "a@x.io", "1.1.1.1", t0), "other actions unaffected");
        assert!(l.allow(Action::Login, "a@x.io", "1.1.1.1", t0 + chrono::Duration::minutes(15)));
    }

    #[test]
    fn address_limit() {
        let l = RateLimiter::new(Limits { login_per_address: 3, ..Limits::default() });
        let t0 = Utc::now();
        for i in 0..3 {
            assert!(l.allow(Action::Login, &format!("u{i}@x.io"), "9.9.9.9", t0));
        }
        assert!(!l.allow(Action::Login, "fresh@x.io", "9.9.9.9", t0));
    }
}
