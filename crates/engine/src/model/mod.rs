//! Records the engine reads and writes through the store ports: the core's vocabulary
//! (the ports name them), one file per feature.

pub use upstairs_domain::order::ParentState;

mod accounts;
mod admin;
mod allocations;
mod audit;
mod confirmations;
mod counterparties;
mod fix;
mod mail;
mod matches;
mod newsletters;
mod notifications;
mod orders;
mod reference;
mod rfqs;
mod timers;

pub use accounts::*;
pub use admin::*;
pub use allocations::*;
pub use audit::*;
pub use confirmations::*;
pub use counterparties::*;
pub use fix::*;
pub use mail::*;
pub use matches::*;
pub use newsletters::*;
pub use notifications::*;
pub use orders::*;
pub use reference::*;
pub use rfqs::*;
pub use timers::*;

/// One page of a list and the total number of matching items.
#[derive(Clone, Debug, PartialEq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total_items: i64,
}

/// New rows of several tables that a use case writes together after its reads (timers,
/// notifications, broker links, e-mails, audit rows, match requests): one statement where
/// the backend can write several tables in one (`RowsRepo::insert_rows`). A row here is
/// written only when the use case hands the batch to its transaction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NewRows {
    pub match_requests: Vec<MatchRequest>,
    pub notifications: Vec<Notification>,
    pub broker_confirmations: Vec<BrokerConfirmation>,
    pub outbox: Vec<OutboxMessage>,
    pub timers: Vec<Timer>,
    pub action_logs: Vec<ActionLog>,
}

impl NewRows {
    pub fn is_empty(&self) -> bool {
        self.match_requests.is_empty()
            && self.notifications.is_empty()
            && self.broker_confirmations.is_empty()
            && self.outbox.is_empty()
            && self.timers.is_empty()
            && self.action_logs.is_empty()
    }
}
