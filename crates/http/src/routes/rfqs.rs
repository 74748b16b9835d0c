//! Requests for quote: the requester's RFQs and the providers' responses (ADR 0020).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use upstairs_domain::order::Direction;
use upstairs_domain::rfq::{DEFAULT_DEADLINE_MINUTES, ResponseState, RfqState};
use upstairs_domain::{CompanyId, InstrumentId, ParentOrderId, RfqId, RfqResponseId};
use upstairs_engine::model::{QuoteSide, RfqResponse};
use upstairs_engine::rfqs::{Answer, IncomingRfq, NewRfq, RfqView};
use upstairs_engine::{EngineError, Store};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::AppState;
use crate::dto::{decimal, nullable_decimal_schema, nullable_request_decimal_schema, whole};
use crate::error::responses::{BadRequest, Conflict, Forbidden, KeyReused, NotFound, TooManyRequests};
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiJson, ApiPath, ApiQuery, Auth};
use crate::idempotency::{IdempotencyKeyHeader, KeyedJson};
use crate::openapi::ApiRouter;

pub fn router<S: Store>() -> ApiRouter<S> {
    ApiRouter::new()
        .route::<__path_create_rfq, _, _>(create_rfq::<S>)
        .route::<__path_rfqs, _, _>(rfqs::<S>)
        .route::<__path_rfq, _, _>(rfq::<S>)
        .route::<__path_cancel_rfq, _, _>(cancel_rfq::<S>)
        .route::<__path_incoming_rfqs, _, _>(incoming_rfqs::<S>)
        .route::<__path_answer_rfq, _, _>(answer_rfq::<S>)
        .route::<__path_accept_quote, _, _>(accept_quote::<S>)
}

