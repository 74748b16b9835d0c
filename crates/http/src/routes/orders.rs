//! Parent orders, child orders, the book, market data and the platform status.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use upstairs_domain::order::Direction;
use upstairs_domain::order::OrderState;
use upstairs_domain::{InstrumentId, OrderId, ParentOrderId, UserId};
use upstairs_engine::Store;
use upstairs_engine::confirmations::Answer;
use upstairs_engine::model::{ConfirmationStep, MAX_ORDERS_LISTED, OrderFilter, ParentState};
use upstairs_engine::orders::{NewOrder, NewParentOrder, OrderEdit};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::AppState;
use crate::dto::*;
use crate::error::responses::{BadRequest, Conflict, Forbidden, KeyReused, NotFound, TooManyRequests};
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiJson, ApiPath, ApiQuery, Auth, bearer};
use crate::idempotency::{IdempotencyKeyHeader, KeyedJson};
use crate::openapi::ApiRouter;
use crate::routes::exchanges::ExchangeStatusDto;
use crate::routes::reference::CompanyRefDto;

pub fn router<S: Store>() -> ApiRouter<S> {
    ApiRouter::new()
        .route::<__path_platform_status, _, _>(platform_status::<S>)
        .route::<__path_parent_orders, _, _>(parent_orders::<S>)
        .route::<__path_parent_order, _, _>(parent_order::<S>)
        .route::<__path_create_parent_order, _, _>(create_parent_order::<S>)
        .route::<__path_cancel_parent_order, _, _>(cancel_parent_order::<S>)
        .route::<__path_pull_ems_orders, _, _>(pull_ems_orders::<S>)
        .route::<__path_orders, _, _>(orders::<S>)
        .route::<__path_order, _, _>(order::<S>)
        .route::<__path_create_order, _, _>(create_order::<S>)
        .route::<__path_edit_order, _, _>(edit_order::<S>)
        .route::<__path_order_confirmation, _, _>(order_confirmation::<S>)
        .route::<__path_cancel_order, _, _>(cancel_order::<S>)
        .route::<__path_book, _, _>(book::<S>)
        .route::<__path_market_data, _, _>(market_data::<S>)
}

/// A comma-separated list of states (`WORKING,MATCHED`); an unknown one answers 400.
pub(crate) fn parse_list<T>(
    raw: Option<&str>,
    parse: impl Fn(&str) -> Option<T>,
    what: &str,
) -> Result<Vec<T>, ApiError> {
    raw.map(|s| s.split(',').map(str::trim).filter(|s| !s.is_empty()))
        .into_iter()
        .flatten()
        .map(|s| parse(s).ok_or_else(|| ApiError::bad_request(format!("Unknown {what} state: {s}"))))
        .collect()
}

/// Open flags and hours of the venue, and whether the caller's company is stopped.
#[utoipa::path(get, path = "/api/platform/status", tag = "orders",
    responses((status = 200, body = PlatformStatusDto)), security(("bearer" = [])))]
pub async fn platform_status<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
) -> ApiResult<Json<PlatformStatusDto>> {
    let s = st.engine.orders.platform_status();
    let c = &st.engine.config().calendar;
    let trading_stopped_at = st.engine.kill_switch.own_trading_stopped_since(&actor).await?;
    let exchanges = st.engine.exchanges.statuses().await?;
    Ok(Json(PlatformStatusDto {
        open: s.open,
        parent_orders_open: s.parent_orders_open,
        closing_soon: s.closing_soon,
        always_open: c.always_open,
        next_open: s.next_open,
        next_close: s.next_close,
        time_zone: c.time_zone.name().into(),
        open_time: c.open.format("%H:%M").to_string(),
        close_time: c.close.format("%H:%M").to_string(),
        parent_orders_from: c.parent_orders_from.format("%H:%M").to_string(),
        holiday: s.holiday.map(|h| HolidayDto { date: h.date, name: h.name }),
        trading_stopped_at,
        exchanges: exchanges.iter().map(|(e, s)| ExchangeStatusDto::new(e, s.clone())).collect(),
    }))
}

