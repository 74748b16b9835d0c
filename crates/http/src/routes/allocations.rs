//! Allocations and give-ups (issue 29, ADR 0045): a company's accounts, and how a trader
//! splits a trade across them.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use upstairs_domain::{CompanyId, OrderId};
use upstairs_engine::Store;
use upstairs_engine::allocations::{AccountChanges, AccountInput, AllocationInput, AllocationView, LineInput};
use upstairs_engine::model::{AllocationAck, AllocationLine, CompanyAccount};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::AppState;
use crate::dto::whole;
use crate::error::ApiResult;
use crate::error::responses::{BadRequest, Conflict, Forbidden, NotFound};
use crate::extract::{ApiJson, ApiPath, Auth};
use crate::openapi::ApiRouter;
use crate::routes::reference::CompanyRefDto;

pub fn router<S: Store>() -> ApiRouter<S> {
    ApiRouter::new()
        .route::<__path_company_accounts, _, _>(company_accounts::<S>)
        .route::<__path_create_account, _, _>(create_account::<S>)
        .route::<__path_update_account, _, _>(update_account::<S>)
        .route::<__path_allocations, _, _>(allocations::<S>)
        .route::<__path_allocation, _, _>(allocation::<S>)
        .route::<__path_allocate, _, _>(allocate::<S>)
}

/// One of a company's accounts: the code its brokers book to, a name, and whether
/// trades may still be allocated to it.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccountDto {
    pub account_id: Uuid,
    pub company_id: Uuid,
    pub code: String,
    pub name: String,
    pub active: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<CompanyAccount> for AccountDto {
    fn from(a: CompanyAccount) -> Self {
        Self {
            account_id: a.account_id,
            company_id: a.company_id.0,
            code: a.code,
            name: a.name,
            active: a.active,
            created_at: a.created_at,
            updated_at: a.updated_at,
        }
    }
}

/// A new account: its code (1 to 32 letters, digits, '.', '_', '-' or '/', once per
/// company) and its name (1 to 100 characters).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateAccountRequest {
    #[schema(min_length = 1, max_length = 32)]
    pub code: String,
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
}

/// What changes of an account: its name, whether it is open to new allocations.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateAccountRequest {
    #[serde(default)]
    #[schema(min_length = 1, max_length = 100)]
    pub name: Option<String>,
    #[serde(default)]
    pub active: Option<bool>,
}

/// One account's part of a trade.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AllocationLineDto {
    pub account_id: Uuid,
    /// The account's code and name when allocated.
    pub code: String,
    pub name: String,
    pub quantity: i64,
}

impl From<AllocationLine> for AllocationLineDto {
    fn from(l: AllocationLine) -> Self {
        Self { account_id: l.account_id, code: l.code, name: l.name, quantity: l.quantity }
    }
}

/// How a trade is split across the firm's accounts, the broker it is given up to, and
/// the executing broker's answer to this version (PENDING until it answers over FIX).
#[derive(Debug, Serialize, ToSchema)]
pub struct AllocationDto {
    pub order_id: Uuid,
    pub version: i64,
    pub lines: Vec<AllocationLineDto>,
    #[schema(required = true)]
    pub give_up_broker: Option<CompanyRefDto>,
    #[schema(value_type = String, example = "PENDING")]
    pub broker_ack: AllocationAck,
    #[schema(required = true)]
    pub broker_ack_text: Option<String>,
    pub updated_at: DateTime<Utc>,
}

impl From<AllocationView> for AllocationDto {
    fn from(v: AllocationView) -> Self {
        let a = v.allocation;
        Self {
            order_id: a.order_id.0,
            version: a.version,
            lines: a.lines.into_iter().map(Into::into).collect(),
            give_up_broker: v.give_up_broker.map(|c| CompanyRefDto { company_id: c.company_id.0, name: c.name }),
            broker_ack: a.ack,
            broker_ack_text: a.ack_text,
            updated_at: a.updated_at,
        }
    }
}

/// One account's part as the trader asks for it (at least 1).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AllocationLineRequest {
    pub account_id: Uuid,
    #[serde(deserialize_with = "whole::deserialize")]
    #[schema(minimum = 1)]
    pub quantity: i64,
}

/// A trade's allocation, whole: 1 to 50 of the firm's open accounts, each once, whose
/// quantities add up to the trade's; and the broker it is given up to (one of the firm's
/// brokers other than the executing one), or null.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AllocationRequest {
    pub lines: Vec<AllocationLineRequest>,
    #[serde(default)]
    pub give_up_broker_id: Option<Uuid>,
}

