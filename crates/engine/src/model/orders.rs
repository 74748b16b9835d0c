//! Parent and child orders and the book they make.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use upstairs_domain::order::ParentState;
use upstairs_domain::order::{Direction, OrderState};
use upstairs_domain::{AutoAccept, CompanyId, InstrumentId, OrderId, ParentOrderId, UserId};

#[derive(Clone, Debug, PartialEq)]
pub struct ParentOrder {
    pub parent_order_id: ParentOrderId,
    pub company_id: CompanyId,
    pub created_by: UserId,
    pub instrument_id: InstrumentId,
    pub direction: Direction,
    pub quantity: i64,
    pub broker_instructions: Option<String>,
    /// The minimum execution size its child orders take when they name none (an execution
    /// system's MinQty, ADR 0041).
    pub min_execution: Option<i64>,
    pub state: ParentState,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A parent order with the sums of its child orders.
#[derive(Clone, Debug, PartialEq)]
pub struct ParentOrderView {
    pub parent: ParentOrder,
    /// Quantity of child orders working, locked for a match or reserved for an RFQ.
    pub working: i64,
    pub matched: i64,
}

/// A resting order a take may reach, with its creator's auto-answer preference and what
/// the book shows of it (its row's, ADR 0056).
#[derive(Debug, Clone, PartialEq)]
pub struct FacingOrder {
    pub order: ChildOrder,
    pub auto_accept: Option<AutoAccept>,
    pub shown: i64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ChildOrder {
    pub order_id: OrderId,
    pub parent_order_id: ParentOrderId,
    pub company_id: CompanyId,
    pub created_by: UserId,
    pub instrument_id: InstrumentId,
    pub direction: Direction,
    pub state: OrderState,
    pub price: Decimal,
    pub quantity: i64,
    /// The book shows only the instrument's minimum block of it.
    pub iceberg: bool,
    /// After a partial match, whether the rest keeps working (true) or returns to the parent.
    pub residual: bool,
    /// No take fills it below this size, but for a smaller remainder filled whole
    /// (ADR 0041). Its owner's alone: no book, preview, push or answer to another firm
    /// carries it.
    pub min_execution: Option<i64>,
    pub broker_id: CompanyId,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl ChildOrder {
    /// What this order adds to its parent's (working, matched) counters, by its state.
    pub fn parent_counts(&self) -> (i64, i64) {
        (
            if self.state.is_working() { self.quantity } else { 0 },
            if self.state.is_matched() { self.quantity } else { 0 },
        )
    }

    /// Whether it rests in the anonymous book.
    pub fn rests(&self) -> bool {
        self.state == OrderState::Working
    }

    /// What it adds to its book level now: nothing unless it rests, else what the
    /// domain's display rule shows of it with the instrument's minimum block `block`
    /// (which only [`Self::shows_by_block`] orders depend on). The store keeps it on the
    /// row, and the book's levels are sums of it.
    pub fn shown(&self, block: i64) -> i64 {
        if self.rests() { upstairs_domain::order::shown_quantity(self.quantity, self.iceberg, block) } else { 0 }
    }

    /// Whether what it shows depends on the instrument's minimum block: a resting iceberg.
    pub fn shows_by_block(&self) -> bool {
        self.rests() && self.iceberg
    }
}

#[derive(Clone, Debug, Default)]
pub struct OrderFilter {
    /// Always set by the engine: a company sees only its own orders.
    pub company_id: Option<CompanyId>,
    pub instrument_id: Option<InstrumentId>,
    pub created_by: Option<UserId>,
    pub parent_order_id: Option<ParentOrderId>,
    pub states: Vec<OrderState>,
    /// The newest this many at most (lists a client asks for); `None` reads all.
    pub limit: Option<i64>,
}

/// The most orders, or parent orders, one list answers: the newest.
pub const MAX_ORDERS_LISTED: i64 = 1000;

/// Working quantity shown in the book at one price, side and company (icebergs count
/// as the minimum block).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BookRow {
    pub price: Decimal,
    pub direction: Direction,
    pub company_id: CompanyId,
    pub shown: i64,
}
