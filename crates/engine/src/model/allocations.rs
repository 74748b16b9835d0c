//! Allocations and give-ups (issue 29, ADR 0045).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use upstairs_domain::{CompanyId, OrderId, UserId};
use uuid::Uuid;

/// One of a company's accounts, which its traders allocate their trades to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompanyAccount {
    pub account_id: Uuid,
    pub company_id: CompanyId,
    /// The code the brokers know the account by (FIX AllocAccount).
    pub code: String,
    pub name: String,
    pub active: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl CompanyAccount {
    /// A new open account under a new id.
    pub fn open(company_id: CompanyId, code: &str, name: &str, now: DateTime<Utc>) -> Self {
        Self {
            account_id: Uuid::now_v7(),
            company_id,
            code: code.to_owned(),
            name: name.to_owned(),
            active: true,
            created_at: now,
            updated_at: now,
        }
    }
}

/// One account's part of a trade, with the account as it was named when allocated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocationLine {
    pub account_id: Uuid,
    pub code: String,
    pub name: String,
    pub quantity: i64,
}

/// The executing broker's answer to an allocation's current version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AllocationAck {
    /// Not answered (yet, or the broker takes no FIX).
    Pending,
    Accepted,
    Rejected,
}

impl AllocationAck {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Accepted => "ACCEPTED",
            Self::Rejected => "REJECTED",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Pending, Self::Accepted, Self::Rejected].into_iter().find(|a| a.as_str() == s)
    }
}

/// How one side of a trade (a matched child order) is split across its firm's accounts,
/// and the broker it is given up to for clearing, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    pub order_id: OrderId,
    /// 1 for the first allocation, one more for each change.
    pub version: i64,
    pub give_up_broker_id: Option<CompanyId>,
    pub lines: Vec<AllocationLine>,
    pub ack: AllocationAck,
    pub ack_text: Option<String>,
    pub updated_by: UserId,
    pub updated_at: DateTime<Utc>,
}
