//! The venue's trading day: Monday to Friday in `Europe/London`, child orders and
//! matching from 09:00 to 17:00, parent orders from 05:30, minus holidays. DST-correct.

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveTime, TimeZone, Timelike, Utc, Weekday};
use chrono_tz::Tz;

/// Configuration of the trading day.
#[derive(Clone, Debug, PartialEq)]
pub struct Calendar {
    pub time_zone: Tz,
    pub open: NaiveTime,
    pub close: NaiveTime,
    /// Parent orders may be created from this time (until `close`).
    pub parent_orders_from: NaiveTime,
    pub days: Vec<Weekday>,
    pub holidays: Vec<Holiday>,
    /// The demo keeps the venue open around the clock.
    pub always_open: bool,
}

/// A day the venue is closed, with the name the screens give it ('Christmas Day').
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holiday {
    pub date: NaiveDate,
    pub name: Option<String>,
}

impl Holiday {
    /// `2026-12-25` or `2026-12-25=Christmas Day`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let (date, name) = s.split_once('=').map_or((s, None), |(d, n)| (d, Some(n.trim())));
        let date = NaiveDate::parse_from_str(date.trim(), "%Y-%m-%d")
            .map_err(|_| format!("'{s}' is not a date like 2026-12-25 (or 2026-12-25=Christmas Day)"))?;
        Ok(Self { date, name: name.filter(|n| !n.is_empty()).map(str::to_owned) })
    }
}

/// The trading day's default hours (`HH:MM`, Europe/London), as the command line shows them.
pub const DEFAULT_OPEN: &str = "09:00";
pub const DEFAULT_CLOSE: &str = "17:00";

impl Default for Calendar {
    fn default() -> Self {
        let t = |h, m| NaiveTime::from_hms_opt(h, m, 0).unwrap_or_default();
        let hhmm = |s: &str| NaiveTime::parse_from_str(s, "%H:%M").unwrap_or_default();
        Self {
            time_zone: chrono_tz::Europe::London,
            open: hhmm(DEFAULT_OPEN),
            close: hhmm(DEFAULT_CLOSE),
            parent_orders_from: t(5, 30),
            days: vec![Weekday::Mon, Weekday::Tue, Weekday::Wed, Weekday::Thu, Weekday::Fri],
            holidays: vec![],
            always_open: false,
        }
    }
}

/// Whether things are allowed now, and when the next changes happen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// Child orders, editing and matching.
    pub open: bool,
    /// Creating parent orders.
    pub parent_orders_open: bool,
    pub next_open: Option<DateTime<Utc>>,
    pub next_close: Option<DateTime<Utc>>,
    /// At most 15 minutes to the close.
    pub closing_soon: bool,
    /// Today's holiday, when the venue is closed for one.
    pub holiday: Option<Holiday>,
}

/// How long before the close the warning shows.
pub const CLOSING_WARNING: Duration = Duration::minutes(15);

impl Calendar {
    fn trading_day(&self, d: NaiveDate) -> bool {
        self.days.contains(&d.weekday()) && !self.holidays.iter().any(|h| h.date == d)
    }

    /// Today's holiday (in the venue's time zone), when the venue is closed for one.
    pub fn holiday(&self, now: DateTime<Utc>) -> Option<&Holiday> {
        if self.always_open {
            return None;
        }
        let today = self.trading_date(now);
        self.holidays.iter().find(|h| h.date == today)
    }

    /// The UTC instant of a local wall-clock time on a date (the earlier one when the
    /// clock change makes it ambiguous; the next valid minute when it is skipped).
    fn at(&self, d: NaiveDate, t: NaiveTime) -> DateTime<Utc> {
        let mut local = d.and_time(t);
        for _ in 0..180 {
            if let Some(dt) = self.time_zone.from_local_datetime(&local).earliest() {
                return dt.with_timezone(&Utc);
            }
            local += Duration::minutes(1);
        }
        Utc.from_utc_datetime(&d.and_time(t))
    }

    /// Whether a session crosses midnight: it opens the evening before the day it closes
    /// on, and that day names it (CME's Globex hours: Sunday 17:00 to Monday 16:00 is
    /// Monday's session). Its days and holidays are those it closes on.
    pub fn crosses_midnight(&self) -> bool {
        self.close < self.open
    }

    /// Where a time of the session falls, in minutes from the midnight of the day it
    /// closes on: negative for a time of the evening before (after the close, in a
    /// session that crosses midnight).
    pub fn minute_of_session(&self, t: NaiveTime) -> i64 {
        let minutes = i64::from(t.num_seconds_from_midnight() / 60);
        if self.crosses_midnight() && t > self.close { minutes - 24 * 60 } else { minutes }
    }

