//! The injected clock: every time-dependent rule reads the time from here.

use chrono::{DateTime, Utc};
use std::sync::Mutex;

pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> DateTime<Utc>;
}

/// The wall clock.
#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that tests move by hand.
#[derive(Debug)]
pub struct ManualClock(Mutex<DateTime<Utc>>);

impl ManualClock {
    pub fn new(start: DateTime<Utc>) -> Self {
        Self(Mutex::new(start))
    }

    pub fn set(&self, t: DateTime<Utc>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = t;
    }

    pub fn advance(&self, d: chrono::Duration) {
        let mut g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *g += d;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A clock browser tests set through a file (`UPSTAIRS_CLOCK_FILE`), read at each reading:
/// an RFC 3339 instant stops the clock there; a whole number of seconds runs it that far
/// ahead of the wall clock; no file (or anything else) is the wall clock. The venue never
/// runs with it.
#[derive(Debug)]
pub struct FileClock(std::path::PathBuf);

impl FileClock {
    pub fn new(path: impl Into<std::path::PathBuf>) -> Self {
        Self(path.into())
    }
}

impl Clock for FileClock {
    fn now(&self) -> DateTime<Utc> {
        let text = std::fs::read_to_string(&self.0).unwrap_or_default();
        let text = text.trim();
        if let Ok(at) = DateTime::parse_from_rfc3339(text) {
            return at.with_timezone(&Utc);
        }
        Utc::now() + chrono::Duration::seconds(text.parse::<i64>().unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_stops_or_moves_the_clock() {
        let path = std::env::temp_dir().join(format!("upstairs-clock-{}", std::process::id()));
        let clock = FileClock::new(&path);
        let drift = |c: &FileClock| (c.now() - Utc::now()).num_seconds();
        assert_eq!(drift(&clock), 0, "no file: the wall clock");
        std::fs::write(&path, "300\n").unwrap();
        assert!((299..=300).contains(&drift(&clock)));
        std::fs::write(&path, "2026-11-24T10:00:00Z").unwrap();
        assert_eq!(clock.now(), "2026-11-24T10:00:00Z".parse::<DateTime<Utc>>().unwrap());
        std::fs::write(&path, "soon").unwrap();
        assert_eq!(drift(&clock), 0, "unreadable: the wall clock");
        std::fs::remove_file(&path).unwrap();
    }
}
