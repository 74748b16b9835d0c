//! Companies and instruments: the admin panels' calls and the traders' reads.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use upstairs_domain::{CompanyId, InstrumentId};
use upstairs_engine::Store;
use upstairs_engine::model::{InstrumentFilter, InstrumentSort};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::AppState;
use crate::dto::*;
use crate::error::responses::{BadRequest, Conflict, Forbidden, KeyReused, NotFound};
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiJson, ApiPath, ApiQuery, Auth};
use crate::idempotency::{IdempotencyKeyHeader, KeyedJson};
use crate::openapi::ApiRouter;

pub fn router<S: Store>() -> ApiRouter<S> {
    ApiRouter::new()
        .route::<__path_admin_companies, _, _>(admin_companies::<S>)
        .route::<__path_create_company, _, _>(create_company::<S>)
        .route::<__path_update_company, _, _>(update_company::<S>)
        .route::<__path_company, _, _>(company::<S>)
        .route::<__path_stop_company, _, _>(stop_company::<S>)
        .route::<__path_release_company, _, _>(release_company::<S>)
        .route::<__path_liquidity_providers, _, _>(liquidity_providers::<S>)
        .route::<__path_admin_instruments, _, _>(admin_instruments::<S>)
        .route::<__path_create_instrument, _, _>(create_instrument::<S>)
        .route::<__path_update_instrument, _, _>(update_instrument::<S>)
        .route::<__path_move_band, _, _>(move_band::<S>)
        .route::<__path_instruments, _, _>(instruments::<S>)
        .route::<__path_instrument, _, _>(instrument::<S>)
        .route::<__path_band_history, _, _>(band_history::<S>)
        .route::<__path_instrument_settings, _, _>(instrument_settings::<S>)
        .route::<__path_schedule_instrument_setting, _, _>(schedule_instrument_setting::<S>)
        .route::<__path_cancel_instrument_setting, _, _>(cancel_instrument_setting::<S>)
}

/// Every company (venue admins; sales read it).
#[utoipa::path(get, path = "/api/admin/companies", tag = "admin", params(PageQuery),
    responses((status = 200, body = Page<CompanyDto>), Forbidden),
    security(("bearer" = [])))]
pub async fn admin_companies<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> ApiResult<Json<Page<CompanyDto>>> {
    let page = st.engine.reference.admin_companies(&actor, q.page.unwrap_or(0), q.size.unwrap_or(200)).await?;
    let ids: Vec<CompanyId> = page.items.iter().map(|c| c.company_id).collect();
    let scores = st.engine.counterparties.company_reliability_scores(&ids).await?;
    let items = page.items.into_iter().map(|c| {
        let score = scores.get(&c.company_id).copied().unwrap_or(100);
        CompanyDto::new(c, score)
    });
    Ok(Json(Page { items: items.collect(), total_items: page.total_items }))
}

/// Creates a company (admin).
#[utoipa::path(post, path = "/api/admin/companies", tag = "admin", request_body = CompanyRequest,
    params(IdempotencyKeyHeader),
    responses((status = 201, body = CompanyDto), BadRequest, Forbidden,
              Conflict, KeyReused), security(("bearer" = [])))]
pub async fn create_company<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    KeyedJson { body: req, key }: KeyedJson<CompanyRequest>,
) -> ApiResult<(StatusCode, Json<CompanyDto>)> {
    let c = st.engine.reference.create_company(&actor, req.into(), key.as_ref()).await?;
    Ok((StatusCode::CREATED, Json(with_score(&st, c).await?)))
}

/// Changes a company (admin).
#[utoipa::path(patch, path = "/api/admin/companies/{id}", tag = "admin", request_body = CompanyRequest,
    params(("id" = Uuid, Path)),
    responses((status = 200, body = CompanyDto), BadRequest, Forbidden,
              NotFound, Conflict), security(("bearer" = [])))]
pub async fn update_company<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<CompanyId>,
    ApiJson(req): ApiJson<CompanyRequest>,
) -> ApiResult<Json<CompanyDto>> {
    let c = st.engine.reference.update_company(&actor, id, req.into()).await?;
    Ok(Json(with_score(&st, c).await?))
}

