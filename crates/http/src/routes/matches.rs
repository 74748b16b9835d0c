//! Taking liquidity: the dry run, match requests and their answers (ADR 0015).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use upstairs_domain::match_request::MatchRequestState;
use upstairs_domain::notification::Party;
use upstairs_domain::order::Direction;
use upstairs_domain::{CompanyId, MatchRequestId, ParentOrderId};
use upstairs_engine::Store;
use upstairs_engine::matches::{Breakdown, Take, TakeOutcome};
use upstairs_engine::model::MatchRequest;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::AppState;
use crate::dto::{decimal, decimal_schema, request_decimal_schema, whole};
use crate::error::ApiResult;
use crate::error::responses::{BadRequest, Conflict, Forbidden, KeyReused, NotFound, TooManyRequests};
use crate::extract::{ApiJson, ApiPath, ApiQuery, Auth};
use crate::idempotency::{IdempotencyKeyHeader, KeyedJson};
use crate::openapi::ApiRouter;

pub fn router<S: Store>() -> ApiRouter<S> {
    ApiRouter::new()
        .route::<__path_create_match_request, _, _>(create_match_request::<S>)
        .route::<__path_match_requests, _, _>(match_requests::<S>)
        .route::<__path_match_request, _, _>(match_request::<S>)
        .route::<__path_answer_match_request, _, _>(answer_match_request::<S>)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MatchRequestRequest {
    pub requesting_parent_order_id: Uuid,
    #[serde(deserialize_with = "whole::deserialize")]
    #[schema(minimum = 0, maximum = 1_000_000_000_000_i64)]
    pub quantity: i64,
    #[serde(deserialize_with = "decimal::deserialize")]
    #[schema(schema_with = request_decimal_schema)]
    pub price: rust_decimal::Decimal,
    pub requesting_broker_id: Uuid,
    #[serde(default)]
    pub residual: bool,
    #[serde(default)]
    pub dry_run: bool,
}

/// One resting order a take would hit (the dry run): its price, how much of it, its
/// broker's name and whether it is an iceberg; nothing that names its firm.
#[derive(Debug, Serialize, ToSchema)]
pub struct BreakdownDto {
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub price: rust_decimal::Decimal,
    pub quantity: i64,
    pub responding_broker_name: String,
    pub responding_order_iceberg: bool,
}

impl From<Breakdown> for BreakdownDto {
    fn from(b: Breakdown) -> Self {
        Self {
            price: b.price,
            quantity: b.quantity,
            responding_broker_name: b.responding_broker_name,
            responding_order_iceberg: b.responding_order_iceberg,
        }
    }
}

/// A match request as one of its two parties sees it. `direction` is the caller's
/// side; nothing names the other party's firm, user or broker.
#[derive(Debug, Serialize, ToSchema)]
pub struct MatchRequestDto {
    pub order_match_request_id: Uuid,
    pub instrument_id: Uuid,
    pub role: Party,
    pub direction: Direction,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub price: rust_decimal::Decimal,
    pub quantity: i64,
    /// Whether the resting order is an iceberg.
    pub iceberg: bool,
    pub state: MatchRequestState,
    /// The caller's own child order in this match.
    pub order_id: Uuid,
    pub created_at: DateTime<Utc>,
    /// When it times out unless answered.
    pub expired_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The responder's own: when their match-request preference answers it unless they
    /// answer first. Null for the taker (another firm's preference is never told) and
    /// when the responder answers by hand.
    #[schema(required = true)]
    pub auto_answer_at: Option<DateTime<Utc>>,
    /// The responder's own: whether that preference accepts (true) or rejects (false).
    #[schema(required = true)]
    pub auto_accept: Option<bool>,
    /// It was answered by the responder's preference, not by hand (both sides are told).
    pub answered_automatically: bool,
}

impl MatchRequestDto {
    fn seen_by(m: MatchRequest, company: CompanyId) -> Self {
        let requester = m.requesting_company_id == company;
        Self {
            order_match_request_id: m.match_request_id.0,
            instrument_id: m.instrument_id.0,
            role: if requester { Party::Requester } else { Party::Responder },
            direction: if requester { m.direction } else { m.direction.opposite() },
            price: m.price.normalize(),
            quantity: m.quantity,
            iceberg: m.iceberg,
            state: m.state,
            order_id: if requester { m.requesting_order_id.0 } else { m.responding_order_id.0 },
            created_at: m.created_at,
            expired_at: m.expires_at,
            updated_at: m.updated_at,
            auto_answer_at: m.auto_answer.filter(|_| !requester).map(|a| a.at),
            auto_accept: m.auto_answer.filter(|_| !requester).map(|a| a.accept),
            answered_automatically: m.answered_automatically,
        }
    }
}

/// Takes resting liquidity: with `dry_run`, what would be hit (200); else one match request
/// per resting order hit (201), each pending until its responder answers.
#[utoipa::path(post, path = "/api/order-match-requests", tag = "matches", request_body = MatchRequestRequest,
    responses((status = 200, description = "The dry run", body = Vec<BreakdownDto>),
              (status = 201, description = "The match requests sent", body = Vec<MatchRequestDto>),
              BadRequest, Forbidden, NotFound, Conflict, KeyReused, TooManyRequests), params(IdempotencyKeyHeader), security(("bearer" = [])))]
