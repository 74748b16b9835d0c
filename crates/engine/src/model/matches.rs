//! Match requests.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use upstairs_domain::match_request::MatchRequestState;
use upstairs_domain::order::Direction;
use upstairs_domain::{CompanyId, InstrumentId, MatchRequestId, OrderId, RfqId, UserId};

/// A taker's request to match one resting order (DESIGN §4). While `PENDING`, the
/// taker's child order and the locked part of the resting order are `AWAITING_MATCH`.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchRequest {
    pub match_request_id: MatchRequestId,
    pub instrument_id: InstrumentId,
    /// The taker's side.
    pub direction: Direction,
    pub price: Decimal,
    /// The price the taker asked for (a residual works on at it).
    pub take_price: Decimal,
    pub quantity: i64,
    pub requesting_order_id: OrderId,
    pub requesting_company_id: CompanyId,
    pub requesting_user_id: UserId,
    pub responding_order_id: OrderId,
    pub responding_company_id: CompanyId,
    pub responding_user_id: UserId,
    /// Whether the resting order is an iceberg.
    pub iceberg: bool,
    pub state: MatchRequestState,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The RFQ whose accepted quote made this match (ADR 0020); `None` for a take.
    pub rfq_id: Option<RfqId>,
    /// When the responder's preference answers it, and whether it accepts (their
    /// preference when it was sent); `None` when they answer by hand.
    pub auto_answer: Option<AutoAnswer>,
    /// Answered by the responder's preference, not by hand.
    pub answered_automatically: bool,
    /// When it left PENDING (accepted, rejected, withdrawn, timed out): the scorecards'
    /// response times (issue 29). None while pending, and for requests answered before
    /// it was kept.
    pub answered_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The instrument's tick size and minimum block when it was made (ADR 0051): billing
    /// and reports read these, not the instrument's settings of today.
    pub tick_size: Decimal,
    pub min_quantity: i64,
}

/// A responder's preference as it applies to one match request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutoAnswer {
    pub at: DateTime<Utc>,
    pub accept: bool,
}
