//! The Orders panel and billing (admin spec sections 2, 3 and 7): every child order on the
//! venue, paged on the server, with the admin's limit-price correction; and both sides of
//! every trade.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use upstairs_domain::order::Direction;
use upstairs_domain::order::OrderState;
use upstairs_domain::{CompanyId, InstrumentId, OrderId};
use upstairs_engine::Store;
use upstairs_engine::model::{AdminOrder, AdminOrderFilter, BillingItem};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::AppState;
use crate::dto::{Page, decimal, decimal_schema, nullable_decimal_schema, request_decimal_schema, whole};
use crate::error::ApiResult;
use crate::error::responses::{BadRequest, Conflict, Forbidden, NotFound};
use crate::extract::{ApiJson, ApiPath, ApiQuery, Auth};
use crate::openapi::ApiRouter;
use crate::routes::orders::parse_list;

pub fn router<S: Store>() -> ApiRouter<S> {
    ApiRouter::new()
        .route::<__path_admin_orders, _, _>(admin_orders::<S>)
        .route::<__path_correct_order_price, _, _>(correct_order_price::<S>)
        .route::<__path_billing, _, _>(billing::<S>)
}

/// Who placed an order.
#[derive(Debug, Serialize, ToSchema)]
pub struct OrderCreatorDto {
    pub user_id: Uuid,
    pub email: String,
    pub company_id: Uuid,
    pub company_name: String,
}

/// A name and its id.
#[derive(Debug, Serialize, ToSchema)]
pub struct NamedRefDto {
    pub id: Uuid,
    pub name: String,
}

/// A child order as the Orders panel shows it (the admin order entity).
#[derive(Debug, Serialize, ToSchema)]
pub struct AdminOrderDto {
    pub order_id: Uuid,
    pub parent_order_id: Uuid,
    pub created_by: OrderCreatorDto,
    pub instrument: NamedRefDto,
    pub quantity: i64,
    pub direction: Direction,
    /// Null for an order an RFQ reserved and no accepted quote priced (awaiting the
    /// acceptance, or ended without a trade).
    #[serde(with = "rust_decimal::serde::arbitrary_precision_option")]
    #[schema(schema_with = nullable_decimal_schema, required = true)]
    pub price: Option<rust_decimal::Decimal>,
    /// The instrument's tick: the price is written with its decimals.
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub tick_size: rust_decimal::Decimal,
    /// Reserved by an RFQ (not worked in the book).
    pub rfq: bool,
    pub state: String,
    pub iceberg: bool,
    pub residual: bool,
    pub broker: NamedRefDto,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// An RFQ's order in these states never had a quote accepted: its stored price is a placeholder.
fn unpriced(state: OrderState) -> bool {
    matches!(
        state,
        OrderState::AwaitingRfqAcceptance | OrderState::Cancelled | OrderState::Expired | OrderState::Rejected
    )
}

impl From<AdminOrder> for AdminOrderDto {
    fn from(a: AdminOrder) -> Self {
        let o = a.order;
        Self {
            order_id: o.order_id.0,
            parent_order_id: o.parent_order_id.0,
            created_by: OrderCreatorDto {
                user_id: o.created_by.0,
                email: a.created_by_email,
                company_id: o.company_id.0,
                company_name: a.company_name,
            },
            instrument: NamedRefDto { id: o.instrument_id.0, name: a.instrument_name },
            quantity: o.quantity,
            direction: o.direction,
            price: (!(a.from_rfq && unpriced(o.state))).then(|| o.price.normalize()),
            tick_size: a.instrument_tick_size.normalize(),
            rfq: a.from_rfq,
            state: o.state.as_str().into(),
            iceberg: o.iceberg,
            residual: o.residual,
            broker: NamedRefDto { id: o.broker_id.0, name: a.broker_name },
            created_at: o.created_at,
            updated_at: o.updated_at,
        }
    }
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct AdminOrdersQuery {
    /// From 0 (default 0).
    #[serde(default, deserialize_with = "whole::query")]
    #[param(minimum = 0)]
    pub page: Option<i64>,
    /// Rows per page, 1 to 500 (default 50).
    #[serde(default, deserialize_with = "whole::query")]
    #[param(minimum = 1, maximum = 500)]
    pub size: Option<i64>,
    pub company_id: Option<Uuid>,
    pub instrument_id: Option<Uuid>,
    /// Order states, comma-separated (e.g. `WORKING,MATCHED`); all when absent.
    pub state: Option<String>,
    /// Created at or after this time.
    pub from: Option<DateTime<Utc>>,
    /// Created before this time.
    pub until: Option<DateTime<Utc>>,
}

/// Every child order on the venue, newest first, filtered and paged on the server (venue
/// admins and sales).
#[utoipa::path(get, path = "/api/admin/orders", tag = "admin", params(AdminOrdersQuery),
    responses((status = 200, body = Page<AdminOrderDto>), BadRequest, Forbidden), security(("bearer" = [])))]