    /// The session of trading day `d`, from the time `from` (the open, or when parent
    /// orders start) to the close.
    fn window(&self, d: NaiveDate, from: NaiveTime) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
        let starts_on = if self.minute_of_session(from) < 0 { d - Duration::days(1) } else { d };
        self.trading_day(d).then(|| (self.at(starts_on, from), self.at(d, self.close)))
    }

    fn local_date(&self, now: DateTime<Utc>) -> NaiveDate {
        now.with_timezone(&self.time_zone).date_naive()
    }

    /// The trading day `now` belongs to: today, or tomorrow once today's close has passed
    /// in a session that crosses midnight.
    fn trading_date(&self, now: DateTime<Utc>) -> NaiveDate {
        let local = now.with_timezone(&self.time_zone);
        let today = local.date_naive();
        if self.crosses_midnight() && local.time() >= self.close { today + Duration::days(1) } else { today }
    }

    fn in_window(&self, now: DateTime<Utc>, from: NaiveTime) -> bool {
        self.window(self.trading_date(now), from).is_some_and(|(a, b)| a <= now && now < b)
    }

    /// The start of the venue's day that `now` falls in: local midnight, or the last close
    /// when the sessions cross midnight.
    pub fn day_start(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        let d = self.trading_date(now);
        if self.crosses_midnight() { self.at(d - Duration::days(1), self.close) } else { self.at(d, NaiveTime::MIN) }
    }

    pub fn is_open(&self, now: DateTime<Utc>) -> bool {
        self.always_open || self.in_window(now, self.open)
    }

    pub fn parent_orders_open(&self, now: DateTime<Utc>) -> bool {
        self.always_open || self.in_window(now, self.parent_orders_from)
    }

    /// The next opening (09:00) strictly after `now`, within a month.
    pub fn next_open(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.next_boundary(now, |w| w.0)
    }

    /// The next close (17:00) after `now`, within a month.
    pub fn next_close(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.next_boundary(now, |w| w.1)
    }

    /// The last close (17:00) at or before `now`, within a month; none when the venue is
    /// always open. Orders placed up to it are over, even before its timer has run.
    pub fn previous_close(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        if self.always_open {
            return None;
        }
        let today = self.local_date(now);
        (0..32).filter_map(|i| self.window(today - Duration::days(i), self.open)).map(|w| w.1).find(|t| *t <= now)
    }

    fn next_boundary(
        &self,
        now: DateTime<Utc>,
        pick: impl Fn((DateTime<Utc>, DateTime<Utc>)) -> DateTime<Utc>,
    ) -> Option<DateTime<Utc>> {
        if self.always_open {
            return None;
        }
        let today = self.local_date(now);
        (0..32).filter_map(|i| self.window(today + Duration::days(i), self.open)).map(pick).find(|t| *t > now)
    }

    pub fn status(&self, now: DateTime<Utc>) -> Status {
        let open = self.is_open(now);
        let next_close = self.next_close(now);
        Status {
            open,
            parent_orders_open: self.parent_orders_open(now),
            next_open: self.next_open(now),
            next_close,
            closing_soon: open && next_close.is_some_and(|c| c - now <= CLOSING_WARNING),
            holiday: self.holiday(now).cloned(),
        }
    }
}

/// How a time zone is named in messages: `Europe/London` (the spec's) is UK time.
pub fn zone_label(tz: Tz) -> String {
    if tz == chrono_tz::Europe::London { "UK time".into() } else { format!("{} time", tz.name()) }
}

impl Calendar {
    /// A calendar as stored: an IANA zone, `HH:MM` times, days like `Mon,Tue` and one
    /// holiday per line (`2026-12-25=Christmas Day`).
    pub fn from_stored(
        time_zone: &str,
        open: &str,
        close: &str,
        parent_orders_from: &str,
        days: &str,
        holidays: &str,
    ) -> Result<Self, String> {
        let time = |s: &str| NaiveTime::parse_from_str(s, "%H:%M").map_err(|_| format!("time {s}"));
        Ok(Self {
            time_zone: time_zone.parse().map_err(|_| format!("time zone {time_zone}"))?,
            open: time(open)?,
            close: time(close)?,
            parent_orders_from: time(parent_orders_from)?,
            days: days
                .split(',')
                .filter(|d| !d.is_empty())
                .map(|d| d.parse::<Weekday>().map_err(|_| format!("day {d}")))
                .collect::<Result<_, _>>()?,
            holidays: holidays.lines().filter(|l| !l.is_empty()).map(Holiday::parse).collect::<Result<_, _>>()?,
            always_open: false,
        })
    }

