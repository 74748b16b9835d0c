//! Exchange calendars (ADR 0052): the admin screen's calls, and each exchange's status as
//! the platform status carries it.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc, Weekday};
use serde::{Deserialize, Serialize};
use upstairs_domain::calendar::{Holiday, Status};
use upstairs_engine::Store;
use upstairs_engine::exchanges::{self as calendars, ExchangeView, MAX_HOLIDAYS};
use upstairs_engine::model::Exchange;
use utoipa::ToSchema;

use crate::AppState;
use crate::error::ApiResult;
use crate::error::responses::{BadRequest, Forbidden, NotFound};
use crate::extract::{ApiJson, ApiPath, Auth};
use crate::openapi::ApiRouter;
use crate::routes::orders::HolidayDto;

pub fn router<S: Store>() -> ApiRouter<S> {
    ApiRouter::new()
        .route::<__path_exchanges, _, _>(exchanges::<S>)
        .route::<__path_save_exchange, _, _>(save_exchange::<S>)
        .route::<__path_delete_exchange, _, _>(delete_exchange::<S>)
}

/// A trading day of the week.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, ToSchema)]
pub enum ExchangeDay {
    Mon,
    Tue,
    Wed,
    Thu,
    Fri,
    Sat,
    Sun,
}

impl From<Weekday> for ExchangeDay {
    fn from(d: Weekday) -> Self {
        match d {
            Weekday::Mon => Self::Mon,
            Weekday::Tue => Self::Tue,
            Weekday::Wed => Self::Wed,
            Weekday::Thu => Self::Thu,
            Weekday::Fri => Self::Fri,
            Weekday::Sat => Self::Sat,
            Weekday::Sun => Self::Sun,
        }
    }
}

impl From<ExchangeDay> for Weekday {
    fn from(d: ExchangeDay) -> Self {
        match d {
            ExchangeDay::Mon => Self::Mon,
            ExchangeDay::Tue => Self::Tue,
            ExchangeDay::Wed => Self::Wed,
            ExchangeDay::Thu => Self::Thu,
            ExchangeDay::Fri => Self::Fri,
            ExchangeDay::Sat => Self::Sat,
            ExchangeDay::Sun => Self::Sun,
        }
    }
}

/// An exchange's hours and whether it trades now.
#[derive(Debug, Serialize, ToSchema)]
pub struct ExchangeStatusDto {
    /// ISO 10383 MIC: the instruments whose `exchange_iso_code` it is follow this calendar.
    pub mic: String,
    pub name: String,
    /// IANA time zone of the hours.
    pub time_zone: String,
    /// Local times, `HH:MM`.
    pub open_time: String,
    pub close_time: String,
    pub parent_orders_from: String,
    pub days: Vec<ExchangeDay>,
    /// Child orders, editing and matching.
    pub open: bool,
    pub parent_orders_open: bool,
    /// At most 15 minutes to the close.
    pub closing_soon: bool,
    #[schema(required = true)]
    pub next_open: Option<DateTime<Utc>>,
    #[schema(required = true)]
    pub next_close: Option<DateTime<Utc>>,
    /// Today's holiday (the exchange's time zone); null on any other day.
    #[schema(required = true)]
    pub holiday: Option<HolidayDto>,
}

impl ExchangeStatusDto {
    pub fn new(e: &Exchange, s: Status) -> Self {
        let c = &e.calendar;
        Self {
            mic: e.mic.clone(),
            name: e.name.clone(),
            time_zone: c.time_zone.name().into(),
            open_time: c.open.format("%H:%M").to_string(),
            close_time: c.close.format("%H:%M").to_string(),
            parent_orders_from: c.parent_orders_from.format("%H:%M").to_string(),
            days: c.days.iter().map(|d| (*d).into()).collect(),
            open: s.open,
            parent_orders_open: s.parent_orders_open,
            closing_soon: s.closing_soon,
            next_open: s.next_open,
            next_close: s.next_close,
            holiday: s.holiday.map(|h| HolidayDto { date: h.date, name: h.name }),
        }
    }
}