/// The company's parent orders, newest first (the newest 1,000 at most).
#[utoipa::path(get, path = "/api/parent-orders", tag = "orders", params(StateQuery),
    responses((status = 200, body = Vec<ParentOrderDto>), BadRequest), security(("bearer" = [])))]
pub async fn parent_orders<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiQuery(q): ApiQuery<StateQuery>,
) -> ApiResult<Json<Vec<ParentOrderDto>>> {
    let mut states = parse_list(q.state.as_deref(), ParentState::parse, "parent order")?;
    if states.is_empty() {
        states = vec![ParentState::Active, ParentState::Filled];
    }
    let list = st.engine.orders.parent_orders(&actor, &states).await?;
    Ok(Json(list.into_iter().map(Into::into).collect()))
}

#[utoipa::path(get, path = "/api/parent-orders/{id}", tag = "orders", params(("id" = Uuid, Path)),
    responses((status = 200, body = ParentOrderDto), NotFound), security(("bearer" = [])))]
pub async fn parent_order<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<ParentOrderId>,
) -> ApiResult<Json<ParentOrderDto>> {
    Ok(Json(st.engine.orders.parent_order(&actor, id).await?.into()))
}

/// Creates a parent order (from 05:30 on trading days).
#[utoipa::path(post, path = "/api/parent-orders", tag = "orders", request_body = CreateParentOrderRequest,
    params(IdempotencyKeyHeader),
    responses((status = 201, body = ParentOrderDto), BadRequest, Forbidden, NotFound,
              Conflict, KeyReused, TooManyRequests), security(("bearer" = [])))]
pub async fn create_parent_order<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    KeyedJson { body: req, key }: KeyedJson<CreateParentOrderRequest>,
) -> ApiResult<(StatusCode, Json<ParentOrderDto>)> {
    let input = NewParentOrder {
        direction: req.direction,
        instrument_id: InstrumentId(req.instrument_id),
        quantity: crate::dto::quantity("quantity", req.quantity)?,
        broker_instructions: req.broker_instructions,
        min_execution: crate::dto::quantity_option("min_execution", req.min_execution)?,
        idempotency: key.clone(),
        fix_cl_ord_id: None,
    };
    let created = st.engine.orders.create_parent_order(&actor, input).await?;
    Ok((StatusCode::CREATED, Json(created.into())))
}

/// A pull of the firm's execution system's working orders, as asked (ADR 0050).
#[derive(Debug, Serialize, ToSchema)]
pub struct EmsPullDto {
    /// The OrderMassStatusRequest's MassStatusReqID.
    pub request_id: String,
    pub requested_at: DateTime<Utc>,
}

/// Asks the firm's execution system, over its live FIX session, for its working orders;
/// they become parent orders of the traders they name as its answers arrive (pushed like
/// any new parent order). 409 when the execution system is not connected.
#[utoipa::path(post, path = "/api/parent-orders/execution-system-pulls", tag = "orders",
    responses((status = 202, body = EmsPullDto), Forbidden, Conflict), security(("bearer" = [])))]
pub async fn pull_ems_orders<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
) -> ApiResult<(StatusCode, Json<EmsPullDto>)> {
    let pull = st.engine.fix.pull_ems_orders(&actor).await?;
    Ok((StatusCode::ACCEPTED, Json(EmsPullDto { request_id: pull.request_id, requested_at: pull.requested_at })))
}

/// Cancels a parent order and its working child orders (refused once anything matched).
#[utoipa::path(delete, path = "/api/parent-orders/{id}", tag = "orders", params(("id" = Uuid, Path)),
    responses((status = 204), Forbidden, NotFound, Conflict, TooManyRequests), security(("bearer" = [])))]
pub async fn cancel_parent_order<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<ParentOrderId>,
) -> ApiResult<StatusCode> {
    st.engine.withdrawals.cancel_parent_order(&actor, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The company's child orders, newest first (the newest 1,000 at most).
#[utoipa::path(get, path = "/api/orders", tag = "orders", params(OrdersQuery),
    responses((status = 200, body = Vec<OrderDto>), BadRequest), security(("bearer" = [])))]
