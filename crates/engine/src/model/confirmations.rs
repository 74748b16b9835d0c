//! A broker's confirmation links.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use upstairs_domain::{CompanyId, MatchRequestId, OrderId};

/// The two steps a broker confirms, each with its own link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ConfirmationStep {
    Accept,
    Fill,
}

impl ConfirmationStep {
    pub fn as_str(self) -> &'static str {
        match self {
            ConfirmationStep::Accept => "ACCEPT",
            ConfirmationStep::Fill => "FILL",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "ACCEPT" => Some(ConfirmationStep::Accept),
            "FILL" => Some(ConfirmationStep::Fill),
            _ => None,
        }
    }
}

/// One side's link for one step: stored hashed, bound to the order and the step.
#[derive(Clone, Debug, PartialEq)]
pub struct BrokerConfirmation {
    pub token_hash: String,
    pub order_id: OrderId,
    pub match_request_id: MatchRequestId,
    pub broker_id: CompanyId,
    pub step: ConfirmationStep,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// When and how the broker answered; `None` while open.
    pub answered: Option<(DateTime<Utc>, bool)>,
}