/// One provider's response: its quote once given. `buy_*` is the provider buying (the
/// requester sells), `sell_*` the provider selling.
#[derive(Debug, Serialize, ToSchema)]
pub struct RfqResponseDto {
    pub rfq_response_id: Uuid,
    pub rfq_id: Uuid,
    pub state: ResponseState,
    /// The provider's name.
    pub company_name: String,
    #[serde(with = "rust_decimal::serde::arbitrary_precision_option")]
    #[schema(schema_with = nullable_decimal_schema)]
    pub buy_price: Option<Decimal>,
    pub buy_quantity: Option<i64>,
    #[serde(with = "rust_decimal::serde::arbitrary_precision_option")]
    #[schema(schema_with = nullable_decimal_schema)]
    pub sell_price: Option<Decimal>,
    pub sell_quantity: Option<i64>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl RfqResponseDto {
    fn new(r: RfqResponse, company_name: String) -> Self {
        Self {
            rfq_response_id: r.rfq_response_id.0,
            rfq_id: r.rfq_id.0,
            state: r.state,
            company_name,
            buy_price: r.buy.map(|s| s.price.normalize()),
            buy_quantity: r.buy.map(|s| s.quantity),
            sell_price: r.sell.map(|s| s.price.normalize()),
            sell_quantity: r.sell.map(|s| s.quantity),
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

/// An RFQ as its requester sees it (spec section 3), with every response.
#[derive(Debug, Serialize, ToSchema)]
pub struct RfqDto {
    pub rfq_id: Uuid,
    pub parent_order_id: Uuid,
    /// The child order reserving the quantity, then matched when a quote is accepted.
    pub order_id: Uuid,
    pub instrument_id: Uuid,
    pub direction: Direction,
    pub quantity: i64,
    pub two_way: bool,
    pub anonymous: bool,
    pub state: RfqState,
    pub liquidity_provider_ids: Vec<Uuid>,
    pub responses_ids: Vec<Uuid>,
    pub responses: Vec<RfqResponseDto>,
    pub created_at: DateTime<Utc>,
    /// The deadline.
    pub expired_at: DateTime<Utc>,
    /// Whole seconds left until the deadline when this was read; 0 once passed.
    pub expires_in_seconds: i64,
}

impl RfqDto {
    pub(crate) fn new(v: RfqView, now: DateTime<Utc>) -> Self {
        let r = v.rfq;
        Self {
            rfq_id: r.rfq_id.0,
            parent_order_id: r.parent_order_id.0,
            order_id: r.order_id.0,
            instrument_id: r.instrument_id.0,
            direction: r.direction,
            quantity: r.quantity,
            two_way: r.two_way,
            anonymous: r.anonymous,
            state: r.state,
            liquidity_provider_ids: v.responses.iter().map(|(x, _)| x.company_id.0).collect(),
            responses_ids: v.responses.iter().map(|(x, _)| x.rfq_response_id.0).collect(),
            responses: v.responses.into_iter().map(|(x, name)| RfqResponseDto::new(x, name)).collect(),
            created_at: r.created_at,
            expired_at: r.expires_at,
            expires_in_seconds: seconds_left(r.expires_at, now),
        }
    }
}

/// An RFQ addressed to the caller's company: never the requester's parent, order or
/// user; their company only when the RFQ is not anonymous; the direction only of a
/// one-way RFQ.
#[derive(Debug, Serialize, ToSchema)]
pub struct IncomingRfqDto {
    pub rfq_id: Uuid,
    pub instrument_id: Uuid,
    /// The requester's side; null for a two-way RFQ.
    pub direction: Option<Direction>,
    pub quantity: i64,
    pub two_way: bool,
    /// Null when the RFQ is anonymous.
    pub requester_company_name: Option<String>,
    pub state: RfqState,
    pub created_at: DateTime<Utc>,
    pub expired_at: DateTime<Utc>,
    pub expires_in_seconds: i64,
    /// The caller's company's own response.
    pub response: RfqResponseDto,
}

impl IncomingRfqDto {
    pub(crate) fn new(i: IncomingRfq, own_name: String, now: DateTime<Utc>) -> Self {
        Self {
            rfq_id: i.rfq_id.0,
            instrument_id: i.instrument_id.0,
            direction: i.direction,
            quantity: i.quantity,
            two_way: i.two_way,
            requester_company_name: i.requester_name,
            state: i.state,
            created_at: i.created_at,
            expired_at: i.expires_at,
            expires_in_seconds: seconds_left(i.expires_at, now),
            response: RfqResponseDto::new(i.response, own_name),
        }
    }
}

fn seconds_left(deadline: DateTime<Utc>, now: DateTime<Utc>) -> i64 {
    (deadline - now).num_seconds().max(0)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateRfqRequest {
    pub parent_order_id: Uuid,
    #[serde(deserialize_with = "whole::deserialize")]
    #[schema(minimum = 0, maximum = 1_000_000_000_000_i64)]
    pub quantity: i64,
    /// At least one liquidity provider.
    pub liquidity_provider_ids: Vec<Uuid>,
    #[serde(default)]
    pub two_way: bool,
    /// Hide the requester's company from the providers.
    #[serde(default)]
    pub anonymous: bool,
    /// A whole number of minutes from 1 to 15, in seconds; default 2 minutes.
    #[serde(default, deserialize_with = "whole::option")]
    pub expires_in_seconds: Option<i64>,
    /// The requester's broker for the trade; the company's default when absent.
    pub broker_id: Option<Uuid>,
}

/// Sends an RFQ to chosen liquidity providers; its quantity is reserved from the parent.
#[utoipa::path(post, path = "/api/rfqs", tag = "rfqs", request_body = CreateRfqRequest,
    params(IdempotencyKeyHeader),
    responses((status = 201, body = RfqDto), BadRequest, Forbidden, NotFound, Conflict, KeyReused, TooManyRequests),
    security(("bearer" = [])))]
pub async fn create_rfq<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    KeyedJson { body: req, key }: KeyedJson<CreateRfqRequest>,
) -> ApiResult<(StatusCode, Json<RfqDto>)> {
    let input = NewRfq {
        parent_order_id: ParentOrderId(req.parent_order_id),
        quantity: crate::dto::quantity("quantity", req.quantity)?,
        two_way: req.two_way,
        anonymous: req.anonymous,
        liquidity_provider_ids: req.liquidity_provider_ids.into_iter().map(CompanyId).collect(),
        expires_in_seconds: req.expires_in_seconds.unwrap_or(DEFAULT_DEADLINE_MINUTES * 60),
        broker_id: req.broker_id.map(CompanyId),
        idempotency: key.clone(),
    };
    let v = st.engine.rfqs.create_rfq(&actor, input).await?;
    Ok((StatusCode::CREATED, Json(RfqDto::new(v, st.engine.clock().now()))))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct RfqQuery {
    /// Default `OPEN`.
    pub state: Option<RfqState>,
    pub parent_order_id: Option<Uuid>,
}

/// The caller's company's RFQs in a state (default `OPEN`), of one parent order when
/// given, newest first, each with its responses.
#[utoipa::path(get, path = "/api/rfqs", tag = "rfqs", params(RfqQuery),
    responses((status = 200, body = Vec<RfqDto>), BadRequest), security(("bearer" = [])))]
pub async fn rfqs<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiQuery(q): ApiQuery<RfqQuery>,
) -> ApiResult<Json<Vec<RfqDto>>> {
    let state = q.state.map_or(RfqState::Open, Into::into);
    let list = st.engine.rfqs.rfqs(&actor, state, q.parent_order_id.map(ParentOrderId)).await?;
    let now = st.engine.clock().now();
    Ok(Json(list.into_iter().map(|v| RfqDto::new(v, now)).collect()))
}

