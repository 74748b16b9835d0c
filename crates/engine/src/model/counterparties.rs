//! Counterparty filters (issue 29, ADR 0042).

use chrono::{DateTime, Utc};
use std::collections::BTreeSet;
use upstairs_domain::CompanyId;
use uuid::Uuid;

/// Whom a firm, or one of its traders, trades with: never the `blocked` firms, and only
/// counterparties whose reliability score is at least `min_reliability_score`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CounterpartyFilter {
    /// The company (the firm's own filter) or the user (a trader's own).
    pub owner_id: Uuid,
    /// The owner's company.
    pub company_id: CompanyId,
    pub min_reliability_score: Option<i64>,
    pub blocked: BTreeSet<CompanyId>,
    pub updated_at: DateTime<Utc>,
}