/// A company: one's own, or any for an admin.
#[utoipa::path(get, path = "/api/companies/{id}", tag = "companies", params(("id" = Uuid, Path)),
    responses((status = 200, body = CompanyDto), NotFound), security(("bearer" = [])))]
pub async fn company<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<CompanyId>,
) -> ApiResult<Json<CompanyDto>> {
    let c = st.engine.reference.company(&actor, id).await?;
    Ok(Json(with_score(&st, c).await?))
}

/// The kill switch: stops a company's trading (a venue admin, or a company admin for
/// their own). Its working orders, pending match requests, open RFQs and quotes end at
/// once, counterparties are told, and new orders are refused until it is released.
/// Pressing it again keeps the first stop and sweeps again.
#[utoipa::path(post, path = "/api/companies/{id}/kill-switch", tag = "companies", params(("id" = Uuid, Path)),
    responses((status = 200, body = CompanyDto), BadRequest, Forbidden, NotFound), security(("bearer" = [])))]
pub async fn stop_company<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<CompanyId>,
) -> ApiResult<Json<CompanyDto>> {
    let c = st.engine.kill_switch.stop_company(&actor, id).await?;
    Ok(Json(with_score(&st, c).await?))
}

/// Releases the kill switch: the company may trade again (venue admins only).
#[utoipa::path(delete, path = "/api/companies/{id}/kill-switch", tag = "companies", params(("id" = Uuid, Path)),
    responses((status = 200, body = CompanyDto), BadRequest, Forbidden, NotFound, Conflict),
    security(("bearer" = [])))]
pub async fn release_company<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<CompanyId>,
) -> ApiResult<Json<CompanyDto>> {
    let c = st.engine.kill_switch.release_company(&actor, id).await?;
    Ok(Json(with_score(&st, c).await?))
}

/// A company's DTO with its reliability score.
async fn with_score<S: Store>(st: &AppState<S>, c: upstairs_engine::model::Company) -> ApiResult<CompanyDto> {
    let id = c.company_id;
    let score = st.engine.counterparties.company_reliability_scores(&[id]).await?.get(&id).copied().unwrap_or(100);
    Ok(CompanyDto::new(c, score))
}

/// The liquidity providers an RFQ can be sent to.
#[utoipa::path(get, path = "/api/liquidity-providers", tag = "companies",
    responses((status = 200, body = Vec<CompanyRefDto>), ), security(("bearer" = [])))]
pub async fn liquidity_providers<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
) -> ApiResult<Json<Vec<CompanyRefDto>>> {
    let lps = st.engine.reference.liquidity_providers(&actor).await?;
    Ok(Json(lps.into_iter().map(|c| CompanyRefDto { company_id: c.company_id.0, name: c.name }).collect()))
}

/// Every instrument, filtered and sorted (venue admins; sales read it).
#[utoipa::path(get, path = "/api/admin/instruments", tag = "admin", params(InstrumentListQuery),
    responses((status = 200, body = Page<InstrumentDto>), BadRequest, Forbidden),
    security(("bearer" = [])))]
pub async fn admin_instruments<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiQuery(q): ApiQuery<InstrumentListQuery>,
) -> ApiResult<Json<Page<InstrumentDto>>> {
    let sort = match q.sort_by.as_deref().filter(|s| !s.is_empty()) {
        None => InstrumentSort::default(),
        Some(s) => InstrumentSort::parse(s).ok_or_else(|| {
            ApiError::bad_request(format!("Cannot sort by {s}: use name, term, exchange_id, created_at or updated_at."))
        })?,
    };
    let filter = InstrumentFilter {
        name: q.name.filter(|n| !n.trim().is_empty()),
        exchange_id: q.exchange_id.filter(|n| !n.trim().is_empty()),
        active: q.active,
        is_sandbox: None,
        sort,
        descending: matches!(q.order_by, Some(SortOrder::Desc)),
        page: q.page.unwrap_or(0),
        size: q.size.unwrap_or(200),
    };
    let page = st.engine.reference.admin_instruments(&actor, filter).await?;
    Ok(Json(page.into()))
}

