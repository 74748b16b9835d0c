//! The action log as venue admins read it (admin spec sections 2, 3 and 7): every audit
//! row the use cases write, paged, filtered by the acting user's e-mail and sorted.

use upstairs_domain::Permission;

use crate::Store;
use crate::context::{Actor, blank_to_none, checked_page, require};
use crate::core::service;
use crate::error::EngineError;
use crate::model::*;
use crate::ports::*;

service!(
    /// The audit trail as the admin area reads it.
    ActionLogs {}
);

impl<S: Store> ActionLogs<S> {
    /// One page of the action log (the admin permission only).
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id))]
    pub async fn list(&self, actor: &Actor, mut filter: ActionLogFilter) -> Result<Page<ActionLogEntry>, EngineError> {
        require(actor, Permission::Admin)?;
        filter.page = checked_page(filter.page, filter.size)?;
        filter.email = blank_to_none(filter.email).map(|e| e.to_lowercase());
        filter.entity = blank_to_none(filter.entity).map(|e| e.to_lowercase());
        filter.operation = blank_to_none(filter.operation).map(|e| e.to_lowercase());
        if let (Some(from), Some(until)) = (filter.from, filter.until)
            && from >= until
        {
            return Err(EngineError::invalid("until", "Must be after the start of the range"));
        }
        let mut tx = self.store.read().await?;
        Ok(tx.action_log_page(&filter).await?)
    }
}