pub async fn admin_orders<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiQuery(q): ApiQuery<AdminOrdersQuery>,
) -> ApiResult<Json<Page<AdminOrderDto>>> {
    let states = parse_list(q.state.as_deref(), OrderState::parse, "order")?;
    let filter = AdminOrderFilter {
        order_id: None,
        company_id: q.company_id.map(CompanyId),
        instrument_id: q.instrument_id.map(InstrumentId),
        states,
        from: q.from,
        until: q.until,
        page: q.page.unwrap_or(0),
        size: q.size.unwrap_or(50),
    };
    Ok(Json(st.engine.admin_orders.list(&actor, filter).await?.into()))
}

/// The limit-price correction.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CorrectPriceRequest {
    /// On the instrument's tick ('Invalid value' otherwise).
    #[serde(deserialize_with = "decimal::deserialize")]
    #[schema(schema_with = request_decimal_schema)]
    pub limit_price: rust_decimal::Decimal,
}

/// Corrects a working child order's limit price (venue admins only); its owner sees the
/// change at once.
#[utoipa::path(patch, path = "/api/admin/orders/{id}", tag = "admin", request_body = CorrectPriceRequest,
    params(("id" = Uuid, Path)),
    responses((status = 200, body = AdminOrderDto), BadRequest, Forbidden, NotFound, Conflict),
    security(("bearer" = [])))]
pub async fn correct_order_price<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<OrderId>,
    ApiJson(req): ApiJson<CorrectPriceRequest>,
) -> ApiResult<Json<AdminOrderDto>> {
    Ok(Json(st.engine.admin_orders.correct_order_price(&actor, id, req.limit_price).await?.into()))
}

/// One side of a trade (the billing item of admin spec section 3).
#[derive(Debug, Serialize, ToSchema)]
pub struct BillingItemDto {
    pub company_name: String,
    pub first_name: String,
    pub last_name: String,
    pub user_id: Uuid,
    pub broker_name: String,
    pub broker_id: Uuid,
    pub match_request_id: Uuid,
    pub order_id: Uuid,
    /// The parent order this side fills.
    pub payment_order_id: Uuid,
    pub match_request_created_at: DateTime<Utc>,
    pub instrument_name: String,
    #[schema(required = true)]
    pub bbg_code: Option<String>,
    #[schema(required = true)]
    pub exchange_instrument_id: Option<String>,
    pub exchange: String,
    pub exchange_iso_code: String,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub tick_size: rust_decimal::Decimal,
    pub term: String,
    pub direction: Direction,
    pub quantity: i64,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub price: rust_decimal::Decimal,
    /// How the side's trader split it across the firm's accounts (ADR 0045); empty when not.
    pub allocations: Vec<crate::routes::allocations::AllocationLineDto>,
    /// The broker it was given up to for clearing, if any.
    #[schema(required = true)]
    pub give_up_broker_name: Option<String>,
}

impl From<BillingItem> for BillingItemDto {
    fn from(b: BillingItem) -> Self {
        Self {
            company_name: b.company_name,
            first_name: b.first_name,
            last_name: b.last_name,
            user_id: b.user_id.0,
            broker_name: b.broker_name,
            broker_id: b.broker_id.0,
            match_request_id: b.match_request_id.0,
            order_id: b.order_id.0,
            payment_order_id: b.payment_order_id.0,
            match_request_created_at: b.match_request_created_at,
            instrument_name: b.instrument_name,
            bbg_code: b.bbg_code,
            exchange_instrument_id: b.exchange_instrument_id,
            exchange: b.exchange,
            exchange_iso_code: b.exchange_iso_code,
            tick_size: b.tick_size.normalize(),
            term: b.term,
            direction: b.direction,
            quantity: b.quantity,
            price: b.price.normalize(),
            allocations: b.allocations.into_iter().map(Into::into).collect(),
            give_up_broker_name: b.give_up_broker_name,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BillingDto {
    pub items: Vec<BillingItemDto>,
}

/// Both sides of every trade on the venue, newest first (venue admins and sales).
#[utoipa::path(get, path = "/api/billing", tag = "admin",
    responses((status = 200, body = BillingDto), Forbidden), security(("bearer" = [])))]
pub async fn billing<S: Store>(State(st): State<AppState<S>>, Auth(actor): Auth) -> ApiResult<Json<BillingDto>> {
    let items = st.engine.admin_orders.billing(&actor).await?.into_iter().map(Into::into).collect();
    Ok(Json(BillingDto { items }))
}