    /// The days as stored: `Mon,Tue,Wed,Thu,Fri`.
    pub fn stored_days(&self) -> String {
        self.days.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
    }

    /// The holidays as stored, one per line.
    pub fn stored_holidays(&self) -> String {
        self.holidays
            .iter()
            .map(|h| match &h.name {
                Some(n) => format!("{}={n}", h.date),
                None => h.date.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Why `who` (`The platform`, `ICE Futures Europe`) is closed at `now`, and when it
    /// opens again: 'ICE Futures Europe is closed today for Christmas Day. It opens again
    /// on Monday 28 December at 08:00 UK time.'
    pub fn closed_message(&self, who: &str, now: DateTime<Utc>) -> String {
        let mut text = match self.holiday(now) {
            Some(h) => format!("{who} is closed today for {}.", h.name.as_deref().unwrap_or("a holiday")),
            None => format!("{who} is closed."),
        };
        if let Some(at) = self.next_open(now) {
            let local = at.with_timezone(&self.time_zone);
            let day = local.date_naive();
            let today = self.local_date(now);
            let when = if day == today {
                "today".to_owned()
            } else if Some(day) == today.succ_opt() {
                "tomorrow".to_owned()
            } else {
                format!("on {}", local.format("%A %-d %B"))
            };
            text.push_str(&format!(
                " It opens again {when} at {} {}.",
                local.format("%H:%M"),
                zone_label(self.time_zone)
            ));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn the_previous_close_is_the_last_one_passed() {
        let c = Calendar::default();
        // Wednesday 25 November 2026, winter time.
        assert_eq!(c.previous_close(utc("2026-11-25T09:30:00Z")), Some(utc("2026-11-24T17:00:00Z")));
        assert_eq!(c.previous_close(utc("2026-11-25T17:00:00Z")), Some(utc("2026-11-25T17:00:00Z")));
        // Monday morning: Friday's.
        assert_eq!(c.previous_close(utc("2026-11-30T08:00:00Z")), Some(utc("2026-11-27T17:00:00Z")));
        assert_eq!(Calendar { always_open: true, ..c }.previous_close(utc("2026-11-25T09:30:00Z")), None);
    }

    /// CME Globex's hours: each session opens at 17:00 Chicago time the evening before the
    /// day it closes on, at 16:00, and that day names it.
    fn globex() -> Calendar {
        let t = |h, m| NaiveTime::from_hms_opt(h, m, 0).unwrap();
        Calendar {
            time_zone: chrono_tz::America::Chicago,
            open: t(17, 0),
            close: t(16, 0),
            parent_orders_from: t(16, 30),
            holidays: vec![Holiday::parse("2026-02-16=Presidents' Day").unwrap()],
            ..Calendar::default()
        }
    }

    #[test]
    fn a_session_may_cross_midnight() {
        let c = globex();
        assert!(c.crosses_midnight() && !Calendar::default().crosses_midnight());
        assert_eq!((c.minute_of_session(c.open), c.minute_of_session(c.close)), (-7 * 60, 16 * 60));
        // February 2026: Chicago is on CST (UTC-6). Monday 2 February's session opens on
        // Sunday evening; Saturday's never does.
        let cases = [
            ("2026-02-01T22:29:00Z", false, false), // Sunday 16:29
            ("2026-02-01T22:30:00Z", false, true),  // Sunday 16:30: Monday's parent orders
            ("2026-02-01T23:00:00Z", true, true),   // Sunday 17:00: Monday's session opens
            ("2026-02-02T06:00:00Z", true, true),   // Monday 00:00
            ("2026-02-02T21:59:59Z", true, true),   // Monday 15:59:59
            ("2026-02-02T22:00:00Z", false, false), // Monday 16:00: closed
            ("2026-02-02T22:30:00Z", false, true),  // Tuesday's parent orders
            ("2026-02-02T23:00:00Z", true, true),   // Tuesday's session
            ("2026-02-06T22:00:00Z", false, false), // Friday 16:00
            ("2026-02-06T23:00:00Z", false, false), // Friday 17:00: no Saturday session
        ];
        for (t, open, parents) in cases {
            assert_eq!((c.is_open(utc(t)), c.parent_orders_open(utc(t))), (open, parents), "{t}");
        }
        let s = c.status(utc("2026-02-02T21:50:00Z"));
        assert!(s.open && s.closing_soon);
        assert_eq!(s.next_close, Some(utc("2026-02-02T22:00:00Z")));
        assert_eq!(s.next_open, Some(utc("2026-02-02T23:00:00Z")));
        assert_eq!(c.next_open(utc("2026-02-06T22:30:00Z")), Some(utc("2026-02-08T23:00:00Z")), "Sunday 17:00");
        assert_eq!(c.previous_close(utc("2026-02-02T16:00:00Z")), Some(utc("2026-01-30T22:00:00Z")), "Friday's");
        assert_eq!(c.previous_close(utc("2026-02-02T22:10:00Z")), Some(utc("2026-02-02T22:00:00Z")));
        // The venue's day starts at the last close.
        assert_eq!(c.day_start(utc("2026-02-02T16:00:00Z")), utc("2026-02-01T22:00:00Z"));
        assert_eq!(c.day_start(utc("2026-02-02T22:00:00Z")), utc("2026-02-02T22:00:00Z"));
        // A holiday closes the session that ends on it, from the evening before.
        let sunday = utc("2026-02-15T23:30:00Z");
        assert!(!c.is_open(sunday));
        assert_eq!(c.holiday(sunday).and_then(|h| h.name.as_deref()), Some("Presidents' Day"));
        assert_eq!(c.next_open(sunday), Some(utc("2026-02-16T23:00:00Z")), "Tuesday's, on Monday evening");
        assert!(c.is_open(utc("2026-02-16T23:00:00Z")) && c.holiday(utc("2026-02-16T23:00:00Z")).is_none());
        // Clocks go forward on Sunday 8 March: Monday 9 March's session opens at 17:00 CDT.
        assert!(!c.is_open(utc("2026-03-08T21:59:00Z")));
        assert!(c.is_open(utc("2026-03-08T22:00:00Z")));
        assert!(!c.is_open(utc("2026-03-09T21:00:00Z")), "16:00 CDT");
    }

    #[test]
    fn the_day_starts_at_london_midnight() {
        let c = Calendar::default();
        // Summer time: London midnight is 23:00 UTC the evening before.
        assert_eq!(c.day_start(utc("2026-07-01T22:59:00Z")), utc("2026-06-30T23:00:00Z"));
        assert_eq!(c.day_start(utc("2026-07-01T23:00:00Z")), utc("2026-07-01T23:00:00Z"));
        // Winter time: UTC.
        assert_eq!(c.day_start(utc("2026-11-25T12:00:00Z")), utc("2026-11-25T00:00:00Z"));
    }

    #[test]
    fn normal_winter_day() {
        let c = Calendar::default();
        // Tuesday 3 March 2026: London is on GMT (UTC+0).
        let cases = [
            ("2026-03-03T05:29:59Z", false, false),
            ("2026-03-03T05:30:00Z", false, true),
            ("2026-03-03T08:59:59Z", false, true),
            ("2026-03-03T09:00:00Z", true, true),
            ("2026-03-03T16:59:59Z", true, true),
            ("2026-03-03T17:00:00Z", false, false),
        ];
        for (t, open, parents) in cases {
            assert_eq!((c.is_open(utc(t)), c.parent_orders_open(utc(t))), (open, parents), "{t}");
        }
        let s = c.status(utc("2026-03-03T16:45:00Z"));
        assert!(s.closing_soon);
        assert_eq!(s.next_close, Some(utc("2026-03-03T17:00:00Z")));
        assert_eq!(s.next_open, Some(utc("2026-03-04T09:00:00Z")));
        assert!(!c.status(utc("2026-03-03T16:44:59Z")).closing_soon);
    }

    #[test]
    fn weekend() {
        let c = Calendar::default();
        // Saturday 7 March 2026.
        let s = c.status(utc("2026-03-07T12:00:00Z"));
        assert_eq!((s.open, s.parent_orders_open), (false, false));
        assert_eq!(s.next_open, Some(utc("2026-03-09T09:00:00Z")), "Monday");
        // Friday after the close: next open is Monday.
        assert_eq!(c.next_open(utc("2026-03-06T17:30:00Z")), Some(utc("2026-03-09T09:00:00Z")));
    }

    #[test]
    fn spring_forward_2026() {
        let c = Calendar::default();
        // Sunday 29 March 2026 clocks go forward; Monday 30 March London is UTC+1.
        assert!(c.is_open(utc("2026-03-30T08:00:00Z")), "08:00 UTC is 09:00 BST");
        assert!(!c.is_open(utc("2026-03-30T07:59:59Z")));
        assert!(c.is_open(utc("2026-03-30T15:59:59Z")));
        assert!(!c.is_open(utc("2026-03-30T16:00:00Z")), "17:00 BST");
        assert!(c.parent_orders_open(utc("2026-03-30T04:30:00Z")), "05:30 BST");
        // Friday 27 March is still GMT.
        assert!(!c.is_open(utc("2026-03-27T08:30:00Z")));
        assert!(c.is_open(utc("2026-03-27T09:00:00Z")));
    }

    #[test]
    fn fall_back_2026() {
        let c = Calendar::default();
        // Sunday 25 October 2026 clocks go back; Friday 23 October is BST, Monday 26 GMT.
        assert!(c.is_open(utc("2026-10-23T08:00:00Z")));
        assert!(!c.is_open(utc("2026-10-23T16:00:00Z")));
        assert!(!c.is_open(utc("2026-10-26T08:00:00Z")));
        assert!(c.is_open(utc("2026-10-26T09:00:00Z")));
        assert_eq!(c.next_open(utc("2026-10-23T17:00:00Z")), Some(utc("2026-10-26T09:00:00Z")));
    }

    #[test]
    fn holiday() {
        let christmas = Holiday::parse("2026-12-25=Christmas Day").unwrap();
        assert_eq!(christmas.name.as_deref(), Some("Christmas Day"));
        let boxing = Holiday::parse("2026-12-28").unwrap();
        assert_eq!((boxing.date, boxing.name.clone()), (NaiveDate::from_ymd_opt(2026, 12, 28).unwrap(), None));
        assert!(Holiday::parse("25/12/2026").is_err());
        let c = Calendar { holidays: vec![christmas.clone()], ..Calendar::default() };
        assert_eq!(c.holiday(utc("2026-12-25T10:00:00Z")), Some(&christmas));
        assert_eq!(c.holiday(utc("2026-12-24T23:59:00Z")), None, "the day before, UK time");
        assert!(!c.is_open(utc("2026-12-25T10:00:00Z")), "Christmas (a Friday)");
        assert!(!c.parent_orders_open(utc("2026-12-25T10:00:00Z")));
        assert_eq!(c.next_open(utc("2026-12-24T17:00:00Z")), Some(utc("2026-12-28T09:00:00Z")));
    }

    #[test]
    fn always_open() {
        let c = Calendar { always_open: true, ..Calendar::default() };
        let s = c.status(utc("2026-03-07T03:00:00Z"));
        assert_eq!(
            (s.open, s.parent_orders_open, s.next_open, s.next_close, s.closing_soon),
            (true, true, None, None, false)
        );
    }

    #[test]
    fn a_stored_calendar_reads_back() {
        let c = Calendar {
            time_zone: chrono_tz::Europe::Berlin,
            holidays: vec![Holiday::parse("2026-12-25=Christmas Day").unwrap(), Holiday::parse("2026-12-28").unwrap()],
            days: vec![Weekday::Mon, Weekday::Wed],
            ..Calendar::default()
        };
        assert_eq!(c.stored_days(), "Mon,Wed");
        let back =
            Calendar::from_stored("Europe/Berlin", "09:00", "17:00", "05:30", &c.stored_days(), &c.stored_holidays());
        assert_eq!(back, Ok(c));
        assert!(Calendar::from_stored("Mars/Base", "09:00", "17:00", "05:30", "Mon", "").is_err());
        assert!(Calendar::from_stored("UTC", "9h", "17:00", "05:30", "Mon", "").is_err());
        assert!(Calendar::from_stored("UTC", "09:00", "17:00", "05:30", "Someday", "").is_err());
    }

    #[test]
    fn the_closed_message_names_the_holiday_and_the_next_opening() {
        let c = Calendar { holidays: vec![Holiday::parse("2026-12-25=Christmas Day").unwrap()], ..Calendar::default() };
        assert_eq!(
            c.closed_message("ICE Futures Europe", utc("2026-12-25T10:00:00Z")),
            "ICE Futures Europe is closed today for Christmas Day. It opens again on Monday 28 December at 09:00 UK time."
        );
        // Before the open: today; after the close: tomorrow.
        assert_eq!(
            c.closed_message("The platform", utc("2026-12-23T07:00:00Z")),
            "The platform is closed. It opens again today at 09:00 UK time."
        );
        assert_eq!(
            c.closed_message("The platform", utc("2026-12-23T18:00:00Z")),
            "The platform is closed. It opens again tomorrow at 09:00 UK time."
        );
        let berlin = Calendar { time_zone: chrono_tz::Europe::Berlin, ..Calendar::default() };
        assert_eq!(
            berlin.closed_message("Eurex", utc("2026-12-26T10:00:00Z")),
            "Eurex is closed. It opens again on Monday 28 December at 09:00 Europe/Berlin time."
        );
    }
}
