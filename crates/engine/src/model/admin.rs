//! The admin area's Orders panel and billing.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use upstairs_domain::order::{Direction, OrderState};
use upstairs_domain::{CompanyId, InstrumentId, MatchRequestId, OrderId, ParentOrderId, UserId};

use super::*;

/// The Orders panel's filters and page (admin spec section 2); every filter optional.
#[derive(Clone, Debug, Default)]
pub struct AdminOrderFilter {
    pub order_id: Option<OrderId>,
    pub company_id: Option<CompanyId>,
    pub instrument_id: Option<InstrumentId>,
    pub states: Vec<OrderState>,
    /// Created at or after.
    pub from: Option<DateTime<Utc>>,
    /// Created before.
    pub until: Option<DateTime<Utc>>,
    pub page: i64,
    pub size: i64,
}

/// A child order as the Orders panel lists it: with who placed it, for which company,
/// on which instrument, through which broker.
#[derive(Clone, Debug, PartialEq)]
pub struct AdminOrder {
    pub order: ChildOrder,
    pub created_by_email: String,
    pub company_name: String,
    pub instrument_name: String,
    /// The instrument's tick now, to write the price with its decimals.
    pub instrument_tick_size: rust_decimal::Decimal,
    /// Reserved by an RFQ: its price is set only when a quote is accepted.
    pub from_rfq: bool,
    pub broker_name: String,
}

/// One side of a trade as billing lists it (admin spec section 3).
#[derive(Clone, Debug, PartialEq)]
pub struct BillingItem {
    pub company_name: String,
    pub first_name: String,
    pub last_name: String,
    pub user_id: UserId,
    pub broker_name: String,
    pub broker_id: CompanyId,
    pub match_request_id: MatchRequestId,
    pub order_id: OrderId,
    /// The parent order the side fills (ADR 0021).
    pub payment_order_id: ParentOrderId,
    pub match_request_created_at: DateTime<Utc>,
    pub instrument_name: String,
    pub bbg_code: Option<String>,
    pub exchange_instrument_id: Option<String>,
    pub exchange: String,
    pub exchange_iso_code: String,
    pub tick_size: Decimal,
    pub term: String,
    pub direction: Direction,
    pub quantity: i64,
    pub price: Decimal,
    /// How the side's trader split it across the firm's accounts (ADR 0045); empty when not.
    pub allocations: Vec<AllocationLine>,
    /// The broker it was given up to for clearing, if any.
    pub give_up_broker_name: Option<String>,
}
