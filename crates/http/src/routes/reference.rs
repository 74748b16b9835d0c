//! Companies and instruments: the admin panels' calls and the traders' reads.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use upstairs_domain::{CompanyId, InstrumentId};
use upstairs_engine::Store;
use upstairs_engine::model::{InstrumentFilter, InstrumentSort};

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
    let scores = st.engine.matches.company_reliability_scores(&ids).await?;
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
    let score = st.engine.matches.company_reliability_scores(&[id]).await?.get(&id).copied().unwrap_or(100);
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
