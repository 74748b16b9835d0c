//! What operators see of trading (admin spec sections 2, 3 and 7): the Orders panel,
//! every child order on the venue with the admin's limit-price correction, and billing,
//! one row per matched side.

use rust_decimal::Decimal;
use serde_json::json;
use upstairs_domain::match_request::MatchRequestState;
use upstairs_domain::order::{OrderEvent, transition};
use upstairs_domain::price::on_tick;
use upstairs_domain::{OrderId, Permission};

use crate::Store;
use crate::context::{Actor, audit, checked_page, require};
use crate::core::service;
use crate::error::EngineError;
use crate::model::*;
use crate::orders::not_found_order;
use crate::ports::*;

service!(
    /// The admin's orders list, its price corrections, and billing.
    AdminOrders {}
);

impl<S: Store> AdminOrders<S> {
    /// One page of every company's child orders, newest first (the order-admin
    /// permission: venue admins and sales).
    pub async fn list(&self, actor: &Actor, mut filter: AdminOrderFilter) -> Result<Page<AdminOrder>, EngineError> {
        require(actor, Permission::OrderAdmin)?;
        filter.page = checked_page(filter.page, filter.size)?;
        if let (Some(from), Some(until)) = (filter.from, filter.until)
            && until <= from
        {
            return Err(EngineError::invalid("until", "The end must be after the start"));
        }
        let mut tx = self.store.read().await?;
        Ok(tx.admin_orders(&filter).await?)
    }

    /// Corrects the limit price of a working child order (the admin permission only):
    /// on the instrument's tick ('Invalid value'), audited, and pushed to its owner and
    /// the book like the owner's own edit.
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id, order = %id))]
    pub async fn correct_order_price(
        &self,
        actor: &Actor,
        id: OrderId,
        price: Decimal,
    ) -> Result<AdminOrder, EngineError> {
        require(actor, Permission::Admin)?;
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let seen = tx.order(id).await?.ok_or_else(not_found_order)?;
        let parent = tx.lock_parent_order(seen.parent_order_id).await?.map(|v| v.parent);
        // Read again under the parent's lock: what it is now is what the compare-and-set expects.
        let before = tx.order(id).await?.ok_or_else(not_found_order)?;
        let instrument = self.instrument_in(&mut tx, before.instrument_id).await?;
        if !on_tick(price, instrument.tick_size) {
            return Err(EngineError::invalid("limit_price", "Invalid value"));
        }
        transition(before.state, OrderEvent::Edit).map_err(|_| EngineError::Conflict {
            detail: "Only a working order's limit price can be corrected.".into(),
            errors: vec![],
        })?;
        let after = ChildOrder { price: price.normalize(), updated_at: now, ..before.clone() };
        tx.update_order(&before, &after).await?;
        // Its owner is told, with the price before and after.
        let told = crate::notifications::price_corrected(&before, &after, now);
        tx.insert_notification(&told).await?;
        audit(
            &mut tx,
            now,
            Some(actor.user.user_id),
            "order",
            Some(id.0),
            "price_correction",
            json!({"company_id": before.company_id, "before": {"price": before.price.to_string()},
                   "after": {"price": after.price.to_string()}}),
        )
        .await?;
        tx.commit().await?;
        crate::core::publish_order_told(self, &after, parent.as_ref(), told);
        let filter = AdminOrderFilter { order_id: Some(id), page: 0, size: 1, ..Default::default() };
        let page = self.store.single().await?.admin_orders(&filter).await?;
        page.items.into_iter().next().ok_or_else(not_found_order)
    }

    /// Both sides of every trade on the venue, newest first (venue admins and sales).
    pub async fn billing(&self, actor: &Actor) -> Result<Vec<BillingItem>, EngineError> {
        require(actor, Permission::BillingRead)?;
        Ok(self.store.single().await?.billing_items(&MatchRequestState::TRADES).await?)
    }
}
