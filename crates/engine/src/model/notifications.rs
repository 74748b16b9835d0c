//! Notifications.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use upstairs_domain::match_request::MatchRequestState;
use upstairs_domain::notification::{NotificationType, Party};
use upstairs_domain::order::Direction;
use upstairs_domain::{InstrumentId, MatchRequestId, NotificationId, OrderId, RfqId, UserId};

/// What a notification tells of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    MatchRequest(MatchRequestId),
    Rfq(RfqId),
    /// An operator's correction of a child order's limit price, from and to.
    PriceCorrection {
        order_id: OrderId,
        old_price: Decimal,
        new_price: Decimal,
    },
    /// A child order the venue did something to on its owner's behalf (cancelled it when
    /// their connection dropped).
    Order(OrderId),
}

/// A match request's terms as one of its parties sees them: their own side, the quantity
/// and the price (issue 28.10: the history says what ended).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Terms {
    pub direction: Direction,
    pub quantity: i64,
    pub price: Decimal,
}

/// What one user is told about a match request or an RFQ (spec section 3).
#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    pub notification_id: NotificationId,
    pub user_id: UserId,
    pub notification_type: NotificationType,
    /// The state of its match request when it last changed (an RFQ's, in the same
    /// names: `PENDING` while open, then `ACCEPTED`, `TIMED_OUT`, `CANCELLED` or `REJECTED`).
    pub status: MatchRequestState,
    pub instrument_id: InstrumentId,
    pub subject: Subject,
    /// The recipient's side of the match request or RFQ.
    pub role: Party,
    /// A match request's terms as the recipient sees them; none for an RFQ's or a
    /// price correction's.
    pub terms: Option<Terms>,
    pub read: bool,
    pub archived: bool,
    pub created_at: DateTime<Utc>,
    /// When its match request times out (or timed out).
    pub expired_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}