/// Creates an instrument (admin).
#[utoipa::path(post, path = "/api/admin/instruments", tag = "admin", request_body = InstrumentRequest,
    params(IdempotencyKeyHeader),
    responses((status = 201, body = InstrumentDto), BadRequest, Forbidden, KeyReused),
    security(("bearer" = [])))]
pub async fn create_instrument<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    KeyedJson { body: req, key }: KeyedJson<InstrumentRequest>,
) -> ApiResult<(StatusCode, Json<InstrumentDto>)> {
    let i = st.engine.reference.create_instrument(&actor, req.into(), key.as_ref()).await?;
    Ok((StatusCode::CREATED, Json(i.into())))
}

/// Changes an instrument (admin).
#[utoipa::path(patch, path = "/api/admin/instruments/{id}", tag = "admin", request_body = InstrumentRequest,
    params(("id" = Uuid, Path)),
    responses((status = 200, body = InstrumentDto), BadRequest, Forbidden,
              NotFound), security(("bearer" = [])))]
pub async fn update_instrument<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<InstrumentId>,
    ApiJson(req): ApiJson<InstrumentRequest>,
) -> ApiResult<Json<InstrumentDto>> {
    Ok(Json(st.engine.reference.update_instrument(&actor, id, req.into()).await?.into()))
}

/// Moves the electronic band (the exchange's best bid and offer) of an instrument.
#[utoipa::path(post, path = "/api/admin/instruments/{id}/band", tag = "admin", request_body = BandRequest,
    params(("id" = Uuid, Path)),
    responses((status = 200, body = InstrumentDto), BadRequest, Forbidden,
              NotFound), security(("bearer" = [])))]
pub async fn move_band<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<InstrumentId>,
    ApiJson(req): ApiJson<BandRequest>,
) -> ApiResult<Json<InstrumentDto>> {
    let i = st.engine.reference.move_band(Some(&actor), id, req.min_tick_price, req.max_tick_price).await?;
    Ok(Json(i.into()))
}

/// Where a version of an instrument's settings stands (ADR 0051).
#[derive(Clone, Copy, Debug, Serialize, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum InstrumentSettingState {
    /// To take effect at its time.
    Scheduled,
    /// The settings the instrument has now.
    InForce,
    /// In force before, not now.
    Superseded,
}

/// A version of an instrument's tick size, exchange tick size and minimum block.
#[derive(Debug, Serialize, ToSchema)]
pub struct InstrumentSettingDto {
    pub setting_id: Uuid,
    pub instrument_id: Uuid,
    /// When it takes effect (scheduled) or took effect.
    pub effective_from: DateTime<Utc>,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub tick_size: rust_decimal::Decimal,
    #[serde(with = "rust_decimal::serde::arbitrary_precision_option")]
    #[schema(required = true, schema_with = nullable_decimal_schema)]
    pub exchange_tick_size: Option<rust_decimal::Decimal>,
    /// The minimum block size.
    pub min_quantity: i64,
    pub state: InstrumentSettingState,
    /// The operator who set it; null for the venue's own.
    #[schema(required = true)]
    pub created_by_email: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// Every version, each with its state: the latest applied one is in force.
fn setting_dtos(list: Vec<upstairs_engine::model::InstrumentSetting>) -> Vec<InstrumentSettingDto> {
    let in_force = list
        .iter()
        .filter(|s| s.applied_at.is_some())
        .max_by_key(|s| (s.applied_at, s.created_at))
        .map(|s| s.setting_id);
    list.into_iter()
        .map(|s| {
            let state = match s.applied_at {
                None => InstrumentSettingState::Scheduled,
                Some(_) if Some(s.setting_id) == in_force => InstrumentSettingState::InForce,
                Some(_) => InstrumentSettingState::Superseded,
            };
            setting_dto(s, state)
        })
        .collect()
}

fn setting_dto(s: upstairs_engine::model::InstrumentSetting, state: InstrumentSettingState) -> InstrumentSettingDto {
    InstrumentSettingDto {
        setting_id: s.setting_id,
        instrument_id: s.instrument_id.0,
        effective_from: s.effective_from,
        tick_size: s.tick_size,
        exchange_tick_size: s.exchange_tick_size,
        min_quantity: s.min_quantity,
        state,
        created_by_email: s.created_by_email,
        created_at: s.created_at,
    }
}

/// A version of an instrument's settings to put in force at a later time.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleSettingRequest {
    pub effective_from: DateTime<Utc>,
    #[serde(deserialize_with = "decimal::deserialize")]
    #[schema(schema_with = request_decimal_schema)]
    pub tick_size: rust_decimal::Decimal,
    #[serde(default, deserialize_with = "decimal::option")]
    #[schema(schema_with = nullable_request_decimal_schema)]
    pub exchange_tick_size: Option<rust_decimal::Decimal>,
    #[serde(deserialize_with = "whole::deserialize")]
    pub min_quantity: i64,
}

