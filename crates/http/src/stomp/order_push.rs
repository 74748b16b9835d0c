//! Order pushes (ADR 0029): a change of one of a user's child or parent orders reaches
//! their `/user/topic/orders` as the row their lists show. A child order comes with the
//! event, and its band state from the cached instrument (no read); a parent's quantities
//! are kept by the database, so its row is read back, in one statement for all of one
//! user's changed parents gathered by the [`UserPusher`](super::user_push::UserPusher).

use std::collections::BTreeSet;
use upstairs_domain::{OrderId, ParentOrderId, UserId};
use upstairs_engine::model::ChildOrder;
use upstairs_engine::{Engine, Store};

use super::messages::{AllocationUpdated, ORDERS, OrderMessage, OrderUpdated, ParentOrderUpdated};
use super::user_push::UserFeed;
use crate::routes::allocations::AllocationDto;
use crate::routes::orders::{OrderDto, ParentOrderDto};

/// What changed of a user's orders.
pub enum OrderChange {
    /// A child order, as it is now.
    Order(ChildOrder),
    /// A parent order: its row is read back.
    Parent(ParentOrderId),
    /// The allocation of a trade: read back.
    Allocation(OrderId),
}

/// One user's order changes not pushed yet: the latest row of each child order, in the
/// order they first changed, and the parents that changed.
#[derive(Default)]
pub struct OrderQueue {
    orders: Vec<ChildOrder>,
    parents: BTreeSet<ParentOrderId>,
    allocations: BTreeSet<OrderId>,
}

impl OrderQueue {
    fn add(&mut self, change: OrderChange) {
        match change {
            OrderChange::Order(o) => match self.orders.iter_mut().find(|q| q.order_id == o.order_id) {
                // The later of two rows of one order (two writers may publish out of order).
                Some(q) if q.updated_at <= o.updated_at => *q = o,
                Some(_) => {}
                None => self.orders.push(o),
            },
            OrderChange::Parent(id) => {
                self.parents.insert(id);
            }
            OrderChange::Allocation(id) => {
                self.allocations.insert(id);
            }
        }
    }
}

/// The feed of `/user/topic/orders`.
pub struct OrderFeed<S: Store>(pub Engine<S>);

impl<S: Store> UserFeed for OrderFeed<S> {
    type Change = OrderChange;
    type Queue = OrderQueue;
    type Message = OrderMessage;
    const DESTINATION: &'static str = ORDERS;

    fn add(queue: &mut OrderQueue, change: OrderChange) {
        queue.add(change);
    }

    fn is_empty(queue: &OrderQueue) -> bool {
        queue.orders.is_empty() && queue.parents.is_empty() && queue.allocations.is_empty()
    }

    /// Child orders first, then their parents, then allocations.
    async fn read(&self, user: UserId, queue: OrderQueue) -> Result<Vec<OrderMessage>, String> {
        let (orders, parents) = self.0.orders.pushed(queue.orders, &queue.parents).await.map_err(|e| e.to_string())?;
        let orders =
            orders.into_iter().map(|o| OrderMessage::OrderUpdated(OrderUpdated { seq: 0, order: OrderDto::from(o) }));
        let parents = parents
            .into_iter()
            .map(|p| OrderMessage::ParentOrderUpdated(ParentOrderUpdated { seq: 0, parent: ParentOrderDto::from(p) }));
        let allocations = match queue.allocations.is_empty() {
            true => Vec::new(),
            false => self.0.allocations.pushed(user, &queue.allocations).await.map_err(|e| e.to_string())?,
        };
        let allocations = allocations
            .into_iter()
            .map(|a| OrderMessage::AllocationUpdated(AllocationUpdated { seq: 0, allocation: AllocationDto::from(a) }));
        Ok(orders.chain(parents).chain(allocations).collect())
    }

    fn number(message: &mut OrderMessage, seq: u64) {
        match message {
            OrderMessage::OrderUpdated(m) => m.seq = seq,
            OrderMessage::ParentOrderUpdated(m) => m.seq = seq,
            OrderMessage::AllocationUpdated(m) => m.seq = seq,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use rust_decimal::Decimal;
    use upstairs_domain::order::{Direction, OrderState};
    use upstairs_domain::{CompanyId, InstrumentId, OrderId};

    fn order(state: OrderState, at: chrono::DateTime<Utc>) -> ChildOrder {
        ChildOrder {
            order_id: OrderId::new(),
            parent_order_id: ParentOrderId::new(),
            company_id: CompanyId::new(),
            created_by: UserId::new(),
            instrument_id: InstrumentId::new(),
            direction: Direction::Buy,
            state,
            price: Decimal::new(9470, 2),
            quantity: 1000,
            iceberg: false,
            residual: true,
            min_execution: None,
            broker_id: CompanyId::new(),
            created_at: at,
            updated_at: at,
        }
    }

    #[test]
    fn a_queue_keeps_each_orders_latest_row_and_each_parent_once() {
        let now = Utc::now();
        let first = order(OrderState::Working, now);
        let later = ChildOrder {
            state: OrderState::Cancelled,
            updated_at: now + chrono::Duration::seconds(2),
            ..first.clone()
        };
        let stale =
            ChildOrder { state: OrderState::Matched, updated_at: now + chrono::Duration::seconds(1), ..first.clone() };
        let other = order(OrderState::Working, now);
        let mut q = OrderQueue::default();
        for o in [first.clone(), other.clone(), later, stale] {
            q.add(OrderChange::Order(o));
        }
        q.add(OrderChange::Parent(first.parent_order_id));
        q.add(OrderChange::Parent(first.parent_order_id));
        // An older row published late is not pushed over a newer one; first seen first.
        let rows: Vec<_> = q.orders.iter().map(|o| (o.order_id, o.state)).collect();
        assert_eq!(rows, vec![(first.order_id, OrderState::Cancelled), (other.order_id, OrderState::Working)]);
        assert_eq!(q.parents, BTreeSet::from([first.parent_order_id]));
    }
}
