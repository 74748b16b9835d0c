//! Notifications.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use upstairs_domain::match_request::MatchRequestState;
use upstairs_domain::notification::{NotificationType, Party};
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
    pub read: bool,
    pub archived: bool,
    pub created_at: DateTime<Utc>,
    /// When its match request times out (or timed out).
    pub expired_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}