/// Every version of an instrument's settings, the latest time first: scheduled, in force
/// and superseded (admin).
#[utoipa::path(get, path = "/api/admin/instruments/{id}/settings", tag = "admin", params(("id" = Uuid, Path)),
    responses((status = 200, body = Vec<InstrumentSettingDto>), Forbidden, NotFound), security(("bearer" = [])))]
pub async fn instrument_settings<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<InstrumentId>,
) -> ApiResult<Json<Vec<InstrumentSettingDto>>> {
    Ok(Json(setting_dtos(st.engine.reference.instrument_settings(&actor, id).await?)))
}

/// Schedules a version of an instrument's settings; it takes effect at its time by itself
/// (admin).
#[utoipa::path(post, path = "/api/admin/instruments/{id}/settings", tag = "admin",
    request_body = ScheduleSettingRequest, params(("id" = Uuid, Path)),
    responses((status = 201, body = InstrumentSettingDto), BadRequest, Forbidden, NotFound, Conflict),
    security(("bearer" = [])))]
pub async fn schedule_instrument_setting<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<InstrumentId>,
    ApiJson(req): ApiJson<ScheduleSettingRequest>,
) -> ApiResult<(StatusCode, Json<InstrumentSettingDto>)> {
    let new = upstairs_engine::reference::ScheduledSetting {
        effective_from: req.effective_from,
        tick_size: req.tick_size,
        exchange_tick_size: req.exchange_tick_size,
        min_quantity: req.min_quantity,
    };
    let s = st.engine.reference.schedule_instrument_setting(&actor, id, new).await?;
    Ok((StatusCode::CREATED, Json(setting_dto(s, InstrumentSettingState::Scheduled))))
}

/// Cancels a version of an instrument's settings not yet in force (admin).
#[utoipa::path(delete, path = "/api/admin/instruments/{id}/settings/{setting_id}", tag = "admin",
    params(("id" = Uuid, Path), ("setting_id" = Uuid, Path)),
    responses((status = 204), Forbidden, NotFound, Conflict), security(("bearer" = [])))]
pub async fn cancel_instrument_setting<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath((id, setting_id)): ApiPath<(InstrumentId, Uuid)>,
) -> ApiResult<StatusCode> {
    st.engine.reference.cancel_instrument_setting(&actor, id, setting_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Active instruments the caller may trade.
#[utoipa::path(get, path = "/api/instruments", tag = "instruments", params(NameQuery),
    responses((status = 200, body = Vec<InstrumentDto>), ), security(("bearer" = [])))]
pub async fn instruments<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiQuery(q): ApiQuery<NameQuery>,
) -> ApiResult<Json<Vec<InstrumentDto>>> {
    Ok(Json(st.engine.reference.tradable_instruments(&actor, q.name).await?.into_iter().map(Into::into).collect()))
}

/// One instrument the caller may see.
#[utoipa::path(get, path = "/api/instruments/{id}", tag = "instruments", params(("id" = Uuid, Path)),
    responses((status = 200, body = InstrumentDto), NotFound), security(("bearer" = [])))]
pub async fn instrument<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<InstrumentId>,
) -> ApiResult<Json<InstrumentDto>> {
    Ok(Json(st.engine.reference.instrument(&actor, id).await?.into()))
}

/// The period of an instrument's band history; by default the 24 hours to now.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct BandHistoryQuery {
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
}

/// The band from `at` on (one point of its history).
#[derive(Debug, Serialize, ToSchema)]
pub struct BandPointDto {
    pub at: DateTime<Utc>,
    /// The exchange's best bid.
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub min_tick_price: rust_decimal::Decimal,
    /// The exchange's best offer.
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub max_tick_price: rust_decimal::Decimal,
}

