//! Requests for quote and their responses.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use upstairs_domain::order::Direction;
use upstairs_domain::rfq::{ResponseState, RfqState};
use upstairs_domain::{CompanyId, InstrumentId, MatchRequestId, OrderId, ParentOrderId, RfqId, RfqResponseId, UserId};

/// A request for quote (DESIGN §4, ADR 0020): `quantity` of the parent, reserved by
/// `order_id` while it is open, asked of the providers its responses name.
#[derive(Clone, Debug, PartialEq)]
pub struct Rfq {
    pub rfq_id: RfqId,
    pub parent_order_id: ParentOrderId,
    /// The child order reserving the quantity (`AWAITING_RFQ_ACCEPTANCE`).
    pub order_id: OrderId,
    pub instrument_id: InstrumentId,
    /// The requester's side.
    pub direction: Direction,
    pub company_id: CompanyId,
    pub user_id: UserId,
    pub quantity: i64,
    pub two_way: bool,
    /// Whether the requester's company is hidden from the providers.
    pub anonymous: bool,
    pub state: RfqState,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// One price and quantity of a quote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuoteSide {
    pub price: Decimal,
    pub quantity: i64,
}

/// One addressed provider's response to an RFQ.
#[derive(Clone, Debug, PartialEq)]
pub struct RfqResponse {
    pub rfq_response_id: RfqResponseId,
    pub rfq_id: RfqId,
    pub company_id: CompanyId,
    pub state: ResponseState,
    /// Who quoted (last), and for which of their brokers.
    pub user_id: Option<UserId>,
    pub broker_id: Option<CompanyId>,
    /// The provider buys at this (the requester sells).
    pub buy: Option<QuoteSide>,
    /// The provider sells at this (the requester buys).
    pub sell: Option<QuoteSide>,
    /// The match an accepted quote made.
    pub match_request_id: Option<MatchRequestId>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// One provider's response to one RFQ as the scorecards count it (issue 29).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuoteTimes {
    pub rfq_id: RfqId,
    pub requester: CompanyId,
    pub provider: CompanyId,
    pub state: ResponseState,
    pub asked_at: DateTime<Utc>,
    /// When it was first quoted; `None` when never (or before this was kept).
    pub quoted_at: Option<DateTime<Utc>>,
}
