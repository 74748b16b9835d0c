//! Records the engine reads and writes through the store ports: the core's vocabulary
//! (the ports name them), one file per feature.

pub use upstairs_domain::order::ParentState;

mod accounts;
mod admin;
mod audit;
mod confirmations;
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
pub use audit::*;
pub use confirmations::*;
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