/// An instrument's band (the exchange's best bid and offer) over a period of at most 31
/// days, oldest first, for its price chart: the band in force at `from`, then at most 499
/// points, each the lowest low and highest high of a slice of the period that saw moves.
#[utoipa::path(get, path = "/api/instruments/{id}/band-history", tag = "instruments",
    params(("id" = Uuid, Path), BandHistoryQuery),
    responses((status = 200, body = Vec<BandPointDto>), BadRequest, NotFound), security(("bearer" = [])))]
pub async fn band_history<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<InstrumentId>,
    ApiQuery(q): ApiQuery<BandHistoryQuery>,
) -> ApiResult<Json<Vec<BandPointDto>>> {
    let to = q.to.unwrap_or_else(|| st.engine.clock().now());
    let from = q.from.unwrap_or_else(|| to.checked_sub_signed(chrono::Duration::days(1)).unwrap_or(to));
    let points = st.engine.reference.band_history(&actor, id, from, to).await?;
    let dto = points.into_iter().map(|p| BandPointDto {
        at: p.at,
        min_tick_price: p.min_tick_price.normalize(),
        max_tick_price: p.max_tick_price.normalize(),
    });
    Ok(Json(dto.collect()))
}

/// A company by id and name.
#[derive(Debug, Serialize, ToSchema)]
pub struct CompanyRefDto {
    pub company_id: Uuid,
    pub name: String,
}

/// A company named by id in a request (a name, if sent, is ignored).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CompanyIdDto {
    pub company_id: Uuid,
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CompanyDto {
    pub company_id: Uuid,
    pub name: String,
    pub full_name: String,
    #[schema(required = true)]
    pub ems_identifier: Option<String>,
    #[schema(required = true)]
    pub account: Option<String>,
    #[schema(required = true)]
    pub trade_confirmation_email: Option<String>,
    pub trade_confirmation_via_email_enabled: bool,
    /// The SenderCompID of the company's FIX session; null: no FIX.
    #[schema(required = true)]
    pub fix_comp_id: Option<String>,
    /// Whether a FIX password is set (it is never shown).
    pub fix_password_set: bool,
    /// Whether a FIX Logon may start both sequences again at 1 (ResetSeqNumFlag 141=Y);
    /// without it, such a Logon is refused.
    pub fix_reset_on_logon: bool,
    /// Whether the working child orders of the parent orders its FIX session sent are
    /// cancelled, and their pending match requests ended, when the session has been gone
    /// for the venue's grace period. On unless turned off.
    pub fix_cancel_on_disconnect: bool,
    #[schema(required = true)]
    pub default_broker: Option<CompanyRefDto>,
    pub brokers: Vec<CompanyRefDto>,
    /// Company types: `broker`, `liquidity-provider`.
    pub roles: Vec<String>,
    /// The reliability score over every match request its users received (see `UserDto`).
    pub reliability_score: i64,
    /// Since when its trading is stopped by the kill switch; null while it trades.
    #[schema(required = true)]
    pub trading_stopped_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl CompanyDto {
    pub fn new(c: upstairs_engine::model::Company, reliability_score: i64) -> Self {
        let r = |b: upstairs_engine::model::CompanyRef| CompanyRefDto { company_id: b.company_id.0, name: b.name };
        Self {
            company_id: c.company_id.0,
            name: c.name,
            full_name: c.full_name,
            ems_identifier: c.ems_identifier,
            account: c.account,
            trade_confirmation_email: c.trade_confirmation_email,
            trade_confirmation_via_email_enabled: c.trade_confirmation_via_email_enabled,
            fix_comp_id: c.fix_comp_id,
            fix_password_set: c.fix_password_hash.is_some(),
            fix_reset_on_logon: c.fix_reset_on_logon,
            fix_cancel_on_disconnect: c.fix_cancel_on_disconnect,
            default_broker: c.default_broker.map(r),
            brokers: c.brokers.into_iter().map(r).collect(),
            roles: c.roles,
            reliability_score,
            trading_stopped_at: c.trading_stopped_at,
            created_at: c.created_at,
            updated_at: c.updated_at,
        }
    }
}

/// Company fields to create or change; absent fields are left as they are.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CompanyRequest {
    pub name: Option<String>,
    pub full_name: Option<String>,
    #[serde(default, deserialize_with = "double_option")]
    pub ems_identifier: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    pub account: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    pub trade_confirmation_email: Option<Option<String>>,
    pub trade_confirmation_via_email_enabled: Option<bool>,
    /// 1 to 32 letters, digits, `.`, `_` or `-`; null removes it.
    #[serde(default, deserialize_with = "double_option")]
    pub fix_comp_id: Option<Option<String>>,
    /// At least 8 characters, stored hashed; null removes it.
    #[serde(default, deserialize_with = "double_option")]
    pub fix_password: Option<Option<String>>,
    pub fix_reset_on_logon: Option<bool>,
    pub fix_cancel_on_disconnect: Option<bool>,
    #[serde(default, deserialize_with = "double_option")]
    pub default_broker: Option<Option<CompanyIdDto>>,
    pub brokers: Option<Vec<CompanyIdDto>>,
    pub roles: Option<Vec<String>>,
}

