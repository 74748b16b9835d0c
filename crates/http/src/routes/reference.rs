//! Companies and instruments: the admin panels' calls and the traders' reads.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use upstairs_domain::{CompanyId, InstrumentId};
use upstairs_engine::Store;
use upstairs_engine::model::{InstrumentFilter, InstrumentSort};
use uuid::Uuid;

use crate::AppState;
use crate::dto::*;
use crate::error::{ApiError, ApiResult, Problem};
use crate::extract::{ApiJson, ApiPath, ApiQuery, Auth};

/// Every company (admin).
#[utoipa::path(get, path = "/api/admin/companies", tag = "admin", params(PageQuery),
    responses((status = 200, body = CompanyPage), (status = 401, body = Problem), (status = 403, body = Problem)),
    security(("bearer" = [])))]
pub async fn admin_companies<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> ApiResult<Json<CompanyPage>> {
    let page = st.engine.admin_companies(&actor, q.page.unwrap_or(0), q.size.unwrap_or(200)).await?;
    Ok(Json(CompanyPage { items: page.items.into_iter().map(Into::into).collect(), total_items: page.total_items }))
}

/// Creates a company (admin).
#[utoipa::path(post, path = "/api/admin/companies", tag = "admin", request_body = CompanyRequest,
    responses((status = 201, body = CompanyDto), (status = 400, body = Problem), (status = 403, body = Problem),
              (status = 409, body = Problem)), security(("bearer" = [])))]
pub async fn create_company<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiJson(req): ApiJson<CompanyRequest>,
) -> ApiResult<(StatusCode, Json<CompanyDto>)> {
    Ok((StatusCode::CREATED, Json(st.engine.create_company(&actor, req.into()).await?.into())))
}

/// Changes a company (admin).
#[utoipa::path(patch, path = "/api/admin/companies/{id}", tag = "admin", request_body = CompanyRequest,
    params(("id" = Uuid, Path)),
    responses((status = 200, body = CompanyDto), (status = 400, body = Problem), (status = 403, body = Problem),
              (status = 404, body = Problem), (status = 409, body = Problem)), security(("bearer" = [])))]
pub async fn update_company<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(req): ApiJson<CompanyRequest>,
) -> ApiResult<Json<CompanyDto>> {
    Ok(Json(st.engine.update_company(&actor, CompanyId(id), req.into()).await?.into()))
}

/// A company: one's own, or any for an admin.
#[utoipa::path(get, path = "/api/companies/{id}", tag = "companies", params(("id" = Uuid, Path)),
    responses((status = 200, body = CompanyDto), (status = 404, body = Problem)), security(("bearer" = [])))]
pub async fn company<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<Uuid>,
) -> ApiResult<Json<CompanyDto>> {
    Ok(Json(st.engine.company(&actor, CompanyId(id)).await?.into()))
}

/// The liquidity providers an RFQ can be sent to.
#[utoipa::path(get, path = "/api/liquidity-providers", tag = "companies",
    responses((status = 200, body = Vec<CompanyRefDto>), (status = 401, body = Problem)), security(("bearer" = [])))]
pub async fn liquidity_providers<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
) -> ApiResult<Json<Vec<CompanyRefDto>>> {
    let lps = st.engine.liquidity_providers(&actor).await?;
    Ok(Json(lps.into_iter().map(|c| CompanyRefDto { company_id: c.company_id.0, name: c.name }).collect()))
}

/// Every instrument, filtered and sorted (admin).
#[utoipa::path(get, path = "/api/admin/instruments", tag = "admin", params(InstrumentListQuery),
    responses((status = 200, body = InstrumentPage), (status = 400, body = Problem), (status = 403, body = Problem)),
    security(("bearer" = [])))]
pub async fn admin_instruments<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiQuery(q): ApiQuery<InstrumentListQuery>,
) -> ApiResult<Json<InstrumentPage>> {
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
    let page = st.engine.admin_instruments(&actor, filter).await?;
    Ok(Json(InstrumentPage { items: page.items.into_iter().map(Into::into).collect(), total_items: page.total_items }))
}

/// Creates an instrument (admin).
#[utoipa::path(post, path = "/api/admin/instruments", tag = "admin", request_body = InstrumentRequest,
    responses((status = 201, body = InstrumentDto), (status = 400, body = Problem), (status = 403, body = Problem)),
    security(("bearer" = [])))]
pub async fn create_instrument<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiJson(req): ApiJson<InstrumentRequest>,
) -> ApiResult<(StatusCode, Json<InstrumentDto>)> {
    Ok((StatusCode::CREATED, Json(st.engine.create_instrument(&actor, req.into()).await?.into())))
}

/// Changes an instrument (admin).
#[utoipa::path(patch, path = "/api/admin/instruments/{id}", tag = "admin", request_body = InstrumentRequest,
    params(("id" = Uuid, Path)),
    responses((status = 200, body = InstrumentDto), (status = 400, body = Problem), (status = 403, body = Problem),
              (status = 404, body = Problem)), security(("bearer" = [])))]
pub async fn update_instrument<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(req): ApiJson<InstrumentRequest>,
) -> ApiResult<Json<InstrumentDto>> {
    Ok(Json(st.engine.update_instrument(&actor, InstrumentId(id), req.into()).await?.into()))
}

/// Moves the electronic band (the exchange's best bid and offer) of an instrument.
#[utoipa::path(post, path = "/api/admin/instruments/{id}/band", tag = "admin", request_body = BandRequest,
    params(("id" = Uuid, Path)),
    responses((status = 200, body = InstrumentDto), (status = 400, body = Problem), (status = 403, body = Problem),
              (status = 404, body = Problem)), security(("bearer" = [])))]
pub async fn move_band<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(req): ApiJson<BandRequest>,
) -> ApiResult<Json<InstrumentDto>> {
    let i = st.engine.move_band(Some(&actor), InstrumentId(id), req.min_tick_price, req.max_tick_price).await?;
    Ok(Json(i.into()))
}

/// Active instruments the caller may trade.
#[utoipa::path(get, path = "/api/instruments", tag = "instruments", params(NameQuery),
    responses((status = 200, body = Vec<InstrumentDto>), (status = 401, body = Problem)), security(("bearer" = [])))]
pub async fn instruments<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiQuery(q): ApiQuery<NameQuery>,
) -> ApiResult<Json<Vec<InstrumentDto>>> {
    Ok(Json(st.engine.tradable_instruments(&actor, q.name).await?.into_iter().map(Into::into).collect()))
}

/// One instrument the caller may see.
#[utoipa::path(get, path = "/api/instruments/{id}", tag = "instruments", params(("id" = Uuid, Path)),
    responses((status = 200, body = InstrumentDto), (status = 404, body = Problem)), security(("bearer" = [])))]
pub async fn instrument<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<Uuid>,
) -> ApiResult<Json<InstrumentDto>> {
    Ok(Json(st.engine.instrument(&actor, InstrumentId(id)).await?.into()))
}
