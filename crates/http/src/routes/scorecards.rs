//! Scorecards (issue 29): venue quality statistics over a period, for a firm's own people
//! and, venue-wide or per firm, for the venue's staff.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use upstairs_domain::CompanyId;
use upstairs_engine::Store;
use upstairs_engine::scorecards::{Outcomes, Resting, Scorecard, TickAverage, Times};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::AppState;
use crate::dto::nullable_decimal_schema;
use crate::error::ApiResult;
use crate::error::responses::{BadRequest, Forbidden, NotFound};
use crate::extract::{ApiQuery, Auth};
use crate::openapi::ApiRouter;

pub fn router<S: Store>() -> ApiRouter<S> {
    ApiRouter::new()
        .route::<__path_own_scorecard, _, _>(own_scorecard::<S>)
        .route::<__path_venue_scorecard, _, _>(venue_scorecard::<S>)
}

/// The period: from `from` to `to`, both included, at most 366 days; by default
/// the 30 days to now.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PeriodQuery {
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
}

/// [`PeriodQuery`] and, for the venue's staff, one firm (none: the whole venue).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct VenuePeriodQuery {
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
    pub company_id: Option<Uuid>,
}

fn period(
    from: Option<DateTime<Utc>>,
    to: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> (DateTime<Utc>, DateTime<Utc>) {
    let to = to.unwrap_or(now);
    // A `to` so early that 30 days before it is no time: the engine refuses the period.
    (from.unwrap_or_else(|| to.checked_sub_signed(chrono::Duration::days(30)).unwrap_or(to)), to)
}

/// An average over trades in ticks of each trade's instrument (null when none); positive
/// is better for the side it is told from.
#[derive(Debug, Serialize, ToSchema)]
pub struct TicksDto {
    pub trades: i64,
    #[serde(with = "rust_decimal::serde::arbitrary_precision_option")]
    #[schema(schema_with = nullable_decimal_schema, required = true)]
    pub ticks: Option<Decimal>,
}

impl From<TickAverage> for TicksDto {
    fn from(t: TickAverage) -> Self {
        Self { trades: t.trades, ticks: t.ticks }
    }
}

/// The band's mid some minutes after each trade, against its price.
#[derive(Debug, Serialize, ToSchema)]
pub struct MarkoutDto {
    pub minutes: i64,
    #[serde(flatten)]
    pub average: TicksDto,
}

/// A scorecard: a firm's (`company_id`) or the venue's (`company_id` null). A firm's
/// figures count only what it took part in, from its side; the venue's count every match
/// request, and its prices from the resting side.
#[derive(Debug, Serialize, ToSchema)]
pub struct ScorecardDto {
    #[schema(required = true)]
    pub company_id: Option<Uuid>,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// The match requests the firm sent.
    pub sent: Outcomes,
    /// The match requests its resting orders received.
    pub received: Outcomes,
    /// How long it took to accept or reject what it received.
    pub response_times: Times,
    /// The quantity it rested in the book in the period, and how much of it traded (the
    /// fill rate of resting interest).
    pub resting: Resting,
    /// RFQs it asked; those that got a quote; those that traded.
    pub rfqs_sent: i64,
    pub rfqs_quoted: i64,
    pub rfqs_traded: i64,
    /// RFQs it was asked as a liquidity provider; those it quoted; those it won.
    pub quotes_asked: i64,
    pub quotes_given: i64,
    pub quotes_won: i64,
    /// How long it took to quote.
    pub quote_times: Times,
    /// How long the brokers took to accept its trades, and to report their fills.
    pub broker_accept_times: Times,
    pub broker_fill_times: Times,
    /// Trades (accepted match requests) in the period.
    pub trades: i64,
    /// The trade price against the band's mid at the trade.
    pub price_improvement: TicksDto,
    /// The band's mid 1, 5 and 30 minutes after each trade against its price (trades whose
    /// horizon has not come yet are left out).
    pub markouts: Vec<MarkoutDto>,
}

impl From<Scorecard> for ScorecardDto {
    fn from(s: Scorecard) -> Self {
        Self {
            company_id: s.company.map(|c| c.0),
            from: s.from,
            to: s.to,
            sent: s.sent,
            received: s.received,
            response_times: s.response_times,
            resting: s.resting,
            rfqs_sent: s.rfqs_sent,
            rfqs_quoted: s.rfqs_quoted,
            rfqs_traded: s.rfqs_traded,
            quotes_asked: s.quotes_asked,
            quotes_given: s.quotes_given,
            quotes_won: s.quotes_won,
            quote_times: s.quote_times,
            broker_accept_times: s.broker_accept_times,
            broker_fill_times: s.broker_fill_times,
            trades: s.trades,
            price_improvement: s.price_improvement.into(),
            markouts: s.markouts.into_iter().map(|(minutes, a)| MarkoutDto { minutes, average: a.into() }).collect(),
        }
    }
}

/// The caller's firm's scorecard (its traders and company admin).
#[utoipa::path(get, path = "/api/scorecard", tag = "scorecards", params(PeriodQuery),
    responses((status = 200, body = ScorecardDto), BadRequest, Forbidden), security(("bearer" = [])))]
pub async fn own_scorecard<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiQuery(q): ApiQuery<PeriodQuery>,
) -> ApiResult<Json<ScorecardDto>> {
    let (from, to) = period(q.from, q.to, st.engine.clock().now());
    Ok(Json(st.engine.scorecards.own_scorecard(&actor, from, to).await?.into()))
}

/// The venue's scorecard, or one firm's (`company_id`), for the venue's staff.
#[utoipa::path(get, path = "/api/admin/scorecard", tag = "scorecards", params(VenuePeriodQuery),
    responses((status = 200, body = ScorecardDto), BadRequest, Forbidden, NotFound), security(("bearer" = [])))]
pub async fn venue_scorecard<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiQuery(q): ApiQuery<VenuePeriodQuery>,
) -> ApiResult<Json<ScorecardDto>> {
    let (from, to) = period(q.from, q.to, st.engine.clock().now());
    let company = q.company_id.map(CompanyId);
    Ok(Json(st.engine.scorecards.venue_scorecard(&actor, company, from, to).await?.into()))
}
