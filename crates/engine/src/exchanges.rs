//! Exchange calendars (ADR 0052): each exchange's hours, time zone, trading days and
//! holidays, kept by the venue admin and in force at once on every node. The checks
//! themselves read them through the core (`calendars`).

use chrono::{NaiveTime, Weekday};
use serde_json::json;
use upstairs_domain::calendar::{Calendar, Holiday, Status};
use upstairs_domain::{FieldError, Permission};

use crate::Store;
use crate::context::{Actor, audit, require};
use crate::core::service;
use crate::error::EngineError;
use crate::events::Event;
use crate::model::*;
use crate::orders::{Orders, close_key};
use crate::ports::*;

/// Holidays one exchange may list.
pub const MAX_HOLIDAYS: usize = 500;
/// Characters of an exchange's or a holiday's name.
const MAX_NAME: usize = 100;

/// An exchange's calendar as the admin screen sends it.
#[derive(Clone, Debug)]
pub struct ExchangeInput {
    pub name: String,
    pub time_zone: String,
    /// `HH:MM`, local.
    pub open_time: String,
    pub close_time: String,
    pub parent_orders_from: String,
    pub days: Vec<Weekday>,
    pub holidays: Vec<Holiday>,
}

/// An exchange with its number of instruments and whether it is open now.
#[derive(Clone, Debug)]
pub struct ExchangeView {
    pub exchange: Exchange,
    pub instruments: i64,
    pub status: Status,
}

service!(
    /// Exchange calendars.
    Exchanges { orders: Orders }
);

impl<S: Store> Exchanges<S> {
    /// Every exchange, by MIC (venue admins).
    pub async fn list(&self, actor: &Actor) -> Result<Vec<ExchangeView>, EngineError> {
        require(actor, Permission::Admin)?;
        let list = self.store.single().await?.exchanges().await?;
        Ok(list.into_iter().map(|(exchange, instruments)| self.view(exchange, instruments)).collect())
    }

    /// Every exchange's status now, for the platform status (anyone signed in).
    pub async fn statuses(&self) -> Result<Vec<(Exchange, Status)>, EngineError> {
        let list = crate::calendars::exchange_calendars(self).await?;
        Ok(list.iter().map(|e| (e.clone(), self.status(e))).collect())
    }

    /// Creates the exchange of `mic` or replaces its calendar; whether it was created.
    /// Its next close follows the new hours at once.
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id, mic))]
    pub async fn save(
        &self,
        actor: &Actor,
        mic: &str,
        input: ExchangeInput,
    ) -> Result<(ExchangeView, bool), EngineError> {
        require(actor, Permission::Admin)?;
        let (name, calendar) = checked(mic, input)?;
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let before = tx.exchange(mic).await?;
        let exchange = Exchange {
            mic: mic.to_owned(),
            name,
            calendar,
            created_at: before.as_ref().map_or(now, |b| b.created_at),
            updated_at: now,
        };
        tx.save_exchange(&exchange).await?;
        tx.delete_timers_of(&close_key(Some(mic))).await?;
        let exchanges = self.orders.schedule_close(&mut tx, now).await?;
        let action = if before.is_some() { "update" } else { "create" };
        let body = json!({"mic": mic, "before": before.as_ref().map(stored), "after": stored(&exchange)});
        audit(&mut tx, now, Some(actor.user.user_id), "exchange", None, action, body).await?;
        let instruments = exchanges.into_iter().find(|(e, _)| e.mic == mic).map_or(0, |(_, n)| n);
        tx.commit().await?;
        self.publish(Event::ExchangesChanged);
        self.poke();
        Ok((self.view(exchange, instruments), before.is_none()))
    }

    /// Removes an exchange: its instruments follow the venue's own calendar again.
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id, mic))]
    pub async fn delete(&self, actor: &Actor, mic: &str) -> Result<(), EngineError> {
        require(actor, Permission::Admin)?;
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let before = tx.exchange(mic).await?.ok_or_else(|| EngineError::NotFound("Exchange not found.".into()))?;
        tx.delete_exchange(mic).await?;
        tx.delete_timers_of(&close_key(Some(mic))).await?;
        let body = json!({"mic": mic, "before": stored(&before)});
        audit(&mut tx, now, Some(actor.user.user_id), "exchange", None, "delete", body).await?;
        tx.commit().await?;
        self.publish(Event::ExchangesChanged);
        Ok(())
    }

    /// An exchange's calendar as it is now, the venue's always-open demo included.
    fn status(&self, exchange: &Exchange) -> Status {
        crate::calendars::exchange_calendar(exchange, &self.config.calendar).status(self.clock.now())
    }

    fn view(&self, exchange: Exchange, instruments: i64) -> ExchangeView {
        let status = self.status(&exchange);
        ExchangeView { exchange, instruments, status }
    }
}