pub async fn orders<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiQuery(q): ApiQuery<OrdersQuery>,
) -> ApiResult<Json<Vec<OrderDto>>> {
    let filter = OrderFilter {
        company_id: None,
        instrument_id: q.instrument_id.map(InstrumentId),
        created_by: q.created_by.map(UserId),
        parent_order_id: q.parent_order_id.map(ParentOrderId),
        states: parse_list(q.state.as_deref(), OrderState::parse, "order")?,
        limit: Some(MAX_ORDERS_LISTED),
    };
    Ok(Json(st.engine.orders.orders(&actor, filter).await?.into_iter().map(Into::into).collect()))
}

#[utoipa::path(get, path = "/api/orders/{id}", tag = "orders", params(("id" = Uuid, Path)),
    responses((status = 200, body = OrderDto), NotFound), security(("bearer" = [])))]
pub async fn order<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<OrderId>,
) -> ApiResult<Json<OrderDto>> {
    Ok(Json(st.engine.orders.order(&actor, id).await?.into()))
}

/// Works part of a parent order in the book (while the venue is open).
#[utoipa::path(post, path = "/api/orders", tag = "orders", request_body = CreateOrderRequest,
    params(IdempotencyKeyHeader),
    responses((status = 201, body = OrderDto), BadRequest, Forbidden, NotFound,
              Conflict, KeyReused, TooManyRequests), security(("bearer" = [])))]
pub async fn create_order<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    KeyedJson { body: req, key }: KeyedJson<CreateOrderRequest>,
) -> ApiResult<(StatusCode, Json<OrderDto>)> {
    let price = req
        .limit_price
        .or(req.initial_price)
        .ok_or_else(|| ApiError::from(upstairs_engine::EngineError::invalid("limit_price", "Price is required")))?;
    let input = NewOrder {
        parent_order_id: ParentOrderId(req.parent_order_id),
        quantity: crate::dto::quantity("quantity", req.quantity)?,
        price,
        residual: req.residual,
        iceberg: req.iceberg,
        min_execution: crate::dto::quantity_option("min_execution", req.min_execution)?,
        broker_id: upstairs_domain::CompanyId(req.broker_id),
        instrument_id: req.instrument_id.map(InstrumentId),
        direction: req.direction,
        idempotency: key.clone(),
    };
    let created = st.engine.orders.create_order(&actor, input).await?;
    Ok((StatusCode::CREATED, Json(created.into())))
}

/// Changes a working order's quantity, price, residual or iceberg (signed in); or, with
/// the `token` of a broker's e-mail link and no session, records the broker's answer
/// (`{accepted}` or `{filled}`; 409 'Order already accepted' / 'Order already filled'
/// when it was given before, 400 for a link that is not this order's or has expired).
#[utoipa::path(patch, path = "/api/orders/{id}", tag = "orders", request_body = PatchOrderRequest,
    params(("id" = Uuid, Path), LinkTokenQuery),
    responses((status = 200, body = PatchOrderResponse), BadRequest, Forbidden, NotFound,
              Conflict, TooManyRequests), security(("bearer" = []), ()))]