impl From<CompanyRequest> for upstairs_engine::reference::CompanyChanges {
    fn from(r: CompanyRequest) -> Self {
        use upstairs_domain::CompanyId;
        Self {
            name: r.name,
            full_name: r.full_name,
            ems_identifier: r.ems_identifier,
            account: r.account,
            trade_confirmation_email: r.trade_confirmation_email,
            trade_confirmation_via_email_enabled: r.trade_confirmation_via_email_enabled,
            fix_comp_id: r.fix_comp_id,
            fix_password: r.fix_password,
            fix_reset_on_logon: r.fix_reset_on_logon,
            fix_cancel_on_disconnect: r.fix_cancel_on_disconnect,
            default_broker_id: r.default_broker.map(|d| d.map(|c| CompanyId(c.company_id))),
            broker_ids: r.brokers.map(|v| v.into_iter().map(|c| CompanyId(c.company_id)).collect()),
            roles: r.roles,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct InstrumentDto {
    pub instrument_id: Uuid,
    pub name: String,
    pub term: String,
    pub description: String,
    /// The minimum block size.
    pub min_quantity: i64,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub tick_size: rust_decimal::Decimal,
    #[serde(with = "rust_decimal::serde::arbitrary_precision_option")]
    #[schema(required = true, schema_with = nullable_decimal_schema)]
    pub exchange_tick_size: Option<rust_decimal::Decimal>,
    pub exchange_id: String,
    pub exchange: String,
    pub exchange_iso_code: String,
    #[schema(required = true)]
    pub exchange_instrument_id: Option<String>,
    #[schema(required = true)]
    pub bbg_code: Option<String>,
    pub country: String,
    pub currency: String,
    /// The exchange's best bid.
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub min_tick_price: rust_decimal::Decimal,
    /// The exchange's best offer.
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub max_tick_price: rust_decimal::Decimal,
    pub active: bool,
    pub is_sandbox: bool,
    pub reversed_spread: bool,
    /// When the venue last received a price (a band) for it.
    pub band_seen_at: DateTime<Utc>,
    /// Seconds without a price before trading on it is held (ADR 0048); null: no guard.
    #[schema(required = true, minimum = 1, maximum = 86400)]
    pub prices_stale_after: Option<i32>,
    /// Its prices are stale: takes, accepts and quote accepts on it are refused.
    pub prices_stale: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<upstairs_engine::model::Instrument> for InstrumentDto {
    fn from(i: upstairs_engine::model::Instrument) -> Self {
        Self {
            instrument_id: i.instrument_id.0,
            name: i.name,
            term: i.term,
            description: i.description,
            min_quantity: i.min_quantity,
            tick_size: i.tick_size.normalize(),
            exchange_tick_size: i.exchange_tick_size.map(|d| d.normalize()),
            exchange_id: i.exchange_id,
            exchange: i.exchange,
            exchange_iso_code: i.exchange_iso_code,
            exchange_instrument_id: i.exchange_instrument_id,
            bbg_code: i.bbg_code,
            country: i.country,
            currency: i.currency,
            min_tick_price: i.min_tick_price.normalize(),
            max_tick_price: i.max_tick_price.normalize(),
            active: i.active,
            is_sandbox: i.is_sandbox,
            reversed_spread: i.reversed_spread,
            band_seen_at: i.band_seen_at,
            prices_stale_after: i.prices_stale_after,
            prices_stale: i.prices_stale,
            created_at: i.created_at,
            updated_at: i.updated_at,
        }
    }
}

/// Instrument fields to create or change; absent fields are left as they are.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InstrumentRequest {
    pub name: Option<String>,
    pub term: Option<String>,
    pub description: Option<String>,
    #[serde(default, deserialize_with = "whole::option")]
    pub min_quantity: Option<i64>,
    #[serde(default, deserialize_with = "decimal::option")]
    #[schema(schema_with = request_decimal_schema)]
    pub tick_size: Option<rust_decimal::Decimal>,
    #[serde(default, deserialize_with = "decimal::double_option")]
    #[schema(schema_with = nullable_request_decimal_schema)]
    pub exchange_tick_size: Option<Option<rust_decimal::Decimal>>,
    pub exchange_id: Option<String>,
    pub exchange: Option<String>,
    pub exchange_iso_code: Option<String>,
    #[serde(default, deserialize_with = "double_option")]
    pub exchange_instrument_id: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    pub bbg_code: Option<Option<String>>,
    pub country: Option<String>,
    pub currency: Option<String>,
    #[serde(default, deserialize_with = "decimal::option")]
    #[schema(schema_with = request_decimal_schema)]
    pub min_tick_price: Option<rust_decimal::Decimal>,
    #[serde(default, deserialize_with = "decimal::option")]
    #[schema(schema_with = request_decimal_schema)]
    pub max_tick_price: Option<rust_decimal::Decimal>,
    pub active: Option<bool>,
    pub is_sandbox: Option<bool>,
    pub reversed_spread: Option<bool>,
    /// Seconds without a price before trading on it is held (1 to 86,400); null removes the guard.
    #[serde(default, deserialize_with = "whole::double_option")]
    #[schema(minimum = 1, maximum = 86400, nullable)]
    pub prices_stale_after: Option<Option<i64>>,
}

impl From<InstrumentRequest> for upstairs_engine::reference::InstrumentChanges {
    fn from(r: InstrumentRequest) -> Self {
        Self {
            name: r.name,
            term: r.term,
            description: r.description,
            min_quantity: r.min_quantity,
            tick_size: r.tick_size,
            exchange_tick_size: r.exchange_tick_size,
            exchange_id: r.exchange_id,
            exchange: r.exchange,
            exchange_iso_code: r.exchange_iso_code,
            exchange_instrument_id: r.exchange_instrument_id,
            bbg_code: r.bbg_code,
            country: r.country,
            currency: r.currency,
            min_tick_price: r.min_tick_price,
            max_tick_price: r.max_tick_price,
            active: r.active,
            is_sandbox: r.is_sandbox,
            reversed_spread: r.reversed_spread,
            prices_stale_after: r.prices_stale_after,
        }
    }
}

/// A new electronic band: the exchange's best bid and best offer.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BandRequest {
    #[serde(deserialize_with = "decimal::deserialize")]
    #[schema(schema_with = request_decimal_schema)]
    pub min_tick_price: rust_decimal::Decimal,
    #[serde(deserialize_with = "decimal::deserialize")]
    #[schema(schema_with = request_decimal_schema)]
    pub max_tick_price: rust_decimal::Decimal,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct InstrumentListQuery {
    #[serde(default, deserialize_with = "whole::query")]
    pub page: Option<i64>,
    #[serde(default, deserialize_with = "whole::query")]
    pub size: Option<i64>,
    /// Part of the name.
    pub name: Option<String>,
    pub exchange_id: Option<String>,
    pub active: Option<bool>,
    /// ASC or DESC.
    #[param(inline)]
    pub order_by: Option<SortOrder>,
    /// name, term, exchange_id, created_at or updated_at.
    pub sort_by: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct NameQuery {
    /// Part of the name.
    pub name: Option<String>,
}