/// One RFQ of the caller's company.
#[utoipa::path(get, path = "/api/rfqs/{id}", tag = "rfqs", params(("id" = Uuid, Path)),
    responses((status = 200, body = RfqDto), BadRequest, NotFound), security(("bearer" = [])))]
pub async fn rfq<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<RfqId>,
) -> ApiResult<Json<RfqDto>> {
    let v = st.engine.rfqs.rfq(&actor, id).await?;
    Ok(Json(RfqDto::new(v, st.engine.clock().now())))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangeRfqRequest {
    /// `CANCELLED`: the requester withdraws the RFQ.
    pub state: RfqState,
}

/// The requester withdraws an open RFQ; its quantity returns to the parent.
#[utoipa::path(patch, path = "/api/rfqs/{id}", tag = "rfqs", request_body = ChangeRfqRequest,
    params(("id" = Uuid, Path)),
    responses((status = 200, body = RfqDto), BadRequest, Forbidden, NotFound, Conflict, TooManyRequests), security(("bearer" = [])))]
pub async fn cancel_rfq<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<RfqId>,
    ApiJson(req): ApiJson<ChangeRfqRequest>,
) -> ApiResult<Json<RfqDto>> {
    if req.state != RfqState::Cancelled {
        return Err(ApiError::from(EngineError::invalid("state", "Must be CANCELLED")));
    }
    let v = st.engine.rfqs.cancel_rfq(&actor, id).await?;
    Ok(Json(RfqDto::new(v, st.engine.clock().now())))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct IncomingQuery {
    pub instrument_id: Option<Uuid>,
    /// The state of the caller's response. Without it: the open ones (`AWAITING_RESPONSE`
    /// and `RESPONDED`), then the ended ones of RFQs sent since the start of the venue's
    /// day (Europe/London), so that a provider sees what became of their quotes.
    pub state: Option<ResponseState>,
}

/// For liquidity providers: the RFQs addressed to the caller's company whose response is
/// in a state (by default the open ones, then today's ended ones), on one instrument when
/// given, newest first.
#[utoipa::path(get, path = "/api/rfqs/all/responses", tag = "rfqs", params(IncomingQuery),
    responses((status = 200, body = Vec<IncomingRfqDto>), BadRequest), security(("bearer" = [])))]
pub async fn incoming_rfqs<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiQuery(q): ApiQuery<IncomingQuery>,
) -> ApiResult<Json<Vec<IncomingRfqDto>>> {
    let list = st.engine.rfqs.incoming_rfqs(&actor, q.state, q.instrument_id.map(InstrumentId)).await?;
    let now = st.engine.clock().now();
    let own = actor.company_name.clone();
    Ok(Json(list.into_iter().map(|i| IncomingRfqDto::new(i, own.clone(), now)).collect()))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerRfqRequest {
    /// `REJECTED_BY_RESPONDER` declines; absent, the body is a quote.
    pub state: Option<ResponseState>,
    #[serde(default, deserialize_with = "decimal::option")]
    #[schema(schema_with = nullable_request_decimal_schema)]
    pub buy_price: Option<Decimal>,
    #[serde(default, deserialize_with = "whole::option")]
    #[schema(minimum = 0, maximum = 1_000_000_000_000_i64)]
    pub buy_quantity: Option<i64>,
    #[serde(default, deserialize_with = "decimal::option")]
    #[schema(schema_with = nullable_request_decimal_schema)]
    pub sell_price: Option<Decimal>,
    #[serde(default, deserialize_with = "whole::option")]
    #[schema(minimum = 0, maximum = 1_000_000_000_000_i64)]
    pub sell_quantity: Option<i64>,
    /// The provider's broker for the trade; the company's default when absent.
    pub broker_id: Option<Uuid>,
}

/// A liquidity provider quotes on an RFQ addressed to their company (again, until a
/// quote is accepted), or declines it with `state: REJECTED_BY_RESPONDER`.
#[utoipa::path(post, path = "/api/rfqs/{id}/responses", tag = "rfqs", request_body = AnswerRfqRequest,
    params(("id" = Uuid, Path), IdempotencyKeyHeader),
    responses((status = 200, body = RfqResponseDto), BadRequest, Forbidden, NotFound, Conflict, KeyReused, TooManyRequests),
    security(("bearer" = [])))]