pub async fn edit_order<S: Store>(
    State(st): State<AppState<S>>,
    ApiPath(id): ApiPath<OrderId>,
    ApiQuery(q): ApiQuery<LinkTokenQuery>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<serde_json::Value>,
) -> ApiResult<Json<PatchOrderResponse>> {
    if let Some(token) = q.token {
        let req: ConfirmOrderRequest = body_as(body)?;
        let answer = match (req.accepted, req.filled) {
            (Some(yes), None) => Answer { step: ConfirmationStep::Accept, yes, by_fix: false },
            (None, Some(yes)) => Answer { step: ConfirmationStep::Fill, yes, by_fix: false },
            _ => return Err(ApiError::bad_request("Send exactly one of accepted and filled.")),
        };
        let c = st.engine.confirmations.confirm_trade(id, &token, answer).await?;
        return Ok(Json(PatchOrderResponse::Confirmation(c.into())));
    }
    let token = bearer(&headers).ok_or_else(|| ApiError::unauthorized("Sign in to continue."))?;
    let actor = st.engine.accounts.authenticate(token).await?;
    let req: EditOrderRequest = body_as(body)?;
    let edit = OrderEdit {
        quantity: crate::dto::quantity_option("quantity", req.quantity)?,
        price: req.limit_price,
        residual: req.residual,
        iceberg: req.iceberg,
        min_execution: req.min_execution.map(|m| crate::dto::quantity_option("min_execution", m)).transpose()?,
    };
    Ok(Json(PatchOrderResponse::Order(st.engine.orders.edit_order(&actor, id, edit).await?.into())))
}

/// The trade a broker's e-mail link stands for, as the link's page shows it before the
/// broker answers. Changes nothing; no session.
#[utoipa::path(get, path = "/api/orders/{id}/confirmation", tag = "orders",
    params(("id" = Uuid, Path), ConfirmationQuery),
    responses((status = 200, body = OrderConfirmationDto), BadRequest), security(()))]
pub async fn order_confirmation<S: Store>(
    State(st): State<AppState<S>>,
    ApiPath(id): ApiPath<OrderId>,
    ApiQuery(q): ApiQuery<ConfirmationQuery>,
) -> ApiResult<Json<OrderConfirmationDto>> {
    Ok(Json(st.engine.confirmations.broker_confirmation(id, &q.token, q.step).await?.into()))
}

/// The body as the branch chosen by the query needs it: either shape is valid JSON for
/// the operation, so the other one is a bad request (400), not a malformed body.
fn body_as<T: serde::de::DeserializeOwned>(body: serde_json::Value) -> Result<T, ApiError> {
    serde_json::from_value(body).map_err(|e| {
        let message = e.to_string();
        crate::extract::unknown_field_error(&message)
            .unwrap_or_else(|| ApiError::bad_request(format!("The request body is not valid: {message}")))
    })
}

/// Cancels a working or awaiting-match order.
#[utoipa::path(delete, path = "/api/orders/{id}", tag = "orders", params(("id" = Uuid, Path)),
    responses((status = 200, body = OrderDto), Forbidden, NotFound, Conflict, TooManyRequests),
    security(("bearer" = [])))]
pub async fn cancel_order<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<OrderId>,
) -> ApiResult<Json<OrderDto>> {
    Ok(Json(st.engine.withdrawals.cancel_order(&actor, id).await?.into()))
}

/// The anonymous book of an instrument, with the caller's company's share marked.
#[utoipa::path(get, path = "/api/instruments/{id}/book", tag = "orders", params(("id" = Uuid, Path)),
    responses((status = 200, body = BookDto), NotFound), security(("bearer" = [])))]
pub async fn book<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<InstrumentId>,
) -> ApiResult<Response> {
    let b = st.engine.orders.book(&actor, id).await?;
    let body = st.books.body(&b, |b| {
        let dto = BookDto {
            instrument_id: b.instrument.instrument_id.0,
            min_tick_price: b.instrument.min_tick_price.normalize(),
            max_tick_price: b.instrument.max_tick_price.normalize(),
            prices_stale: b.instrument.prices_stale,
            levels: b
                .levels()
                .into_iter()
                .map(|l| LevelDto {
                    price: l.price,
                    buy_quantity: l.buy_quantity,
                    sell_quantity: l.sell_quantity,
                    own_buy_quantity: l.own_buy_quantity,
                    own_sell_quantity: l.own_sell_quantity,
                })
                .collect(),
        };
        serde_json::to_vec(&dto).expect("a book serialises").into()
    });
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// Best prices in the book (null when a side is empty) and the electronic band.
#[utoipa::path(get, path = "/api/instruments/{id}/market-data", tag = "orders", params(("id" = Uuid, Path)),
    responses((status = 200, body = MarketDataDto), NotFound), security(("bearer" = [])))]
