//! Which calendar an instrument trades on (ADR 0052): the exchange's whose MIC it names
//! in `exchange_iso_code`, or the venue's own (the command line's hours and holidays).

use chrono::{DateTime, Utc};
use std::sync::Arc;
use upstairs_domain::calendar::{Calendar, zone_label};

use crate::core::Core;
use crate::error::{EngineError, StoreError};
use crate::model::{Exchange, Instrument};
use crate::ports::*;

/// The calendar an instrument follows, and whose it is.
#[derive(Clone, Debug, PartialEq)]
pub struct TradingCalendar {
    /// The exchange's MIC and name; none for the venue's own calendar.
    pub exchange: Option<(String, String)>,
    pub calendar: Calendar,
}

impl TradingCalendar {
    fn who(&self) -> &str {
        self.exchange.as_ref().map_or("The platform", |(_, name)| name.as_str())
    }

    /// The refusal of a trading call while closed: why, and when it opens again.
    pub fn closed(&self, now: DateTime<Utc>) -> EngineError {
        EngineError::Conflict { detail: self.calendar.closed_message(self.who(), now), errors: vec![] }
    }

    /// Child orders, edits, takes, answers, RFQs and quotes: only while open.
    pub fn require_open(&self, now: DateTime<Utc>) -> Result<(), EngineError> {
        if self.calendar.is_open(now) { Ok(()) } else { Err(self.closed(now)) }
    }

    /// Creating a parent order: from the parent-order opening to the close; on a holiday
    /// the refusal names it.
    pub fn require_parent_orders_open(&self, now: DateTime<Utc>) -> Result<(), EngineError> {
        if self.calendar.parent_orders_open(now) {
            return Ok(());
        }
        if self.calendar.holiday(now).is_some() {
            return Err(self.closed(now));
        }
        let c = &self.calendar;
        let on = self.exchange.as_ref().map(|(_, name)| format!(" on {name}")).unwrap_or_default();
        let evening = if c.minute_of_session(c.parent_orders_from) < 0 { " the day before" } else { "" };
        let detail = format!(
            "Parent orders{on} can be created on trading days from {}{evening} to {} {}.",
            c.parent_orders_from.format("%H:%M"),
            c.close.format("%H:%M"),
            zone_label(c.time_zone)
        );
        Err(EngineError::Conflict { detail, errors: vec![] })
    }
}

/// The exchange with `mic` among `exchanges` (none for a blank MIC).
fn exchange_of<'a>(exchanges: &'a [Exchange], mic: &str) -> Option<&'a Exchange> {
    exchanges.iter().find(|e| !mic.is_empty() && e.mic == mic)
}

/// An exchange's calendar as the venue runs it: always open when the venue is (the demo).
pub fn exchange_calendar(e: &Exchange, venue: &Calendar) -> Calendar {
    Calendar { always_open: venue.always_open, ..e.calendar.clone() }
}

/// The calendar of the exchange with `mic` among `exchanges`, or the venue's.
pub fn calendar_for(exchanges: &[Exchange], venue: &Calendar, mic: &str) -> TradingCalendar {
    match exchange_of(exchanges, mic) {
        Some(e) => {
            TradingCalendar { exchange: Some((e.mic.clone(), e.name.clone())), calendar: exchange_calendar(e, venue) }
        }
        None => TradingCalendar { exchange: None, calendar: venue.clone() },
    }
}

/// Whether `instrument` closes with the calendar of `mic` (none: the venue's own).
pub fn closes_with(exchanges: &[Exchange], instrument: &Instrument, mic: Option<&str>) -> bool {
    exchange_of(exchanges, &instrument.exchange_iso_code).map(|e| e.mic.as_str()) == mic
}

/// Every exchange's calendar, as cached (dropped by `ExchangesChanged` on every node).
pub async fn exchange_calendars<S: Store>(core: &Core<S>) -> Result<Arc<Vec<Exchange>>, EngineError> {
    let load = || async {
        let list = core.store.single().await?.exchanges().await?;
        Ok::<_, StoreError>(Some(list.into_iter().map(|(e, _)| e).collect()))
    };
    Ok(core.caches.exchanges.get((), load).await?.unwrap_or_default())
}

/// The calendar an instrument trades on.
pub(crate) async fn calendar_of<S: Store>(
    core: &Core<S>,
    instrument: &Instrument,
) -> Result<TradingCalendar, EngineError> {
    Ok(calendar_for(&exchange_calendars(core).await?, &core.config.calendar, &instrument.exchange_iso_code))
}