pub async fn create_match_request<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    KeyedJson { body: req, key }: KeyedJson<MatchRequestRequest>,
) -> ApiResult<Response> {
    let take = Take {
        requesting_parent_order_id: ParentOrderId(req.requesting_parent_order_id),
        price: req.price,
        quantity: crate::dto::quantity("quantity", req.quantity)?,
        requesting_broker_id: CompanyId(req.requesting_broker_id),
        residual: req.residual,
        dry_run: req.dry_run,
        idempotency: key.clone().filter(|_| !req.dry_run),
    };
    let outcome = st.engine.matches.take(&actor, take).await?;
    Ok(match outcome {
        TakeOutcome::DryRun(hits) => Json(hits.into_iter().map(BreakdownDto::from).collect::<Vec<_>>()).into_response(),
        TakeOutcome::Requested(requests) => {
            let company = actor.user.company_id;
            let body: Vec<_> = requests.into_iter().map(|m| MatchRequestDto::seen_by(m, company)).collect();
            (StatusCode::CREATED, Json(body)).into_response()
        }
    })
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct MatchRequestQuery {
    /// Default `PENDING`.
    pub state: Option<MatchRequestState>,
}

/// The caller's match requests in a state (default `PENDING`), as taker or responder,
/// newest first.
#[utoipa::path(get, path = "/api/order-match-requests", tag = "matches", params(MatchRequestQuery),
    responses((status = 200, body = Vec<MatchRequestDto>)), security(("bearer" = [])))]
pub async fn match_requests<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiQuery(q): ApiQuery<MatchRequestQuery>,
) -> ApiResult<Json<Vec<MatchRequestDto>>> {
    let state = q.state.map_or(MatchRequestState::Pending, Into::into);
    let company = actor.user.company_id;
    let list = st.engine.matches.match_requests(&actor, state).await?;
    Ok(Json(list.into_iter().map(|m| MatchRequestDto::seen_by(m, company)).collect()))
}

/// One match request the caller's firm takes part in.
#[utoipa::path(get, path = "/api/order-match-requests/{id}", tag = "matches", params(("id" = Uuid, Path)),
    responses((status = 200, body = MatchRequestDto), NotFound), security(("bearer" = [])))]
pub async fn match_request<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<MatchRequestId>,
) -> ApiResult<Json<MatchRequestDto>> {
    let m = st.engine.matches.match_request(&actor, id).await?;
    Ok(Json(MatchRequestDto::seen_by(m, actor.user.company_id)))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerMatchRequest {
    /// `ACCEPTED` or `REJECTED` by the responder, `CANCELLED` by the taker.
    pub state: MatchRequestState,
}

/// The responder accepts or rejects; the taker withdraws.
#[utoipa::path(patch, path = "/api/order-match-requests/{id}", tag = "matches", request_body = AnswerMatchRequest,
    params(("id" = Uuid, Path)),
    responses((status = 200, body = MatchRequestDto), BadRequest, Forbidden, NotFound, Conflict, TooManyRequests),
    security(("bearer" = [])))]
pub async fn answer_match_request<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<MatchRequestId>,
    ApiJson(req): ApiJson<AnswerMatchRequest>,
) -> ApiResult<Json<MatchRequestDto>> {
    let m = st.engine.matches.answer_match_request(&actor, id, req.state).await?;
    Ok(Json(MatchRequestDto::seen_by(m, actor.user.company_id)))
}