/// An exchange's calendar, its instruments and whether it trades now.
#[derive(Debug, Serialize, ToSchema)]
pub struct ExchangeDto {
    pub mic: String,
    pub name: String,
    pub time_zone: String,
    pub open_time: String,
    pub close_time: String,
    pub parent_orders_from: String,
    pub days: Vec<ExchangeDay>,
    /// Every holiday, earliest first.
    pub holidays: Vec<HolidayDto>,
    /// Instruments whose `exchange_iso_code` is this MIC.
    pub instruments: i64,
    pub updated_at: DateTime<Utc>,
    pub status: ExchangeStatusDto,
}

impl From<ExchangeView> for ExchangeDto {
    fn from(v: ExchangeView) -> Self {
        let status = ExchangeStatusDto::new(&v.exchange, v.status);
        let e = v.exchange;
        Self {
            holidays: e.calendar.holidays.into_iter().map(|h| HolidayDto { date: h.date, name: h.name }).collect(),
            mic: status.mic.clone(),
            name: status.name.clone(),
            time_zone: status.time_zone.clone(),
            open_time: status.open_time.clone(),
            close_time: status.close_time.clone(),
            parent_orders_from: status.parent_orders_from.clone(),
            days: status.days.clone(),
            instruments: v.instruments,
            updated_at: e.updated_at,
            status,
        }
    }
}

/// An exchange's calendar.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExchangeInput {
    #[schema(max_length = 100)]
    pub name: String,
    /// IANA time zone, e.g. `Europe/London`.
    pub time_zone: String,
    /// Local times, `HH:MM`.
    pub open_time: String,
    /// Before `open_time`, the session crosses midnight: it opens the evening before the
    /// trading day it closes on (ADR 0052).
    pub close_time: String,
    /// From the last close to `open_time`.
    pub parent_orders_from: String,
    pub days: Vec<ExchangeDay>,
    #[schema(max_items = 500)]
    pub holidays: Vec<HolidayDto>,
}

/// Every exchange's calendar, by MIC (venue admin).
#[utoipa::path(get, path = "/api/admin/exchanges", tag = "admin",
    responses((status = 200, body = Vec<ExchangeDto>), Forbidden), security(("bearer" = [])))]
pub async fn exchanges<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
) -> ApiResult<Json<Vec<ExchangeDto>>> {
    Ok(Json(st.engine.exchanges.list(&actor).await?.into_iter().map(Into::into).collect()))
}

/// Creates the exchange of a MIC (201) or replaces its calendar (200); in force at once,
/// its next close included (venue admin).
#[utoipa::path(put, path = "/api/admin/exchanges/{mic}", tag = "admin", request_body = ExchangeInput,
    params(("mic" = String, Path, description = "ISO 10383 MIC, e.g. IFEU")),
    responses((status = 200, body = ExchangeDto), (status = 201, body = ExchangeDto), BadRequest, Forbidden),
    security(("bearer" = [])))]
pub async fn save_exchange<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(mic): ApiPath<String>,
    ApiJson(req): ApiJson<ExchangeInput>,
) -> ApiResult<(StatusCode, Json<ExchangeDto>)> {
    let input = calendars::ExchangeInput {
        name: req.name,
        time_zone: req.time_zone,
        open_time: req.open_time,
        close_time: req.close_time,
        parent_orders_from: req.parent_orders_from,
        days: req.days.into_iter().map(Into::into).collect(),
        // One more than the bound is enough for the engine to refuse the list.
        holidays: req
            .holidays
            .into_iter()
            .take(MAX_HOLIDAYS + 1)
            .map(|h| Holiday { date: h.date, name: h.name })
            .collect(),
    };
    let (view, created) = st.engine.exchanges.save(&actor, &mic, input).await?;
    Ok((if created { StatusCode::CREATED } else { StatusCode::OK }, Json(view.into())))
}

/// Removes an exchange's calendar: its instruments follow the venue's hours again (venue
/// admin).
#[utoipa::path(delete, path = "/api/admin/exchanges/{mic}", tag = "admin",
    params(("mic" = String, Path, description = "ISO 10383 MIC, e.g. IFEU")),
    responses((status = 204), Forbidden, NotFound), security(("bearer" = [])))]
pub async fn delete_exchange<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(mic): ApiPath<String>,
) -> ApiResult<StatusCode> {
    st.engine.exchanges.delete(&actor, &mic).await?;
    Ok(StatusCode::NO_CONTENT)
}
