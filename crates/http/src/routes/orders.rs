//! Parent orders, child orders, the book, market data and the platform status.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use upstairs_domain::order::OrderState;
use upstairs_domain::{InstrumentId, OrderId, ParentOrderId, UserId};
use upstairs_engine::Store;
use upstairs_engine::confirmations::Answer;
use upstairs_engine::model::{ConfirmationStep, MAX_ORDERS_LISTED, OrderFilter, ParentState};
use upstairs_engine::orders::{NewOrder, NewParentOrder, OrderEdit};

use crate::AppState;
use crate::dto::*;
use crate::error::responses::{BadRequest, Conflict, Forbidden, KeyReused, NotFound, TooManyRequests};
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiJson, ApiPath, ApiQuery, Auth, bearer};
use crate::idempotency::{IdempotencyKeyHeader, KeyedJson};
use crate::openapi::ApiRouter;

pub fn router<S: Store>() -> ApiRouter<S> {
    ApiRouter::new()
        .route::<__path_platform_status, _, _>(platform_status::<S>)
        .route::<__path_parent_orders, _, _>(parent_orders::<S>)
        .route::<__path_parent_order, _, _>(parent_order::<S>)
        .route::<__path_create_parent_order, _, _>(create_parent_order::<S>)
        .route::<__path_cancel_parent_order, _, _>(cancel_parent_order::<S>)
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
        trading_stopped_at,
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
        idempotency: key.clone(),
        fix_cl_ord_id: None,
    };
    let created = st.engine.orders.create_parent_order(&actor, input).await?;
    Ok((StatusCode::CREATED, Json(created.into())))
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
            (Some(yes), None) => Answer { step: ConfirmationStep::Accept, yes },
            (None, Some(yes)) => Answer { step: ConfirmationStep::Fill, yes },
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
    }))
}