pub async fn answer_rfq<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<RfqId>,
    KeyedJson { body: req, key }: KeyedJson<AnswerRfqRequest>,
) -> ApiResult<Json<RfqResponseDto>> {
    let answer = match req.state {
        Some(ResponseState::RejectedByResponder) => Answer::Decline,
        Some(_) => {
            return Err(ApiError::from(EngineError::invalid(
                "state",
                "Must be REJECTED_BY_RESPONDER, or absent to quote",
            )));
        }
        None => {
            let side = |price: Option<Decimal>, quantity: Option<i64>, name: &str| match (price, quantity) {
                (Some(price), Some(quantity)) => {
                    let quantity = crate::dto::quantity(&format!("{name}_quantity"), quantity)?.get();
                    Ok(Some(QuoteSide { price, quantity }))
                }
                (None, None) => Ok(None),
                (Some(_), None) => Err(ApiError::from(EngineError::invalid(&format!("{name}_quantity"), "Required"))),
                (None, Some(_)) => Err(ApiError::from(EngineError::invalid(&format!("{name}_price"), "Required"))),
            };
            Answer::Quote {
                buy: side(req.buy_price, req.buy_quantity, "buy")?,
                sell: side(req.sell_price, req.sell_quantity, "sell")?,
                broker_id: req.broker_id.map(CompanyId),
            }
        }
    };
    let r = st.engine.rfqs.answer_rfq(&actor, id, answer, key).await?;
    Ok(Json(RfqResponseDto::new(r, actor.company_name.clone())))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AcceptQuoteRequest {
    /// `ACCEPTED`.
    pub state: ResponseState,
    /// The quote's price as the requester saw it (the side they trade against); when
    /// given with `quantity`, a quote changed since is refused (409) instead of matched.
    #[serde(default, deserialize_with = "decimal::option")]
    #[schema(schema_with = nullable_request_decimal_schema)]
    pub price: Option<Decimal>,
    /// The quote's quantity as the requester saw it; see `price`.
    #[serde(default, deserialize_with = "whole::option")]
    pub quantity: Option<i64>,
}

/// The requester accepts one received quote while the RFQ is open: the trade is matched
/// at its price and quantity (the ones the requester saw, when sent: a requote since is
/// refused), the other responses are rejected, and both brokers are asked to confirm.
#[utoipa::path(patch, path = "/api/rfqs/{id}/responses/{response_id}", tag = "rfqs",
    request_body = AcceptQuoteRequest,
    params(("id" = Uuid, Path), ("response_id" = Uuid, Path)),
    responses((status = 200, body = RfqDto), BadRequest, Forbidden, NotFound, Conflict, TooManyRequests), security(("bearer" = [])))]
pub async fn accept_quote<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath((id, response_id)): ApiPath<(RfqId, RfqResponseId)>,
    ApiJson(req): ApiJson<AcceptQuoteRequest>,
) -> ApiResult<Json<RfqDto>> {
    if req.state != ResponseState::Accepted {
        return Err(ApiError::from(EngineError::invalid("state", "Must be ACCEPTED")));
    }
    let seen = match (req.price, req.quantity) {
        (Some(price), Some(quantity)) => Some(QuoteSide { price, quantity }),
        (None, None) => None,
        (Some(_), None) => return Err(ApiError::from(EngineError::invalid("quantity", "Required with price"))),
        (None, Some(_)) => return Err(ApiError::from(EngineError::invalid("price", "Required with quantity"))),
    };
    let v = st.engine.rfqs.accept_quote(&actor, id, response_id, seen).await?;
    Ok(Json(RfqDto::new(v, st.engine.clock().now())))
}
