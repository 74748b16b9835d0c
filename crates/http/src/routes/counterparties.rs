//! Counterparty filters (issue 29, ADR 0042): the firms a company or a trader never trades
//! with, and the least reliability score of a counterparty firm.

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use upstairs_domain::CompanyId;
use upstairs_engine::Store;
use upstairs_engine::counterparties::{FilterInput, FilterView};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::AppState;
use crate::dto::whole;
use crate::error::ApiResult;
use crate::error::responses::{BadRequest, Forbidden, NotFound};
use crate::extract::{ApiJson, ApiPath, Auth};
use crate::openapi::ApiRouter;
use crate::routes::reference::CompanyRefDto;

pub fn router<S: Store>() -> ApiRouter<S> {
    ApiRouter::new()
        .route::<__path_counterparty_firms, _, _>(counterparty_firms::<S>)
        .route::<__path_firm_filter, _, _>(firm_filter::<S>)
        .route::<__path_set_firm_filter, _, _>(set_firm_filter::<S>)
        .route::<__path_own_filter, _, _>(own_filter::<S>)
        .route::<__path_set_own_filter, _, _>(set_own_filter::<S>)
}

/// A counterparty filter: the firms never traded with, by name, and the least reliability
/// score (0–100) of a counterparty firm, or null for none.
#[derive(Debug, Serialize, ToSchema)]
pub struct CounterpartyFilterDto {
    pub blocked_companies: Vec<CompanyRefDto>,
    #[schema(required = true)]
    pub min_reliability_score: Option<i64>,
}

impl From<FilterView> for CounterpartyFilterDto {
    fn from(v: FilterView) -> Self {
        Self {
            blocked_companies: v
                .blocked
                .into_iter()
                .map(|c| CompanyRefDto { company_id: c.company_id.0, name: c.name })
                .collect(),
            min_reliability_score: v.min_reliability_score,
        }
    }
}

/// A counterparty filter as its owner sets it, whole: the firms (at most 200, never the
/// owner's own: 'A firm cannot block itself', 'Unknown firm') and the least score
/// ('Must be from 0 to 100'), null for none.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CounterpartyFilterRequest {
    pub blocked_company_ids: Vec<Uuid>,
    #[serde(default, deserialize_with = "whole::option")]
    #[schema(minimum = 0, maximum = 100, nullable)]
    pub min_reliability_score: Option<i64>,
}

impl From<CounterpartyFilterRequest> for FilterInput {
    fn from(r: CounterpartyFilterRequest) -> Self {
        Self {
            blocked: r.blocked_company_ids.into_iter().map(CompanyId).collect(),
            min_reliability_score: r.min_reliability_score,
        }
    }
}

/// The venue's firms a filter may name: every company but the caller's own and the
/// brokers that do nothing else, by name.
#[utoipa::path(get, path = "/api/counterparty-firms", tag = "companies",
    responses((status = 200, body = Vec<CompanyRefDto>)), security(("bearer" = [])))]
pub async fn counterparty_firms<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
) -> ApiResult<Json<Vec<CompanyRefDto>>> {
    let firms = st.engine.counterparties.firms(&actor).await?;
    Ok(Json(firms.into_iter().map(|c| CompanyRefDto { company_id: c.company_id.0, name: c.name }).collect()))
}

/// A firm's own counterparty filter: its people and the venue's staff read it (another
/// firm finds no such company).
#[utoipa::path(get, path = "/api/companies/{id}/counterparty-filter", tag = "companies", params(("id" = Uuid, Path)),
    responses((status = 200, body = CounterpartyFilterDto), NotFound), security(("bearer" = [])))]
pub async fn firm_filter<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<CompanyId>,
) -> ApiResult<Json<CounterpartyFilterDto>> {
    Ok(Json(st.engine.counterparties.firm_filter(&actor, id).await?.into()))
}

/// Sets a firm's own counterparty filter (its company admin, or a venue admin); the change
/// is in the action log. The blocked firms are never told.
#[utoipa::path(put, path = "/api/companies/{id}/counterparty-filter", tag = "companies", params(("id" = Uuid, Path)),
    request_body = CounterpartyFilterRequest,
    responses((status = 200, body = CounterpartyFilterDto), BadRequest, Forbidden, NotFound), security(("bearer" = [])))]
pub async fn set_firm_filter<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<CompanyId>,
    ApiJson(req): ApiJson<CounterpartyFilterRequest>,
) -> ApiResult<Json<CounterpartyFilterDto>> {
    Ok(Json(st.engine.counterparties.set_firm_filter(&actor, id, req.into()).await?.into()))
}

/// The caller's own counterparty filter (traders).
#[utoipa::path(get, path = "/api/users/me/counterparty-filter", tag = "users",
    responses((status = 200, body = CounterpartyFilterDto), Forbidden), security(("bearer" = [])))]
pub async fn own_filter<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
) -> ApiResult<Json<CounterpartyFilterDto>> {
    Ok(Json(st.engine.counterparties.own_filter(&actor).await?.into()))
}

/// Sets the caller's own counterparty filter (traders); in the action log.
#[utoipa::path(put, path = "/api/users/me/counterparty-filter", tag = "users",
    request_body = CounterpartyFilterRequest,
    responses((status = 200, body = CounterpartyFilterDto), BadRequest, Forbidden), security(("bearer" = [])))]
pub async fn set_own_filter<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiJson(req): ApiJson<CounterpartyFilterRequest>,
) -> ApiResult<Json<CounterpartyFilterDto>> {
    Ok(Json(st.engine.counterparties.set_own_filter(&actor, req.into()).await?.into()))
}