pub async fn market_data<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<InstrumentId>,
) -> ApiResult<Json<MarketDataDto>> {
    let b = st.engine.orders.book(&actor, id).await?;
    Ok(Json(MarketDataDto {
        best_buy_price: b.best_buy(),
        best_sell_price: b.best_sell(),
        max_tick_price: b.instrument.max_tick_price.normalize(),
        min_tick_price: b.instrument.min_tick_price.normalize(),
        prices_stale: b.instrument.prices_stale,
    }))
}

/// `tradable = quantity − working − matched`.
#[derive(Debug, Serialize, ToSchema)]
pub struct QuantitiesDto {
    pub tradable: i64,
    pub working: i64,
    pub matched: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ParentOrderDto {
    pub parent_order_id: Uuid,
    pub instrument_id: Uuid,
    pub direction: Direction,
    pub quantity: i64,
    pub quantities: QuantitiesDto,
    /// ACTIVE, FILLED or CANCELLED.
    pub state: String,
    #[schema(required = true)]
    pub broker_instructions: Option<String>,
    /// The minimum execution size its child orders take when they name none (an
    /// execution system's MinQty); null for none.
    #[schema(required = true)]
    pub min_execution: Option<i64>,
    /// The brokers the child orders may name.
    pub eligible_brokers: Vec<CompanyRefDto>,
    pub created_by: Uuid,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<upstairs_engine::orders::ParentOrderDetail> for ParentOrderDto {
    fn from(d: upstairs_engine::orders::ParentOrderDetail) -> Self {
        let p = d.view.parent;
        Self {
            parent_order_id: p.parent_order_id.0,
            instrument_id: p.instrument_id.0,
            direction: p.direction,
            quantity: p.quantity,
            quantities: QuantitiesDto {
                tradable: d.quantities.tradable,
                working: d.quantities.working,
                matched: d.quantities.matched,
            },
            state: p.state.as_str().into(),
            broker_instructions: p.broker_instructions,
            min_execution: p.min_execution,
            eligible_brokers: d
                .eligible_brokers
                .into_iter()
                .map(|b| CompanyRefDto { company_id: b.company_id.0, name: b.name })
                .collect(),
            created_by: p.created_by.0,
            created_at: p.created_at,
            updated_at: p.updated_at,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateParentOrderRequest {
    /// Required ('Direction is required').
    pub direction: Option<Direction>,
    pub instrument_id: Uuid,
    #[serde(deserialize_with = "whole::deserialize")]
    #[schema(minimum = 0, maximum = 1_000_000_000_000_i64)]
    pub quantity: i64,
    pub broker_instructions: Option<String>,
    /// The minimum execution size of its child orders, from the instrument's block to the
    /// quantity (see `CreateOrderRequest.min_execution`).
    #[serde(default, deserialize_with = "whole::option")]
    #[schema(minimum = 0, maximum = 1_000_000_000_000_i64)]
    pub min_execution: Option<i64>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct StateQuery {
    /// Comma-separated states, e.g. `ACTIVE,FILLED`.
    pub state: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OrderDto {
    pub order_id: Uuid,
    pub parent_order_id: Uuid,
    pub instrument_id: Uuid,
    pub state: String,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub price: rust_decimal::Decimal,
    pub quantity: i64,
    pub direction: Direction,
    pub iceberg: bool,
    pub residual: bool,
    /// No take fills it below this size, but for a smaller remainder filled whole; null
    /// for none. Only its own company ever reads it.
    #[schema(required = true)]
    pub min_execution: Option<i64>,
    pub broker_id: Uuid,
    pub created_by: Uuid,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// False while the price is outside the instrument's current band, or before the open.
    pub matchable: bool,
    /// Worked before the open (from 05:30): it goes live at 09:00 by itself.
    pub waiting_for_open: bool,
}

impl From<upstairs_engine::orders::OrderDetail> for OrderDto {
    fn from(d: upstairs_engine::orders::OrderDetail) -> Self {
        let o = d.order;
        Self {
            order_id: o.order_id.0,
            parent_order_id: o.parent_order_id.0,
            instrument_id: o.instrument_id.0,
            state: o.state.as_str().into(),
            price: o.price.normalize(),
            quantity: o.quantity,
            direction: o.direction,
            iceberg: o.iceberg,
            residual: o.residual,
            min_execution: o.min_execution,
            broker_id: o.broker_id.0,
            created_by: o.created_by.0,
            created_at: o.created_at,
            updated_at: o.updated_at,
            matchable: d.matchable && o.state == upstairs_domain::order::OrderState::Working,
            waiting_for_open: d.waiting_for_open,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateOrderRequest {
    pub parent_order_id: Uuid,
    #[serde(deserialize_with = "whole::deserialize")]
    #[schema(minimum = 0, maximum = 1_000_000_000_000_i64)]
    pub quantity: i64,
    #[serde(default, deserialize_with = "decimal::option")]
    #[schema(schema_with = request_decimal_schema)]
    pub limit_price: Option<rust_decimal::Decimal>,
    /// Same as `limit_price` (the client sends one of the two).
    #[serde(default, deserialize_with = "decimal::option")]
    #[schema(schema_with = request_decimal_schema)]
    pub initial_price: Option<rust_decimal::Decimal>,
    #[serde(default)]
    pub residual: bool,
    #[serde(default)]
    pub iceberg: bool,
    /// The least one fill of it may be, from the instrument's block to the quantity
    /// ('Min block size: …', 'Must not exceed the quantity'); a remainder below it is
    /// filled whole. Absent or null: the parent's, if it has one.
    #[serde(default, deserialize_with = "whole::option")]
    #[schema(minimum = 0, maximum = 1_000_000_000_000_i64)]
    pub min_execution: Option<i64>,
    pub broker_id: Uuid,
    pub instrument_id: Option<Uuid>,
    pub direction: Option<Direction>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EditOrderRequest {
    #[serde(default, deserialize_with = "whole::option")]
    #[schema(minimum = 0, maximum = 1_000_000_000_000_i64)]
    pub quantity: Option<i64>,
    #[serde(default, deserialize_with = "decimal::option")]
    #[schema(schema_with = request_decimal_schema)]
    pub limit_price: Option<rust_decimal::Decimal>,
    pub residual: Option<bool>,
    pub iceberg: Option<bool>,
    /// The minimum execution size; null removes it.
    #[serde(default, deserialize_with = "whole::double_option")]
    #[schema(minimum = 0, maximum = 1_000_000_000_000_i64, nullable)]
    pub min_execution: Option<Option<i64>>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct OrdersQuery {
    pub instrument_id: Option<Uuid>,
    pub created_by: Option<Uuid>,
    pub parent_order_id: Option<Uuid>,
    /// Comma-separated child order states.
    pub state: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LevelDto {
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub price: rust_decimal::Decimal,
    pub buy_quantity: i64,
    pub sell_quantity: i64,
    /// The caller's company's part of the level.
    pub own_buy_quantity: i64,
    pub own_sell_quantity: i64,
}

/// The anonymous book: working quantity per price, best price first.
#[derive(Debug, Serialize, ToSchema)]
pub struct BookDto {
    pub instrument_id: Uuid,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub min_tick_price: rust_decimal::Decimal,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub max_tick_price: rust_decimal::Decimal,
    /// No recent exchange price: takes and accepts on it are refused until one comes (ADR 0048).
    pub prices_stale: bool,
    pub levels: Vec<LevelDto>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MarketDataDto {
    #[serde(with = "rust_decimal::serde::arbitrary_precision_option")]
    #[schema(required = true, schema_with = nullable_decimal_schema)]
    pub best_buy_price: Option<rust_decimal::Decimal>,
    #[serde(with = "rust_decimal::serde::arbitrary_precision_option")]
    #[schema(required = true, schema_with = nullable_decimal_schema)]
    pub best_sell_price: Option<rust_decimal::Decimal>,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub max_tick_price: rust_decimal::Decimal,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub min_tick_price: rust_decimal::Decimal,
    /// No recent exchange price: takes and accepts on it are refused until one comes (ADR 0048).
    pub prices_stale: bool,
}

/// Whether the venue is open, and its hours.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlatformStatusDto {
    /// Child orders, editing and matching.
    pub open: bool,
    /// Creating parent orders (the client's canCreateParentOrders).
    pub parent_orders_open: bool,
    /// At most 15 minutes to the close.
    pub closing_soon: bool,
    pub always_open: bool,
    #[schema(required = true)]
    pub next_open: Option<DateTime<Utc>>,
    #[schema(required = true)]
    pub next_close: Option<DateTime<Utc>>,
    pub time_zone: String,
    /// Local times, `HH:MM`.
    pub open_time: String,
    pub close_time: String,
    pub parent_orders_from: String,
    /// Today's holiday (the venue's time zone), when the venue is closed for one; null on
    /// any other day.
    #[schema(required = true)]
    pub holiday: Option<HolidayDto>,
    /// Since when the caller's company is stopped by the kill switch (new orders are
    /// refused); null while it trades.
    #[schema(required = true)]
    pub trading_stopped_at: Option<DateTime<Utc>>,
    /// Each exchange's calendar and status, by MIC (ADR 0052): an instrument whose
    /// `exchange_iso_code` is one of them follows it; the fields above are the venue's
    /// own calendar, which every other instrument follows.
    pub exchanges: Vec<crate::routes::exchanges::ExchangeStatusDto>,
}

/// A day the venue (or an exchange) is closed.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HolidayDto {
    pub date: chrono::NaiveDate,
    /// As configured ('Christmas Day'); null when none was given.
    #[schema(required = true)]
    pub name: Option<String>,
}

/// A broker's answer through its e-mail link: exactly one of the two.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfirmOrderRequest {
    /// The accept link's answer.
    pub accepted: Option<bool>,
    /// The fill link's answer.
    pub filled: Option<bool>,
}

/// `PATCH /api/orders/{id}`: a trader's edit (signed in), or a broker's answer (`?token=`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum PatchOrderRequest {
    Edit(EditOrderRequest),
    Confirm(ConfirmOrderRequest),
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum PatchOrderResponse {
    Order(OrderDto),
    Confirmation(OrderConfirmationDto),
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct LinkTokenQuery {
    /// The token of a broker's e-mail link.
    pub token: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ConfirmationQuery {
    /// The token of a broker's e-mail link.
    pub token: String,
    /// Which link: `ACCEPT` (`/accept-order`) or `FILL` (`/fill-order`).
    pub step: ConfirmationStep,
}

/// A trade as its broker's link shows it: the client's side, and the other side's broker.
#[derive(Debug, Serialize, ToSchema)]
pub struct OrderConfirmationDto {
    pub order_id: Uuid,
    pub step: ConfirmationStep,
    /// The order's state now.
    pub state: String,
    /// The broker's answer to this step; null while open.
    pub answer: Option<bool>,
    pub broker_name: String,
    pub client_name: String,
    pub trader_name: String,
    pub instrument_name: String,
    pub direction: Direction,
    pub quantity: i64,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub price: rust_decimal::Decimal,
    pub counterparty_broker_name: String,
    pub matched_at: DateTime<Utc>,
}

impl From<upstairs_engine::confirmations::TradeConfirmation> for OrderConfirmationDto {
    fn from(c: upstairs_engine::confirmations::TradeConfirmation) -> Self {
        let t = c.trade;
        Self {
            order_id: c.order_id.0,
            step: c.step,
            state: c.state.as_str().into(),
            answer: c.answer,
            broker_name: t.broker_name,
            client_name: t.client_name,
            trader_name: t.trader_name,
            instrument_name: t.instrument_name,
            direction: t.direction,
            quantity: t.quantity,
            price: t.price.normalize(),
            counterparty_broker_name: t.counterparty_broker_name,
            matched_at: t.matched_at,
        }
    }
}