/// A company's accounts: every one for the venue's staff, the open ones for its own
/// people (another firm finds no such company).
#[utoipa::path(get, path = "/api/companies/{id}/accounts", tag = "companies", params(("id" = Uuid, Path)),
    responses((status = 200, body = Vec<AccountDto>), NotFound), security(("bearer" = [])))]
pub async fn company_accounts<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<CompanyId>,
) -> ApiResult<Json<Vec<AccountDto>>> {
    let accounts = st.engine.allocations.accounts(&actor, id).await?;
    Ok(Json(accounts.into_iter().map(Into::into).collect()))
}

/// Opens an account for a company (venue admins); in the action log.
#[utoipa::path(post, path = "/api/admin/companies/{id}/accounts", tag = "admin", params(("id" = Uuid, Path)),
    request_body = CreateAccountRequest,
    responses((status = 201, body = AccountDto), BadRequest, Forbidden, NotFound, Conflict), security(("bearer" = [])))]
pub async fn create_account<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<CompanyId>,
    ApiJson(req): ApiJson<CreateAccountRequest>,
) -> ApiResult<(StatusCode, Json<AccountDto>)> {
    let input = AccountInput { code: req.code, name: req.name };
    Ok((StatusCode::CREATED, Json(st.engine.allocations.create_account(&actor, id, input).await?.into())))
}

/// Renames an account, or closes (reopens) it to new allocations (venue admins); in the
/// action log. Its code never changes: the brokers book to it.
#[utoipa::path(patch, path = "/api/admin/companies/{id}/accounts/{account_id}", tag = "admin",
    params(("id" = Uuid, Path), ("account_id" = Uuid, Path)),
    request_body = UpdateAccountRequest,
    responses((status = 200, body = AccountDto), BadRequest, Forbidden, NotFound), security(("bearer" = [])))]
pub async fn update_account<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath((id, account_id)): ApiPath<(CompanyId, Uuid)>,
    ApiJson(req): ApiJson<UpdateAccountRequest>,
) -> ApiResult<Json<AccountDto>> {
    let changes = AccountChanges { name: req.name, active: req.active };
    Ok(Json(st.engine.allocations.update_account(&actor, id, account_id, changes).await?.into()))
}

/// The allocations of the caller's own trades, the latest first: the screens show each
/// beside its trade, and `/user/topic/orders` pushes each change (`ALLOCATION_UPDATED`).
#[utoipa::path(get, path = "/api/allocations", tag = "orders",
    responses((status = 200, body = Vec<AllocationDto>)), security(("bearer" = [])))]
pub async fn allocations<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
) -> ApiResult<Json<Vec<AllocationDto>>> {
    Ok(Json(st.engine.allocations.allocations(&actor).await?.into_iter().map(AllocationDto::from).collect()))
}

/// The allocation of one of the caller's trades (404 when it has none).
#[utoipa::path(get, path = "/api/orders/{order_id}/allocation", tag = "orders", params(("order_id" = Uuid, Path)),
    responses((status = 200, body = AllocationDto), NotFound), security(("bearer" = [])))]
pub async fn allocation<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<OrderId>,
) -> ApiResult<Json<AllocationDto>> {
    Ok(Json(st.engine.allocations.allocation(&actor, id).await?.into()))
}

/// Splits one of the caller's trades across the firm's accounts and names its give-up
/// broker, before or after the broker accepts it and until the fill is confirmed (409
/// after). Each call replaces the allocation before and is sent to the executing broker
/// (AllocationInstruction over FIX, e-mail); in the action log.
#[utoipa::path(put, path = "/api/orders/{order_id}/allocation", tag = "orders", params(("order_id" = Uuid, Path)),
    request_body = AllocationRequest,
    responses((status = 200, body = AllocationDto), BadRequest, Forbidden, NotFound, Conflict), security(("bearer" = [])))]
pub async fn allocate<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<OrderId>,
    ApiJson(req): ApiJson<AllocationRequest>,
) -> ApiResult<Json<AllocationDto>> {
    let input = AllocationInput {
        lines: req.lines.into_iter().map(|l| LineInput { account_id: l.account_id, quantity: l.quantity }).collect(),
        give_up_broker_id: req.give_up_broker_id.map(CompanyId),
    };
    Ok(Json(st.engine.allocations.allocate(&actor, id, input).await?.into()))
}