/// An exchange as the action log keeps it.
fn stored(e: &Exchange) -> serde_json::Value {
    let c = &e.calendar;
    json!({"name": e.name, "time_zone": c.time_zone.name(), "open_time": c.open.format("%H:%M").to_string(),
           "close_time": c.close.format("%H:%M").to_string(),
           "parent_orders_from": c.parent_orders_from.format("%H:%M").to_string(),
           "days": c.stored_days(), "holidays": c.stored_holidays()})
}

/// The name and calendar the input gives, or every field's reason.
fn checked(mic: &str, input: ExchangeInput) -> Result<(String, Calendar), EngineError> {
    let mut errors = Vec::new();
    if mic.len() != 4 || !mic.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()) {
        errors.push(FieldError::new("mic", "A MIC is 4 capital letters or digits"));
    }
    let name = input.name.trim().to_owned();
    if name.is_empty() {
        errors.push(FieldError::new("name", "Name is required"));
    } else if name.chars().count() > MAX_NAME || name.contains(['\n', '\r']) {
        errors.push(FieldError::new("name", format!("A name is one line of at most {MAX_NAME} characters")));
    }
    let time_zone = input.time_zone.trim().parse::<chrono_tz::Tz>();
    if time_zone.is_err() {
        errors.push(FieldError::new("time_zone", format!("Unknown time zone: {}", input.time_zone.trim())));
    }
    let mut time = |field: &'static str, s: &str| {
        let t = NaiveTime::parse_from_str(s.trim(), "%H:%M").ok();
        if t.is_none() {
            errors.push(FieldError::new(field, "Use a time like 09:00"));
        }
        t
    };
    let open = time("open_time", &input.open_time);
    let close = time("close_time", &input.close_time);
    let parent_orders_from = time("parent_orders_from", &input.parent_orders_from);
    // A close before the open ends the session the next day (it crosses midnight).
    if let (Some(open), Some(close)) = (open, close)
        && close == open
    {
        errors.push(FieldError::new("close_time", "The close must differ from the open"));
    }
    if let (Some(open), Some(close), Some(from)) = (open, close, parent_orders_from) {
        let session = Calendar { open, close, ..Calendar::default() };
        // In session order: after the last close (the evening before, when the session
        // crosses midnight) and at the open at the latest.
        if session.minute_of_session(from) > session.minute_of_session(open) {
            errors.push(FieldError::new("parent_orders_from", "Parent orders cannot open after the open"));
        }
    }
    let mut days = input.days;
    days.sort_by_key(|d| d.num_days_from_monday());
    days.dedup();
    if days.is_empty() {
        errors.push(FieldError::new("days", "Pick at least one trading day"));
    }
    let mut holidays = input.holidays;
    holidays.sort_by_key(|h| h.date);
    if holidays.len() > MAX_HOLIDAYS {
        errors.push(FieldError::new("holidays", format!("At most {MAX_HOLIDAYS} holidays")));
    }
    if let Some(twice) = holidays.windows(2).find(|w| w[0].date == w[1].date) {
        errors.push(FieldError::new("holidays", format!("{} is listed twice", twice[0].date)));
    }
    for h in &mut holidays {
        h.name = h.name.as_deref().map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned);
        if h.name.as_deref().is_some_and(|n| n.chars().count() > MAX_NAME || n.contains(['\n', '\r'])) {
            errors.push(FieldError::new(
                "holidays",
                format!("A holiday's name is one line of at most {MAX_NAME} characters"),
            ));
            break;
        }
    }
    match (time_zone, open, close, parent_orders_from) {
        (Ok(time_zone), Some(open), Some(close), Some(parent_orders_from)) if errors.is_empty() => {
            Ok((name, Calendar { time_zone, open, close, parent_orders_from, days, holidays, always_open: false }))
        }
        _ => Err(EngineError::invalid_many(errors)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> ExchangeInput {
        ExchangeInput {
            name: "ICE Futures Europe".into(),
            time_zone: "Europe/London".into(),
            open_time: "08:00".into(),
            close_time: "18:00".into(),
            parent_orders_from: "05:30".into(),
            days: vec![Weekday::Fri, Weekday::Mon, Weekday::Mon],
            holidays: vec![Holiday::parse("2026-12-28=Boxing Day (substitute)").unwrap()],
        }
    }

    fn reasons(mic: &str, i: ExchangeInput) -> Vec<(String, String)> {
        match checked(mic, i) {
            Err(EngineError::Invalid { errors, .. }) => errors.into_iter().map(|e| (e.field, e.message)).collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_calendar_is_checked_field_by_field() {
        let (name, c) = checked("IFEU", input()).unwrap();
        assert_eq!(name, "ICE Futures Europe");
        assert_eq!(c.days, vec![Weekday::Mon, Weekday::Fri], "sorted, once each");
        let bad = ExchangeInput {
            name: " ".into(),
            time_zone: "Mars/Base".into(),
            open_time: "18:00".into(),
            close_time: "18:00".into(),
            parent_orders_from: "19:00".into(),
            days: vec![],
            holidays: vec![Holiday::parse("2026-12-25").unwrap(), Holiday::parse("2026-12-25=Christmas").unwrap()],
        };
        let got = reasons("ifeu", bad);
        let fields: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            fields,
            ["mic", "name", "time_zone", "close_time", "parent_orders_from", "days", "holidays"],
            "{got:?}"
        );
        assert!(got.contains(&("time_zone".into(), "Unknown time zone: Mars/Base".into())));
        assert!(got.contains(&("holidays".into(), "2026-12-25 is listed twice".into())));
        assert!(got.contains(&("close_time".into(), "The close must differ from the open".into())));
        assert_eq!(
            reasons("IFEU", ExchangeInput { open_time: "9am".into(), ..input() }),
            [("open_time".to_owned(), "Use a time like 09:00".to_owned())]
        );
    }

    #[test]
    fn a_session_may_cross_midnight() {
        let globex = |from: &str| ExchangeInput {
            time_zone: "America/Chicago".into(),
            open_time: "17:00".into(),
            close_time: "16:00".into(),
            parent_orders_from: from.into(),
            ..input()
        };
        for from in ["16:01", "16:30", "17:00"] {
            let (_, c) = checked("XCME", globex(from)).unwrap();
            assert!(c.crosses_midnight(), "{from}");
        }
        // After the open, or before the last close: the day before's session.
        for from in ["17:01", "23:00", "05:30", "16:00"] {
            assert_eq!(
                reasons("XCME", globex(from)),
                [("parent_orders_from".to_owned(), "Parent orders cannot open after the open".to_owned())],
                "{from}"
            );
        }
        // A day session: parent orders from any time up to its open.
        assert!(checked("IFEU", ExchangeInput { parent_orders_from: "00:00".into(), ..input() }).is_ok());
        assert!(checked("IFEU", ExchangeInput { parent_orders_from: "08:00".into(), ..input() }).is_ok());
    }
}
